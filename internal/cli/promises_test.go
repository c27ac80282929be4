package cli

import (
	"encoding/json"
	"os"
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

func TestShortIDs(t *testing.T) {
	ids := []string{
		"019a7c2e-1111-7000-8000-000000000001", // same minute as the next: 8 characters are not enough
		"019a7c2e-1122-7000-8000-000000000002",
		"019b0000-0000-7000-8000-000000000003",
		"019a7c2e-1111-7000-8000-000000000001", // listed twice (search hits): still its own prefix
		"short",
	}
	got := shortIDs(ids)
	want := []string{"019a7c2e-111", "019a7c2e-112", "019b0000", "019a7c2e-111", "short"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("shortIDs = %q, want %q", got, want)
		}
	}
	// Each shown prefix names one session among those listed.
	for i, p := range got {
		for j, id := range ids {
			if ids[i] != id && strings.HasPrefix(id, p) {
				t.Errorf("%q (for %s) is also a prefix of %s (%d)", p, ids[i], id, j)
			}
		}
	}
}

func TestEntryIDPrefix(t *testing.T) {
	s := copyFile(t, "../../examples/refactor.jsonl", t.TempDir())
	r := runArbor(t, "", "show", s, "e1b8", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"id":"e1b8045d"`) {
		t.Errorf("show by a unique prefix: exit %d %q %q", r.code, r.out, r.err)
	}
	r = runArbor(t, "", "show", s, "e1b")
	if r.code != 1 || !strings.Contains(r.err, `no entry "e1b"`) {
		t.Errorf("a prefix under 4 characters: exit %d %q", r.code, r.err)
	}
}

// TestInfoHeaderlessStable: a file without a header shows the same id (and
// creation time) on every run.
func TestInfoHeaderlessStable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nohdr.jsonl")
	data := `{"type":"message","id":"aaaaaaa1","parentId":null,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}` + "\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := runArbor(t, "", "info", p, "--json"), runArbor(t, "", "info", p, "--json")
	if a.code != 0 || a.out != b.out || !strings.Contains(a.out, `"id":"`) {
		t.Errorf("two runs of info differ or fail:\n%s\n%s", a.out, b.out)
	}
}

func TestStatsWindowAlone(t *testing.T) {
	r := runArbor(t, "", "stats", "../../examples/refactor.jsonl", "--window", "5000", "--json")
	var st struct {
		PromptBudget int `json:"promptBudget"`
	}
	if err := json.Unmarshal([]byte(r.out), &st); r.code != 0 || err != nil || st.PromptBudget != 5000-1250 {
		t.Errorf("stats --window 5000: exit %d, %v, budget %d; stderr %q", r.code, err, st.PromptBudget, r.err)
	}
}

// TestCompactDryRunAgrees: on every shipped session and at several
// --keep-recent-tokens, compact --dry-run finds something to do exactly when
// compact does it.
func TestCompactDryRunAgrees(t *testing.T) {
	catalogHome(t)
	files, _ := filepath.Glob("../../testdata/pi/sessions/*.jsonl")
	files = append(files, "../../examples/refactor.jsonl")
	checked := 0
	for _, src := range files {
		if strings.Contains(src, "big-1mb") {
			continue // slow, and shaped as gen-* are
		}
		for _, keep := range []string{"1", "500", "4000", "20000"} {
			f := copyFile(t, src, t.TempDir())
			dry := runArbor(t, "", "compact", f, "--dry-run", "--keep-recent-tokens", keep)
			real := runArbor(t, "", "compact", f, "--keep-recent-tokens", keep, "--summarizer", "mechanical")
			if strings.Contains(real.err, "read-only") { // a newer format: planned, but not written
				if strings.Count(real.err, f) != 1 {
					t.Errorf("compact of a read-only file names it more than once: %q", real.err)
				}
				continue
			}
			if dry.code != real.code {
				t.Errorf("%s --keep-recent-tokens %s: --dry-run exit %d (%q), compact exit %d (%q)", filepath.Base(src), keep, dry.code, dry.out+dry.err, real.code, real.err)
			}
			checked++
		}
	}
	t.Logf("%d plans compared", checked)
}

// TestCountGrammar: counts are "1 line", "2 lines", "0 lines" wherever arbor
// prints them.
func TestCountGrammar(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 lines"}, {1, "1 line"}, {2, "2 lines"}, {1000, "1,000 lines"}} {
		if got := count(tc.n, "line"); got != tc.want {
			t.Errorf("count(%d, line) = %q, want %q", tc.n, got, tc.want)
		}
	}
	dir := t.TempDir()
	one := filepath.Join(dir, "one.jsonl")
	if err := os.WriteFile(one, []byte(`{"type":"session","version":3,"id":"0195f1c2-aaaa-7aaa-8aaa-aaaaaaaaaaaa","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runArbor(t, "", "fsck", one); !strings.Contains(r.out, "1 line, 0 entries") {
		t.Errorf("fsck of a header alone: %q", r.out)
	}
}

// TestNumberRefusals: an error that refuses a number names the flag, the
// number it was compared with and the number given.
func TestNumberRefusals(t *testing.T) {
	s := "../../examples/refactor.jsonl"
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"compact", s, "--dry-run", "--keep-recent-tokens", "-5"}, "--keep-recent-tokens must be a number of tokens of at least 0, not -5"},
		{[]string{"compact", s, "--dry-run", "--window", "-1"}, "--window must be a number of tokens of at least 0, not -1"},
		{[]string{"context", s, "--budget", "0"}, "--budget must be a number of tokens above 0, not 0"},
		{[]string{"context", s, "--budget", "-3"}, "--budget must be a number of tokens above 0, not -3"},
		{[]string{"context", s, "--result-share", "1.5", "--budget", "100"}, "--result-share must be above 0 and at most 1, not 1.5"},
		{[]string{"stats", s, "--window", "-2"}, "--window must be a number of tokens above 0, not -2"},
		{[]string{"stats", s, "--window", "1000", "--reserve", "1000"}, "--reserve must be at least 0 and below --window (1000), not 1000"},
		{[]string{"-p", "hi", "--context-window", "0"}, "--context-window must be a number of tokens above 0, not 0"},
		{[]string{"-p", "hi", "--reserve", "-1"}, "--reserve must be a number of tokens above 0, not -1"},
	} {
		r := runArbor(t, "", tc.args...)
		if r.code != 2 || !strings.Contains(r.err, tc.says) {
			t.Errorf("arbor %s: exit %d, %q; want exit 2 saying %q", strings.Join(tc.args, " "), r.code, r.err, tc.says)
		}
	}
}
