package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

func TestFork(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		leaf    string // the entry whose context the fork must have
		entries int    // entries in the new file
	}{
		// The active path holds 18 entries; its last, a label entry, is dropped
		// and the labels of 72a0b8e4 and 90cd346a are re-emitted after it.
		{"active leaf", nil, "c3f0679d", 19},
		{"a leaf", []string{"--leaf", "e1b8045d"}, "e1b8045d", 14},
		// No assistant message on the path: pi would defer the file; arbor writes it.
		{"before any assistant", []string{"--leaf", "c07e5a13"}, "c07e5a13", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := copyFile(t, example, dir)
			before, _ := os.ReadFile(f)
			r := runArbor(t, "", append([]string{"fork", f, "--json"}, tc.flags...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.err)
			}
			var res forkResult
			if err := json.Unmarshal([]byte(r.out), &res); err != nil {
				t.Fatalf("fork --json printed %q: %v", r.out, err)
			}
			if filepath.Dir(res.Path) != dir || !strings.HasSuffix(res.Path, "_"+res.ID+".jsonl") {
				t.Errorf("new file %s: want <ts>_%s.jsonl in %s", res.Path, res.ID, dir)
			}
			if res.ParentSession != f {
				t.Errorf("parentSession %q, want %q", res.ParentSession, f)
			}
			if after, _ := os.ReadFile(f); string(after) != string(before) {
				t.Error("fork changed the original session")
			}
			l, err := jsonl.Read(res.Path)
			if err != nil {
				t.Fatal(err)
			}
			if h := l.Header(); h.ID != res.ID || h.ParentSession != f || h.Version != 3 {
				t.Errorf("header %+v", h)
			}
			if l.Len() != tc.entries {
				t.Errorf("%d entries, want %d", l.Len(), tc.entries)
			}
			if diff := cmp.Diff(contextJSON(t, f, "--leaf", tc.leaf), contextJSON(t, res.Path)); diff != "" {
				t.Errorf("the fork's context differs from the original's at %s:\n%s", tc.leaf, diff)
			}
		})
	}
}

func TestForkPlain(t *testing.T) {
	f := copyFile(t, example, t.TempDir())
	r := runArbor(t, "", "fork", f)
	if r.code != 0 || r.err != "" {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	path := strings.TrimSuffix(r.out, "\n")
	if strings.Contains(path, "\n") {
		t.Fatalf("stdout %q: want one path", r.out)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("printed path: %v", err)
	}
}

func TestForkErrors(t *testing.T) {
	cases := []editCase{
		{name: "unknown leaf", args: func(f string) []string { return []string{"fork", f, "--leaf", "0badbeef"} }, code: 1, errHas: `no entry "0badbeef" in `},
		{name: "leaf and cursor", args: func(f string) []string { return []string{"fork", f, "--leaf", "72a0b8e4", "--cursor", "main"} }, code: 2, errHas: "cannot be used together"},
		{name: "unknown cursor", args: func(f string) []string { return []string{"fork", f, "--cursor", "nope"} }, code: 1, errHas: `no cursor "nope"`},
	}
	runEditCases(t, cases)
}
