package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
)

// TestImport: 'arbor import' on a folder of foreign sessions writes pi
// sessions arbor reads (a subagent pointing at its parent's import), says what
// it did, and a second run changes nothing.
func TestImport(t *testing.T) {
	out := t.TempDir()
	src := filepath.Join("..", "..", "importers", "testdata", "claude", "showcase")
	r := runArbor(t, "", "import", src, "--session-dir", out)
	if r.code != 0 || !strings.Contains(r.out, "imported ") || !strings.Contains(r.out, "11 entries new") {
		t.Fatalf("first import: code %d\n%s%s", r.code, r.out, r.err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("wrote %v", files)
	}
	var parent, agent string
	for _, f := range files {
		l, err := jsonl.Read(f)
		if err != nil || !l.Report().Clean() {
			t.Fatalf("%s: %v %+v", f, err, l.Report())
		}
		if p := l.Header().ParentSession; p != "" {
			agent, parent = f, p
		}
	}
	if agent == "" || !strings.HasPrefix(parent, out) {
		t.Errorf("the subagent's parentSession is %q, not the parent's import", parent)
	}
	data, _ := os.ReadFile(agent)
	if !strings.Contains(string(data), `"toolCall":"toolu_sc_showcol1"`) {
		t.Errorf("the subagent's header does not name the tool call that started it:\n%.400s", data)
	}

	r = runArbor(t, "", "import", src, "--session-dir", out, "--json")
	var ws []struct {
		Created  bool
		Added    int
		Existing int
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &ws) != nil || len(ws) != 2 {
		t.Fatalf("second import: code %d\n%s%s", r.code, r.out, r.err)
	}
	for _, w := range ws {
		if w.Created || w.Added != 0 || w.Existing == 0 {
			t.Errorf("second import wrote something: %+v", w)
		}
	}

	if r := runArbor(t, "", "import", filepath.Join(out, "nothing-here")); r.code != 1 || !strings.Contains(r.err, "no such file or folder") {
		t.Errorf("missing source: code %d, %q", r.code, r.err)
	}
	if r := runArbor(t, "", "import"); r.code != 2 {
		t.Errorf("no argument: code %d", r.code)
	}
}
