package importers

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

// fuzzReader feeds a reader arbitrary bytes: it must not panic, and what it
// makes must load in arbor without damage, keep every tool result after its
// call, and come out the same twice.
func fuzzReader(f *testing.F, format Format, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join("testdata", dir, "*", "*", "*", "*", "*.jsonl"))
	for _, p := range append(files, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("{}\n[]\nnull\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := Input{Path: filepath.Join(t.TempDir(), "fuzz.jsonl"), Data: data}
		s, err := Read(format, in)
		if err != nil {
			t.Fatal(err)
		}
		out := s.Bytes()
		l := session.Load(out)
		if r := l.Report(); !r.Clean() {
			t.Fatalf("the import does not load cleanly: %+v\n%s", r, out)
		}
		if l.Len() != len(s.Lines) {
			t.Fatalf("arbor indexed %d of %d entries", l.Len(), len(s.Lines))
		}
		checkToolResults(t, "fuzz", l)
		again, _ := Read(format, in)
		if !bytes.Equal(out, again.Bytes()) {
			t.Fatal("two reads differ")
		}
		for _, d := range s.Damage {
			if d.Line < 1 || strings.ContainsAny(d.Err, "\n") {
				t.Fatalf("damage %+v", d)
			}
		}
	})
}

func FuzzClaude(f *testing.F) { fuzzReader(f, Claude, "claude") }
func FuzzCodex(f *testing.F)  { fuzzReader(f, Codex, "codex") }
func FuzzRho(f *testing.F)    { fuzzReader(f, Rho, "rho") }
