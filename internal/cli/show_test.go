package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/termtext"
)

// show prints an entry exactly as json.Indent and termtext.Block would, while
// writing it a piece at a time.
func FuzzShowIndent(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/pi/sessions/*.jsonl")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(` {"a" : [ ] , "b":{},"c":[1,{"d":"\"\\\u001b[2J"}]}  ` + "\t\n"))
	f.Add([]byte(`"` + strings.Repeat("é\u202e\x01", 40000) + `"`))
	f.Add([]byte(`[` + strings.Repeat(`"x\n",`, 30000) + `0]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want bytes.Buffer
		if json.Indent(&want, raw, "", "  ") != nil {
			want.Reset()
			want.Write(raw)
		}
		var got bytes.Buffer
		b := &blockWriter{w: &got}
		if json.Valid(raw) {
			indent(b, raw)
		} else {
			b.Write(raw)
		}
		b.Flush()
		if w := termtext.Block(want.String()); got.String() != w {
			t.Errorf("show printed %q, want %q", got.String(), w)
		}
	})
}
