package window

import (
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/arborlog/arbor/internal/golden"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

func args(kv ...string) map[string]jsontext.Value {
	out := map[string]jsontext.Value{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = marshal(kv[i+1])
	}
	return out
}

func TestToolOutline(t *testing.T) {
	var src strings.Builder
	for i := range 120 {
		src.WriteString("line " + strings.Repeat("x", i%7) + "\n")
	}
	goTest := strings.Repeat("=== RUN   TestA\n--- PASS: TestA (0.00s)\n", 38) +
		"=== RUN   TestB\n    b_test.go:9: got 1\n--- FAIL: TestB (0.00s)\n=== RUN   TestC\n--- FAIL: TestC (0.00s)\nFAIL\nFAIL\tx/y\t0.01s\n\nCommand exited with code 1"
	tests := []struct {
		name, tool string
		args       map[string]jsontext.Value
		text       string
		isError    bool
		sum        bool
		want       string
	}{
		{"read summary", "read", args("path", "src/main.go"), src.String(), false, true, "read src/main.go: 120 lines"},
		{"go test failed", "bash", args("command", "go test ./..."), goTest, true, true, `bash "go test ./...": failed (exit 1), 2 of 40 tests`},
		{"go test outline keeps the failures", "bash", args("command", "go test ./..."), goTest, true, false,
			"bash \"go test ./...\": failed (exit 1), 2 of 40 tests\n--- FAIL: TestB (0.00s)\n--- FAIL: TestC (0.00s)\nFAIL"},
		{"read with offset", "read", map[string]jsontext.Value{"path": marshal("a.go"), "offset": marshal(200)}, "x\ny\n", false, true, "read a.go: 2 lines from line 200"},
		{"read failed", "read", args("path", "a.go"), "ENOENT: no such file or directory, open 'a.go'", true, true, "read a.go: failed: ENOENT: no such file or directory, open 'a.go'"},
		{"edit", "edit", args("path", "a.go", "oldText", "x", "newText", "y"), "Successfully replaced text in a.go.", false, true, "edit a.go: ok"},
		{"write", "write", args("path", "a.go", "content", strings.Repeat("a", 2500)), "Successfully wrote 2500 bytes to a.go", false, true, "write a.go: 2.5 kB"},
		{"grep none", "grep", args("pattern", "TODO"), "No matches found", false, true, `grep "TODO" in .: 0 matches`},
		{"ls", "ls", args("path", "src"), "a.go\nb.go\nsub/\n", false, true, "ls src: 3 entries"},
		{"cargo", "cargo_test", nil, "running 3 tests\ntest result: FAILED. 2 passed; 1 failed; 0 ignored", false, true, "cargo_test: failed, 1 of 3 tests"},
		{"pytest", "run_command", args("command", "pytest -q"), "....F\n== 1 failed, 4 passed in 0.12s ==", false, true, `run_command "pytest -q": failed, 1 of 5 tests`},
		{"jest", "bash", args("command", "npx jest"), "Tests:       2 failed, 38 passed, 40 total", true, true, `bash "npx jest": failed, 2 of 40 tests`},
		{"unknown tool", "mcp_search", args("query", "context window"), "one\ntwo", false, true, "mcp_search context window: 2 lines"},
		{"ok command", "bash", args("command", "make"), "built\n", false, true, `bash "make": ok, 1 line`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, toolOutline(tc.tool, tc.args, tc.text, tc.isError, tc.sum)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"héllo wörld and more", 12, "héllo w…"}, {"one two three four five", 17, "one two three…"},
		{"✓✓✓✓✓", 8, "✓…"},
	} {
		got := clip(tc.in, tc.n)
		if got != tc.want || len(got) > tc.n {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestRenderGolden renders every message of the fixtures outlined and
// summarized; the goldens show what a model would read.
func TestRenderGolden(t *testing.T) {
	for _, name := range []string{"coding.jsonl", "dangling.jsonl"} {
		l := load(t, name)
		ctx := l.Context()
		cs := callsOf(ctx.Messages)
		var b strings.Builder
		for _, m := range ctx.Messages {
			for _, lv := range []session.Level{session.Outlined, session.Summarized} {
				r := renderLevel(m, lv, "", cs)
				if r.Role != m.Role {
					t.Errorf("%s: %s rendered %s as %s", m.Entry.ID, lv, m.Role, r.Role)
				}
				b.WriteString(string(lv) + " " + m.Role + " " + m.Entry.ID + "\n" + string(r.Raw) + "\n")
			}
			b.WriteString("\n")
		}
		golden(t, filepath.Join("testdata", strings.TrimSuffix(name, ".jsonl")+".render.golden"), b.String())
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	goldenfile.Check(t, path, []byte(got))
}
