package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/window/blob"
)

// goldenWidth is the terminal width the goldens are drawn at.
const goldenWidth = 80

// commandCase is one run of the arbor command in a table of runs.
type commandCase struct {
	name  string
	args  []string
	stdin string
	code  int // the exit status expected
}

// commandFixture is a folder holding copies of the sessions shipped in the
// repository (examples/refactor.jsonl, testdata/pi), an $ARBOR_DIR with a
// blob in it, and a Claude Code session to import: everything the tables
// below run on.
type commandFixture struct {
	dir, home, ref, edges, orphan, claude, blob string
}

func newCommandFixture(t *testing.T) commandFixture {
	t.Helper()
	f := commandFixture{home: catalogHome(t), dir: t.TempDir()}
	f.ref = copyFile(t, "../../examples/refactor.jsonl", f.dir)
	f.edges = copyFile(t, "../../testdata/pi/sessions/v3-edges.jsonl", f.dir)
	// Copied in the same instant, the two would tie for the latest session.
	for p, age := range map[string]time.Duration{f.ref: time.Hour, f.edges: 2 * time.Hour} {
		if err := os.Chtimes(p, fakeNow.Add(-age), fakeNow.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	f.orphan = copyFile(t, "../../testdata/pi/sessions/dmg-orphan.jsonl", t.TempDir())
	f.claude = copyFile(t, "../../importers/testdata/claude/synthetic/synth-0001.jsonl", t.TempDir())
	replacement := filepath.Join(t.TempDir(), "shorter.txt")
	if err := os.WriteFile(replacement, []byte("The tests failed on the unit d.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := blob.Store{Dir: filepath.Join(f.home, "blobs")}.Put([]byte("kept outside the log\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.blob = ref
	return f
}

// cases are the runs of every command that prints, in order: the later ones
// edit the sessions the earlier ones read. (What a run prints with --json is
// parsed by TestEveryCommandJSON, on the same runs.)
func (f commandFixture) cases() []commandCase {
	msg := `{"role":"user","content":"one more thing","timestamp":1764442800000}` + "\n"
	return []commandCase{
		{"ls", []string{"ls", "--session-dir", f.dir}, "", 0},
		{"latest", []string{"latest", "--session-dir", f.dir}, "", 0},
		{"search", []string{"search", "--session-dir", f.dir, "unit"}, "", 0},
		{"info", []string{"info", f.ref}, "", 0},
		{"tree", []string{"tree", f.ref}, "", 0},
		{"tree-edges", []string{"tree", f.edges, "--filter", "all"}, "", 0},
		{"show", []string{"show", f.ref, "e1b8045d"}, "", 0},
		{"context", []string{"context", f.ref}, "", 0},
		{"stats", []string{"stats", f.ref}, "", 0},
		{"stats-edges", []string{"stats", f.edges}, "", 0},
		{"cursor-ls", []string{"cursor", "ls", f.ref}, "", 0},
		{"name", []string{"name", f.ref}, "", 0},
		{"fsck", []string{"fsck", f.ref}, "", 0},
		{"fsck-damaged", []string{"fsck", f.orphan}, "", 1},
		{"blob", []string{"blob", f.blob}, "", 0},
		{"export-md", []string{"export", f.ref, "--format", "md", "-"}, "", 0},
		{"export-html", []string{"export", f.ref, filepath.Join(f.dir, "refactor.html")}, "", 0},
		{"compact-dry-run", []string{"compact", f.ref, "--dry-run", "--keep-recent-tokens", "500"}, "", 0},
		{"label", []string{"label", f.ref, "e1b8045d", "the question"}, "", 0},
		{"branch", []string{"branch", f.ref, "e1b8045d"}, "", 0},
		{"cursor-new", []string{"cursor", "new", f.ref, "review"}, "", 0},
		{"cursor-switch", []string{"cursor", "switch", f.ref, "review"}, "", 0},
		{"cursor-rename", []string{"cursor", "rename", f.ref, "review", "second look"}, "", 0},
		{"pin", []string{"pin", f.ref, "c07e5a13"}, "", 0},
		{"unpin", []string{"unpin", f.ref, "c07e5a13"}, "", 0},
		{"outline", []string{"outline", f.ref, "72a0b8e4"}, "", 0},
		{"summarize", []string{"summarize", f.ref, "e6f17a25"}, "", 0},
		{"edit", []string{"edit", f.ref, "e6f17a25", "--omit"}, "", 0},
		{"rename", []string{"rename", f.ref, "Day units"}, "", 0},
		{"append", []string{"append", f.ref}, msg, 0},
		{"compact", []string{"compact", f.ref, "--keep-recent-tokens", "500", "--summarizer", "mechanical"}, "", 0},
		{"compact-undo", []string{"compact", f.ref, "--undo"}, "", 0},
		{"fork", []string{"fork", f.edges}, "", 0},
		{"archive", []string{"archive", f.edges}, "", 0},
		{"unarchive", []string{"unarchive", f.edges}, "", 0},
		{"import", []string{"import", f.claude, "--session-dir", f.dir}, "", 0},
		{"index", []string{"index", "--session-dir", f.dir}, "", 0},
		{"rm", []string{"rm", f.edges}, "", 0},
		{"restore-list", []string{"restore", "--list"}, "", 0},
		{"restore", []string{"restore", f.edges}, "", 0},
	}
}

// notPrinting are the commands the tables leave out, and why.
var notPrinting = map[string]string{
	"browse":  "a full-screen program: internal/tui's tests drive it in tmux",
	"serve":   "speaks JSON-RPC on stdin and stdout: cmd/arbor/rpc_serve_test.go and package rpc",
	"db":      "needs PostgreSQL: store_test.go",
	"sync":    "needs PostgreSQL: store_test.go",
	"version": "prints the build's own version, which a golden cannot hold: version_test.go",
	"mv":      "needs a git repository moved and a writer in another process: mv_test.go",
	"rewind":  "needs a session whose agent took checkpoints of a working folder: cmd/arbor/agent_rewind_test.go",
}

// TestGoldens runs every command that prints on a fake terminal 80 columns
// wide, with colour and without (NO_COLOR), and compares what it printed
// with testdata/golden/<colour>/<case>.golden (go test -update rewrites them).
func TestGoldens(t *testing.T) {
	for _, color := range []bool{false, true} {
		sub := map[bool]string{false: "plain", true: "color"}[color]
		t.Run(sub, func(t *testing.T) {
			f := newCommandFixture(t)
			for _, tc := range f.cases() {
				r := runFake(t, goldenWidth, color, tc.stdin, tc.args...)
				if r.code != tc.code {
					t.Errorf("arbor %s: exit %d, want %d: %s", strings.Join(tc.args, " "), r.code, tc.code, r.err)
				}
				golden(t, filepath.Join("golden", sub, tc.name+".golden"), f.scrub(r))
			}
		})
	}
}

// scrub replaces what changes from run to run (temporary folders, the ids
// and times of what the runs write) with names; ids and times from the
// sessions shipped in the repository stay as they are.
func (f commandFixture) scrub(r result) string {
	s := fmt.Sprintf("--- stdout\n%s--- stderr\n%s--- exit %d\n", r.out, r.err, r.code)
	for _, p := range []string{f.dir, f.home, filepath.Dir(f.orphan), filepath.Dir(f.claude)} {
		s = strings.ReplaceAll(s, p, "$TMP")
	}
	s = newFileName.ReplaceAllString(s, "$$NEWFILE.jsonl")
	s = tookTime.ReplaceAllString(s, " in $$TOOK")
	s = rfc3339.ReplaceAllStringFunc(s, func(ts string) string {
		if t, err := time.Parse(time.RFC3339, ts); err == nil && t.After(fakeNow) {
			return "$NOW"
		}
		return ts
	})
	return entryID.ReplaceAllStringFunc(s, func(id string) string {
		if shippedIDs[id] {
			return id
		}
		return "$NEWID"
	})
}

// shippedIDs are the 8-digit prefixes of every id in the shipped sessions the
// fixture copies.
var shippedIDs = func() map[string]bool {
	ids := map[string]bool{}
	for _, p := range []string{"../../examples/refactor.jsonl", "../../testdata/pi/sessions/v3-edges.jsonl", "../../testdata/pi/sessions/dmg-orphan.jsonl", "../../importers/testdata/claude/synthetic/synth-0001.jsonl"} {
		b, err := os.ReadFile(p)
		if err != nil {
			panic(err)
		}
		for _, m := range anyID.FindAllStringSubmatch(string(b), -1) {
			ids[m[1][:min(8, len(m[1]))]] = true
		}
	}
	return ids
}()

var anyID = regexp.MustCompile(`"(?:id|parentId|targetId|firstKeptEntryId|sessionId|uuid|parentUuid)":"([0-9a-f]{8})`)

var (
	newFileName = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl`)
	tookTime    = regexp.MustCompile(` in [0-9.]+(ns|µs|ms|s)\b`)
)

// TestCommandList: the command list in root.go is what arbor --help lists,
// every command is in the tables above or says why not, and the README's
// command table names every command.
func TestCommandList(t *testing.T) {
	root, _ := newRoot(newIO(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}))
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && c.Name() != "completion" && c.Name() != "help" {
			names = append(names, c.Name())
		}
	}
	if len(names) != len(commands()) {
		t.Errorf("arbor lists %d commands, root.go's list has %d", len(names), len(commands()))
	}
	covered := map[string]bool{}
	for _, tc := range (commandFixture{}).cases() {
		covered[tc.args[0]] = true
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := readmeCommands(string(readme))
	for _, name := range names {
		if !covered[name] && notPrinting[name] == "" {
			t.Errorf("arbor %s is in no golden case and not in notPrinting", name)
		}
		if !listed[name] {
			t.Errorf("README.md's command table has no row for arbor %s", name)
		}
		delete(listed, name)
	}
	for name := range listed {
		t.Errorf("README.md's command table lists arbor %s, which is not a command", name)
	}
	for name := range notPrinting {
		if !slices.Contains(names, name) {
			t.Errorf("notPrinting names %s, which is not a command", name)
		}
	}
}

// readmeCommands are the commands named in the first column of the README's
// command table ("| `arbor pin`, `arbor unpin` | ...").
func readmeCommands(readme string) map[string]bool {
	names := map[string]bool{}
	for line := range strings.Lines(readme) {
		if !strings.HasPrefix(line, "| `arbor ") {
			continue
		}
		first, _, _ := strings.Cut(line[1:], " | ")
		for _, m := range readmeCommand.FindAllStringSubmatch(first, -1) {
			names[m[1]] = true
		}
	}
	return names
}

var readmeCommand = regexp.MustCompile("`arbor ([a-z]+)")

// TestEveryCommandJSON runs every command of the golden table with --json:
// each prints JSON (one value, or one value a line) and nothing else.
func TestEveryCommandJSON(t *testing.T) {
	f := newCommandFixture(t)
	for _, tc := range f.cases() {
		r := runArbor(t, tc.stdin, append(tc.args, "--json")...)
		if tc.args[len(tc.args)-1] == "-" { // the document itself is the output
			if r.code != 2 || !strings.Contains(r.err, "--json describes the file written") {
				t.Errorf("arbor %s --json: exit %d, %q; want a usage error", strings.Join(tc.args, " "), r.code, r.err)
			}
			continue
		}
		if r.code != tc.code {
			t.Errorf("arbor %s --json: exit %d, want %d: %s", strings.Join(tc.args, " "), r.code, tc.code, r.err)
			continue
		}
		values := 0
		dec := json.NewDecoder(strings.NewReader(r.out))
		for {
			var v any
			err := dec.Decode(&v)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("arbor %s --json printed what is not JSON (%v):\n%s", tc.name, err, r.out)
				break
			}
			if v == nil {
				t.Errorf("arbor %s --json printed null", tc.name)
			}
			values++
		}
		if values == 0 {
			t.Errorf("arbor %s --json printed nothing", tc.name)
		}
	}
}
