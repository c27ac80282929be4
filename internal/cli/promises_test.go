package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/window/blob"
)

// TestCommandPromises: exit statuses and --json where the README promises them.
func TestCommandPromises(t *testing.T) {
	catalogHome(t)
	s := copyFile(t, "../../examples/refactor.jsonl", t.TempDir())

	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"cursor", "bogus", s}, 2, `unknown command "bogus"`},
		{[]string{"ls", "--session-dir", "/nonexistent/folder"}, 1, "/nonexistent/folder is not a folder"},
		{[]string{"search", "x", "--session-dir", "/nonexistent/folder"}, 1, "/nonexistent/folder is not a folder"},
		{[]string{"label", s, "e1b8045d", "  \t "}, 2, "only white space"},
	} {
		r := runArbor(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.err, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", tc.args, r.code, r.err, tc.code, tc.says)
		}
	}

	// append --json: one object a line.
	r := runArbor(t, `{"role":"user","content":"a"}`+"\n\n"+`{"role":"user","content":"b"}`+"\n", "append", s, "--json")
	if r.code != 0 {
		t.Fatalf("append --json: %d %s", r.code, r.err)
	}
	var lines []appendResult
	for ln := range strings.Lines(r.out) {
		var a appendResult
		if err := json.Unmarshal([]byte(ln), &a); err != nil {
			t.Fatalf("append --json line %q: %v", ln, err)
		}
		lines = append(lines, a)
	}
	if len(lines) != 2 || lines[0].Line != 1 || lines[1].Line != 3 || lines[1].ParentID != lines[0].ID {
		t.Errorf("append --json printed %+v", lines)
	}

	// archive and unarchive --json.
	for _, cmd := range []string{"archive", "unarchive"} {
		r := runArbor(t, "", cmd, s, "--json")
		var res []archiveResult
		if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || len(res) != 1 || res[0].Path != s || res[0].Archived != (cmd == "archive") {
			t.Errorf("%s --json: exit %d, %q (%v)", cmd, r.code, r.out, err)
		}
	}

	// blob --json: text when UTF-8, base64 when not.
	st := blob.Store{Dir: filepath.Join(catalog.Home(), "blobs")}
	for _, data := range []string{"line one\nline two\n", "\xff\xfe binary"} {
		ref, err := st.Put([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		r := runArbor(t, "", "blob", ref, "--json")
		var res blobResult
		if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Ref != ref || res.Bytes != len(data) {
			t.Fatalf("blob --json: exit %d, %q (%v)", r.code, r.out, err)
		}
		if res.UTF8 && res.Text != data || !res.UTF8 && res.Base64 == "" {
			t.Errorf("blob --json of %q: %+v", data, res)
		}
	}
}
