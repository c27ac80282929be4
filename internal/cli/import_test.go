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

// TestReadInPlace: tree, context and info read other agents' files where they
// are; commands that write refuse them and leave them as they were.
func TestReadInPlace(t *testing.T) {
	dir := t.TempDir()
	cc := copyFile(t, filepath.Join("..", "..", "importers", "testdata", "claude", "synthetic", "synth-0001.jsonl"), dir)
	cx := copyFile(t, filepath.Join("..", "..", "importers", "testdata", "codex", "synthetic", "2026", "03", "01", "rollout-2026-03-01T10-00-00-aaaaaaaa-0000-4000-8000-000000000001.jsonl"), dir)
	before, _ := os.ReadFile(cc)

	r := runArbor(t, "", "context", cc, "--json")
	var ctx struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &ctx) != nil {
		t.Fatalf("context: code %d %s%s", r.code, r.out, r.err)
	}
	var roles []string
	for _, m := range ctx.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "compactionSummary user assistant toolResult" {
		t.Errorf("context roles %q", got)
	}
	if r := runArbor(t, "", "tree", cc); r.code != 0 || !strings.Contains(r.out, "Actually, rename the build target") || !strings.Contains(r.out, "Add an all target") {
		t.Errorf("tree: code %d\n%s%s", r.code, r.out, r.err)
	}
	if r := runArbor(t, "", "info", cx); r.code != 0 || !strings.Contains(r.out, "/work/proj") {
		t.Errorf("info: code %d\n%s%s", r.code, r.out, r.err)
	}
	for _, args := range [][]string{{"rename", cc, "x"}, {"append", cc}, {"fsck", "--repair", cc}, {"label", cc, "3d3adf8e", "x"}} {
		if r := runArbor(t, `{"role":"user","content":"x"}`+"\n", args...); r.code != 1 || !strings.Contains(r.err, "arbor import") {
			t.Errorf("%v: code %d, %q", args, r.code, r.err)
		}
	}
	if r := runArbor(t, "", "fsck", cc); r.code != 1 || !strings.Contains(r.out, "line 19:") || !strings.Contains(r.out, "claude-code session") {
		t.Errorf("fsck: code %d\n%s%s", r.code, r.out, r.err)
	}
	if r := runArbor(t, "", "fsck", cx); r.code != 0 {
		t.Errorf("fsck of a sound rollout: code %d\n%s%s", r.code, r.out, r.err)
	}
	after, _ := os.ReadFile(cc)
	if string(before) != string(after) {
		t.Error("a command changed the Claude Code file")
	}
	if ls, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(ls) > 0 {
		t.Errorf("left %v", ls)
	}
}

// TestListInPlace: sessions in the configured sources ($ARBOR_SOURCES) are
// listed with everyone else's, through the index, and resolve by id.
func TestListInPlace(t *testing.T) {
	src := t.TempDir()
	t.Setenv("ARBOR_SOURCES", src)
	t.Setenv("ARBOR_DIR", t.TempDir())
	t.Setenv("PI_CODING_AGENT_DIR", t.TempDir())
	deep := filepath.Join(src, "2026", "03", "01")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join("..", "..", "importers", "testdata", "codex", "synthetic", "2026", "03", "01", "rollout-2026-03-01T10-00-00-aaaaaaaa-0000-4000-8000-000000000001.jsonl"), deep)
	cc := copyFile(t, filepath.Join("..", "..", "importers", "testdata", "claude", "synthetic", "synth-0001.jsonl"), src)
	for range 2 { // cold, then from the index
		r := runArbor(t, "", "ls", "--all", "--json")
		if r.code != 0 {
			t.Fatalf("ls: %d %s", r.code, r.err)
		}
		var rows []struct {
			Path         string `json:"path"`
			ID           string `json:"id"`
			Cwd          string `json:"cwd"`
			FirstMessage string `json:"firstMessage"`
		}
		if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
			t.Fatalf("%v: %s", err, r.out)
		}
		got := map[string]string{}
		for _, row := range rows {
			got[row.Cwd] = row.FirstMessage
		}
		if got["/work/proj"] != "first question" || !strings.HasPrefix(got["/work/app"], "Why does the build fail?") {
			t.Fatalf("listing: %s", r.out)
		}
	}
	r := runArbor(t, "", "info", "5ff6573e")
	if r.code != 0 || !strings.Contains(r.out, cc) {
		t.Errorf("info by id prefix: %d %s%s", r.code, r.out, r.err)
	}
	// Search, through the text index and by regular expression, finds the
	// entries by the ids reading the file in place gives.
	for _, q := range []string{"Makefile", "re:makefile has no"} {
		r := runArbor(t, "", "search", "--all", q, "--json")
		var hits []struct {
			Path    string `json:"path"`
			EntryID string `json:"entryId"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.out), &hits) != nil || len(hits) == 0 {
			t.Fatalf("search %q: %d %s%s", q, r.code, r.out, r.err)
		}
		for _, h := range hits {
			if h.Path != cc {
				t.Errorf("search %q: hit in %s", q, h.Path)
			}
			if c := runArbor(t, "", "context", cc, "--leaf", h.EntryID); c.code != 0 {
				t.Errorf("search %q: entry %s is not in the file read in place: %s", q, h.EntryID, c.err)
			}
		}
	}
}

// TestImportTwoFilesOneID: two Claude Code files claiming one sessionId are
// imported as two sessions, each holding its own text, and the second's
// summary says which file claimed the id first instead of counting its
// entries as already there.
func TestImportTwoFilesOneID(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	file := func(text string) string {
		env := `"sessionId":"0b5c1e9e-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:00.000Z"`
		return `{"parentUuid":null,` + env + `,"type":"user","message":{"role":"user","content":"question ` + text + `"},"uuid":"u1"}` + "\n" +
			`{"parentUuid":"u1",` + env + `,"type":"assistant","requestId":"r1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"answer ` + text + `"}],"stop_reason":"end_turn"},"uuid":"a1"}` + "\n"
	}
	a, b := filepath.Join(tmp, "a.jsonl"), filepath.Join(tmp, "b.jsonl")
	for p, text := range map[string]string{a: "alpha", b: "bravo"} {
		if err := os.WriteFile(p, []byte(file(text)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if r := runArbor(t, "", "import", a, "--session-dir", out); r.code != 0 || !strings.Contains(r.out, "2 entries new, 0 already there") {
		t.Fatalf("import %s: code %d\n%s%s", a, r.code, r.out, r.err)
	}
	r := runArbor(t, "", "import", b, "--session-dir", out)
	if r.code != 0 || !strings.Contains(r.out, "2 entries new, 0 already there") ||
		!strings.Contains(r.out, a+" claims session id 0b5c1e9e-1111-4222-8333-944445555666 too and was imported first") {
		t.Fatalf("import %s: code %d\n%s%s", b, r.code, r.out, r.err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("wrote %v, want two sessions", files)
	}
	texts := map[string]int{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, text := range []string{"answer alpha", "answer bravo"} {
			if strings.Contains(string(data), text) {
				texts[text]++
			}
		}
	}
	if texts["answer alpha"] != 1 || texts["answer bravo"] != 1 {
		t.Errorf("the two texts are spread over the sessions as %v, want one each", texts)
	}
	for _, p := range []string{a, b} {
		if r := runArbor(t, "", "import", p, "--session-dir", out); r.code != 0 || !strings.Contains(r.out, "up to date") || !strings.Contains(r.out, "0 entries new, 2 already there") {
			t.Errorf("re-import of %s: code %d\n%s%s", p, r.code, r.out, r.err)
		}
	}
}
