package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/importers"
	goldenfile "github.com/arborlog/arbor/internal/golden"
	"github.com/arborlog/arbor/internal/pitest"
	"github.com/arborlog/arbor/internal/sessiongen"
	"github.com/arborlog/arbor/redact"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

// fixtures are sessions pi and arbor wrote: examples/refactor.jsonl (branches,
// a branch summary, labels, tools) and one pi 1.6.0 wrote with gen16
// (compactions, branch summaries, images, 1.6.0's new entry types).
var fixtures = []string{"refactor", "pi16-n000"}

func fixturePath(name string) string {
	if name == "refactor" {
		return filepath.Join("..", "examples", "refactor.jsonl")
	}
	return filepath.Join("testdata", "sessions", name+".jsonl")
}

func load(t testing.TB, name string) *session.Log {
	t.Helper()
	l, err := jsonl.Read(fixturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var fixedNow = func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) }

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", file), got)
}

func TestMarkdownGolden(t *testing.T) {
	for _, name := range fixtures {
		for _, v := range []struct {
			suffix string
			o      Options
		}{{"", Options{}}, {".no-tools", Options{NoTools: true}}} {
			t.Run(name+v.suffix, func(t *testing.T) {
				var b bytes.Buffer
				if err := Markdown(&b, load(t, name), v.o); err != nil {
					t.Fatal(err)
				}
				golden(t, name+v.suffix+".md", b.Bytes())
			})
		}
	}
}

// Hostile content stays inside its fences: a result holding ``` gets a
// longer fence, so nothing after it is read as Markdown of the export.
func TestMarkdownFences(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, session.Load(xssCorpus(t)), Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "xss.md", b.Bytes())
	if !strings.Contains(b.String(), "````text\n") {
		t.Error("a result holding ``` is not in a four-backtick fence")
	}
}

func TestJSONLGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			o := Options{ID: "01930000-0000-7000-8000-000000000001", Now: fixedNow, Source: "/sessions/" + name + ".jsonl"}
			l := load(t, name)
			if err := JSONL(&b, l, o); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".jsonl", stableLabelIDs(l, b.Bytes()))
		})
	}
}

// stableLabelIDs replaces the random ids of the label entries the export
// re-emits (SPEC §6.1) by label-1, label-2, ...
func stableLabelIDs(l *session.Log, out []byte) []byte {
	n := 0
	for _, e := range session.ParseEntries(out) {
		if e.Type == session.TypeLabel && l.Entry(e.ID) == nil {
			n++
			out = bytes.ReplaceAll(out, []byte(`"`+e.ID+`"`), []byte(fmt.Sprintf(`"label-%d"`, n)))
		}
	}
	return out
}

