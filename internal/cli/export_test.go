package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

const exportFixture = "../../examples/refactor.jsonl"

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// arbor export writes the page in the current folder under the session's
// name, never overwrites without --force, and never touches the session.
func TestExportHTMLDefaultName(t *testing.T) {
	src := copyFile(t, exportFixture, t.TempDir())
	before := readFile(t, src)
	work := t.TempDir()
	t.Chdir(work)

	r := runArbor(t, "", "export", src)
	if r.code != 0 || r.out != "refactor.html\n" {
		t.Fatalf("export: code %d, out %q, err %q", r.code, r.out, r.err)
	}
	page := readFile(t, filepath.Join(work, "refactor.html"))
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `http-equiv="Content-Security-Policy"`) {
		t.Errorf("not an arbor page: %.200s", page)
	}

	r = runArbor(t, "", "export", src)
	if r.code != 1 || !strings.Contains(r.err, "refactor.html already exists: choose another name, or overwrite it with 'arbor export --force'") {
		t.Errorf("second export: code %d, err %q", r.code, r.err)
	}
	if err := os.WriteFile("refactor.html", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r = runArbor(t, "", "export", src); r.code != 1 || readFile(t, "refactor.html") != "mine" {
		t.Errorf("export without --force changed an existing file (code %d)", r.code)
	}
	if r = runArbor(t, "", "export", src, "--force", "--json"); r.code != 0 {
		t.Fatalf("--force: code %d, err %q", r.code, r.err)
	}
	var res exportResult
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Path != "refactor.html" || res.Format != "html" || res.Bytes != len(readFile(t, "refactor.html")) {
		t.Errorf("--json printed %q (%v)", r.out, err)
	}
	if readFile(t, src) != before {
		t.Error("export changed the session file")
	}
	if ents, _ := os.ReadDir(work); len(ents) != 1 {
		t.Errorf("export left %d files in the folder, want 1", len(ents))
	}
}

func TestExportFormats(t *testing.T) {
	src := copyFile(t, exportFixture, t.TempDir())
	t.Chdir(t.TempDir())

	r := runArbor(t, "", "export", src, "--format", "md", "-")
	if r.code != 0 || !strings.HasPrefix(r.out, "# Fix day units in timeparse\n") || !strings.Contains(r.out, "## Assistant") {
		t.Errorf("md to stdout: code %d, err %q, out %.200q", r.code, r.err, r.out)
	}
	r = runArbor(t, "", "export", src, "--format", "jsonl")
	if r.code != 0 || r.out != "refactor.export.jsonl\n" {
		t.Fatalf("jsonl: code %d, out %q, err %q", r.code, r.out, r.err)
	}
	l := session.Load([]byte(readFile(t, "refactor.export.jsonl")))
	orig := session.Load([]byte(readFile(t, src)))
	if l.Header().ID == orig.Header().ID || l.Header().ParentSession != src {
		t.Errorf("jsonl header %+v: want a new id and parentSession %s", l.Header(), src)
	}
	if got, want := len(l.PathTo(l.Leaf().ID)), len(l.Entries()); got != want {
		t.Errorf("jsonl export is not linear: %d entries on the leaf's path of %d", got, want)
	}
	leaf := "72a0b8e4"
	r = runArbor(t, "", "export", src, "--format", "md", "--leaf", leaf, "--no-tools", "-")
	if r.code != 0 || strings.Contains(r.out, "**Result**") || strings.Contains(r.out, "Add d as a unit") {
		t.Errorf("md --leaf %s --no-tools: code %d, err %q, out %q", leaf, r.code, r.err, r.out)
	}
}

func TestExportRefuses(t *testing.T) {
	dir := t.TempDir()
	src := copyFile(t, exportFixture, dir)
	before := readFile(t, src)
	notSession := filepath.Join(dir, "notes.jsonl")
	if err := os.WriteFile(notSession, []byte("{\"a\":1}\n{\"b\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cases := []struct {
		args   []string
		code   int
		errHas string
	}{
		{[]string{"export", src, src, "--force"}, 1, "is the session file itself"},
		{[]string{"export", src}, 1, "the current folder holds"},
		{[]string{"export", src, "--format", "pdf"}, 2, `unknown format "pdf"`},
		{[]string{"export", src, "--format", "jsonl", "--no-tools", "-"}, 2, "--no-tools cannot be used with --format jsonl"},
		{[]string{"export", src, "--leaf", "nope", "-"}, 1, `no entry "nope"`},
		{[]string{"export", src, dir, "--force"}, 1, "is a folder"},
		{[]string{"export", notSession, "x.html"}, 1, "is not a session file"},
	}
	for _, c := range cases {
		r := runArbor(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.err, c.errHas) || strings.Count(strings.TrimSpace(r.err), "\n") > 1 {
			t.Errorf("%v: code %d, err %q; want code %d and %q", c.args, r.code, r.err, c.code, c.errHas)
		}
	}
	if readFile(t, src) != before || readFile(t, notSession) != "{\"a\":1}\n{\"b\":2}\n" {
		t.Error("a refused export changed its input")
	}
	if _, err := os.Stat("x.html"); err == nil {
		t.Error("an export of a file that is not a session wrote a page")
	}
}

func TestExportRedact(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "s.jsonl")
	secret := "sk-ant-api03-Zq8vN2mXw4Lp9Rt6Ys1Kd3Jf5Hg7Bc0A"
	data := `{"type":"session","version":3,"id":"s1","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"user","content":"use ANTHROPIC_API_KEY=` + secret + `","timestamp":1}}
`
	if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"html", "md", "jsonl"} {
		r := runArbor(t, "", "export", src, "--format", f, "--redact", "-")
		if r.code != 0 || strings.Contains(r.out, secret) || !strings.Contains(r.out, "[REDACTED:") {
			t.Errorf("--format %s --redact: code %d, err %q, secret kept or no mask", f, r.code, r.err)
		}
		if r := runArbor(t, "", "export", src, "--format", f, "-"); !strings.Contains(r.out, secret) {
			t.Errorf("--format %s without --redact lost the text", f)
		}
	}
}

// TestRootExportFlag: pi's `--export <session> [out]` works on arbor too.
func TestRootExportFlag(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "page.html")
	r := runArbor(t, "", "--export", "../../examples/refactor.jsonl", out)
	b, err := os.ReadFile(out)
	if r.code != 0 || err != nil || !strings.Contains(string(b), "<!DOCTYPE html>") {
		t.Fatalf("arbor --export: exit %d %q, %v", r.code, r.err, err)
	}
	if r := runArbor(t, "", "--export", "../../examples/refactor.jsonl", out); r.code != 1 || !strings.Contains(r.err, "already exists") {
		t.Errorf("a second --export over the same file: exit %d %q", r.code, r.err)
	}
	if r := runArbor(t, "", "--export", "../../examples/refactor.jsonl", out, "extra"); r.code != 2 {
		t.Errorf("--export with two outputs: exit %d", r.code)
	}
}