// leaves are the leaves the JSONL tests export from: the active one and
// every other leaf of the tree.
func leaves(l *session.Log) []string {
	ids := []string{""}
	for _, e := range l.Entries() {
		if len(l.Children(e.ID)) == 0 && !e.IsMarker() {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// The JSONL export of a branch is a linear session with a new id whose
// context, from its last line, is the context of the branch it came from.
func TestJSONLKeepsContext(t *testing.T) {
	for _, name := range fixtures {
		l := load(t, name)
		for _, leaf := range leaves(l) {
			var b bytes.Buffer
			if err := JSONL(&b, l, Options{Leaf: leaf}); err != nil {
				t.Fatal(err)
			}
			nl := session.Load(b.Bytes())
			if !nl.Report().Clean() {
				t.Errorf("%s@%s: export does not load cleanly: %+v", name, leaf, nl.Report())
			}
			if nl.Header().ID == l.Header().ID {
				t.Errorf("%s@%s: export kept the session id", name, leaf)
			}
			for _, e := range nl.Entries() {
				if n := len(nl.Children(e.ID)); n > 1 {
					t.Errorf("%s@%s: entry %s has %d children; the export must be linear", name, leaf, e.ID, n)
				}
			}
			ctx := l.Context()
			if leaf != "" {
				ctx = l.ContextAt(&leaf)
			}
			want, _ := json.Marshal(ctx)
			got, _ := json.Marshal(nl.Context())
			if !bytes.Equal(want, got) {
				t.Errorf("%s@%s: context differs:\nwant %s\n got %s", name, leaf, want, got)
			}
		}
	}
}

// pi 1.6.0 opening the JSONL export builds the same context as it builds for
// the original session from the exported leaf.
func TestJSONLOpenedByPi(t *testing.T) {
	script := pitest.Script(t, pitest.V16)
	pi := func(args ...string) string { return string(pitest.Run(t, script, args...)) }
	for _, name := range fixtures {
		l := load(t, name)
		for _, leaf := range leaves(l) {
			var b bytes.Buffer
			if err := JSONL(&b, l, Options{Leaf: leaf}); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "export.jsonl")
			if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if leaf == "" {
				leaf = l.Leaf().ID
			}
			want := pi("context", fixturePath(name), leaf)
			got := pi("context", out)
			if want != got {
				t.Errorf("%s@%s: pi's context of the export differs:\nwant %s\n got %s", name, leaf, want, got)
			}
		}
	}
}

// The data in the page cannot end its script element or be read as markup:
// the page has exactly the two script elements it was built with whatever
// the session holds, and the data parses back to the session's entries.
func TestHTMLDataEscaped(t *testing.T) {
	l := session.Load(xssCorpus(t))
	var b bytes.Buffer
	if err := HTML(&b, l, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := len(regexp.MustCompile(`(?i)<script`).FindAllString(page, -1)); n != 2 {
		t.Errorf("page has %d <script tags, want 2", n)
	}
	if n := len(regexp.MustCompile(`(?i)</script`).FindAllString(page, -1)); n != 2 {
		t.Errorf("page has %d </script tags, want 2", n)
	}
	if strings.ContainsAny(page, "\u2028\u2029") {
		t.Error("page holds a raw U+2028 or U+2029")
	}
	data := pageJSON(t, page)
	if len(data.Entries) != l.Len() {
		t.Errorf("page data has %d entries, the session %d", len(data.Entries), l.Len())
	}
	for i, e := range l.Entries() {
		if !hasEntry(data.Entries, e.ID) {
			t.Errorf("entry %d (%q) is not in the page data", i, e.ID)
		}
	}
}

type pageDoc struct {
	Entries []map[string]any `json:"entries"`
	Parents []int            `json:"parents"`
}

func pageJSON(t testing.TB, page string) pageDoc {
	t.Helper()
	const open = `<script type="application/json" id="arbor-data">`
	i := strings.Index(page, open)
	j := strings.Index(page[i:], "</script>")
	if i < 0 || j < 0 {
		t.Fatal("no data element in the page")
	}
	var d pageDoc
	if err := json.Unmarshal([]byte(page[i+len(open):i+j]), &d); err != nil {
		t.Fatalf("page data does not parse: %v", err)
	}
	return d
}

func hasEntry(es []map[string]any, id string) bool {
	for _, e := range es {
		if e["id"] == id {
			return true
		}
	}
	return false
}

func TestEscapeScript(t *testing.T) {
	in := []byte(`{"a":"</script><!-- & > ` + "\u2028\u2029" + `"}`)
	got := string(escapeScript(in))
	want := `{"a":"\u003c/script\u003e\u003c!-- \u0026 \u003e \u2028\u2029"}`
	if got != want {
		t.Errorf("escapeScript = %s, want %s", got, want)
	}
}

func FuzzEscapeScript(f *testing.F) {
	f.Add(`</script>`)
	f.Add("a\u2028b\u2029<>&")
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := json.Marshal(map[string]string{"s": s})
		if err != nil {
			return
		}
		raw = bytes.ReplaceAll(raw, []byte(`\u003c`), []byte("<")) // as a session file may hold it
		out := escapeScript(raw)
		if bytes.ContainsAny(out, "<>&") || bytes.Contains(out, []byte("\u2028")) || bytes.Contains(out, []byte("\u2029")) {
			t.Fatalf("escapeScript(%q) = %q keeps a character it must escape", raw, out)
		}
		var a, b map[string]string
		if json.Unmarshal(raw, &a) != nil || json.Unmarshal(out, &b) != nil || a["s"] != b["s"] {
			t.Fatalf("escapeScript changed the value: %q -> %q", raw, out)
		}
	})
}

// FuzzExport feeds arbitrary session files to every format: no error other
// than an empty session, and a page whose data always parses.
func FuzzExport(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input, which is slow on
	// the large fixtures.
	f.Add([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"user","content":"hi <b>","timestamp":1}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-12-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls"}}],"stopReason":"toolUse","timestamp":2}}
{"type":"label","id":"l","parentId":"b","timestamp":"2026-12-01T00:00:03.000Z","targetId":"a","label":"</script>"}
{"type":"compaction","id":"k","parentId":"l","timestamp":"2026-12-01T00:00:04.000Z","summary":"s","firstKeptEntryId":"b","tokensBefore":1}
`))
	f.Add([]byte("{\"type\":\"message\",\"id\":\"x\",\"parentId\":\"x\",\"message\":{\"role\":\"user\",\"content\":\"\u2028\"}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := session.Load(data)
		var b bytes.Buffer
		if err := HTML(&b, l, Options{}); err != nil {
			t.Fatal(err)
		}
		d := pageJSON(t, b.String())
		if len(d.Entries) != l.Len() || len(d.Parents) != l.Len() {
			t.Fatalf("page has %d entries and %d parents for %d", len(d.Entries), len(d.Parents), l.Len())
		}
		for i, p := range d.Parents {
			if p >= i {
				t.Fatalf("entry %d has parent %d: not before it", i, p)
			}
		}
		b.Reset()
		red, _ := redact.New(nil)
		if err := Markdown(&b, l, Options{Redact: red}); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		if err := JSONL(&b, l, Options{}); err != nil && err != ErrEmpty && l.Leaf() != nil {
			t.Fatal(err)
		}
	})
}

// --branch-only keeps only the path to the leaf; --no-tools drops tool
// results and shell runs, and the arguments of tool calls, and re-links what
// followed them to the entry before.
func TestHTMLShrinks(t *testing.T) {
	l := load(t, "refactor")
	page := func(o Options) pageDoc {
		var b bytes.Buffer
		if err := HTML(&b, l, o); err != nil {
			t.Fatal(err)
		}
		return pageJSON(t, b.String())
	}
	leaf := "72a0b8e4"
	d := page(Options{BranchOnly: true, Leaf: leaf})
	var got []string
	for _, e := range d.Entries {
		got = append(got, e["id"].(string))
	}
	if diff := cmp.Diff(ids(l.PathTo(leaf)), got); diff != "" {
		t.Errorf("--branch-only entries differ from the path (-want +got):\n%s", diff)
	}
	d = page(Options{NoTools: true})
	n := 0
	for i, e := range d.Entries {
		m, _ := e["message"].(map[string]any)
		if m["role"] == "toolResult" || m["role"] == "bashExecution" {
			t.Errorf("--no-tools kept %s", e["id"])
		}
		if bytes.Contains(mustJSON(t, m["content"]), []byte(`"arguments"`)) {
			t.Errorf("--no-tools kept the arguments of %s", e["id"])
		}
		if p := d.Parents[i]; p >= 0 && e["parentId"] != d.Entries[p]["id"] {
			n++ // re-linked past a dropped entry
		}
	}
	if n == 0 || len(d.Entries) >= l.Len() {
		t.Errorf("--no-tools kept %d of %d entries and re-linked %d", len(d.Entries), l.Len(), n)
	}
}

// The page's coverage of each compaction is what compaction.Covers reports
// (and 'arbor show' prints).
func TestReplacedIsCovers(t *testing.T) {
	files, _ := filepath.Glob("../compaction/testdata/pi/sessions/*.jsonl")
	for _, name := range fixtures {
		files = append(files, fixturePath(name))
	}
	checked := 0
	for _, f := range files {
		l, err := jsonl.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Entries() {
			if e.Type != session.TypeCompaction {
				continue
			}
			cov, err := compaction.Covers(l, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			first, last, n := replaced(l, e)
			var want [3]any
			if len(cov.Replaced) > 0 {
				want = [3]any{cov.Replaced[0].ID, cov.Replaced[len(cov.Replaced)-1].ID, len(cov.Replaced)}
			} else {
				want = [3]any{"", "", 0}
			}
			if got := [3]any{first, last, n}; got != want {
				t.Errorf("%s %s: replaced %v, Covers %v", f, e.ID, got, want)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d compactions checked", checked)
	}
}

// TestMarkdownOnEveryCore: a long session's Markdown, made a run of entries
// on each core, is the Markdown made on one, redaction included, and has a
// heading for every user message.
func TestMarkdownOnEveryCore(t *testing.T) {
	var data bytes.Buffer
	if err := sessiongen.Chain(&data, 5*markdownRun+3, 24); err != nil {
		t.Fatal(err)
	}
	l := session.Load(data.Bytes())
	red, err := redact.New([]string{`scanner`})
	if err != nil {
		t.Fatal(err)
	}
	markdown := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var b bytes.Buffer
		if err := Markdown(&b, l, Options{Redact: red}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	one, four := markdown(1), markdown(4)
	if one != four {
		t.Fatalf("on four cores the Markdown differs from one core's (%d and %d bytes)", len(four), len(one))
	}
	users := 0
	for _, e := range l.Entries() {
		if e.Role() == session.RoleUser {
			users++
		}
	}
	if n := strings.Count(one, "## User\n"); n != users || users < markdownRun {
		t.Fatalf("%d user headings for %d user messages", n, users)
	}
	if strings.Contains(one, "scanner") || !strings.Contains(one, "[REDACTED") {
		t.Fatal("the custom pattern was not redacted")
	}
}

// Claude Code's and Codex's calls say in Markdown what they run or touch, as
// their arguments below do for pi's; a tool_reference result names the tool
// and an image result its type and size; empty thinking is left out.
func TestMarkdownForeignTools(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"claude-tools.jsonl", []string{
			"**Tool call** `Bash` `go test ./...`\n",
			"**Tool call** `Read` `/work/app/main.go`\n",
			"**Tool call** `Glob` `**/*.go`\n",
			"**Tool call** `WebSearch` `go 1.26 release notes`\n",
			"**Result** `ToolSearch`\n\n```text\n[tool_reference: WebFetch]\n```",
			"**Result** `mcp__shot__screenshot`\n\n```text\n[image: image/png, 1 KB]\n```",
		}},
		{codexFixture, []string{
			"**Tool call** `shell` `rg -n 'func main' .`\n",
			"**Tool call** `apply_patch` `main.go, notes.md`\n",
		}},
	} {
		s, err := importers.ReadFile(filepath.Join("..", "testdata", "foreign", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Markdown(&b, s.Log(), Options{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the Markdown lacks %q", tc.file, w)
			}
		}
		if strings.Contains(b.String(), "**Thinking**") {
			t.Errorf("%s: empty thinking is shown", tc.file)
		}
	}
}
