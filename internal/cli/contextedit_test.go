package cli

import (
	"bytes"
	"encoding/json"
	"github.com/arborlog/arbor/internal/pitest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// contextRoles returns the roles and entry-independent texts of `arbor context --json`.
func contextMessages(t *testing.T, f string) []map[string]any {
	t.Helper()
	var ctx struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal([]byte(contextJSON(t, f)), &ctx); err != nil {
		t.Fatal(err)
	}
	return ctx.Messages
}

func TestEditCommand(t *testing.T) {
	f := copyFile(t, filepath.Join(pi16Corpus, "sessions", "n-s1-0.jsonl"), t.TempDir())
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var target *session.Entry
	for _, m := range l.Context().Messages {
		if m.Entry != nil && m.Role == session.RoleAssistant {
			target = m.Entry
		}
	}
	if target == nil {
		t.Fatal("no assistant message in the context")
	}
	before := contextJSON(t, f)
	n := len(contextMessages(t, f))

	r := runArbor(t, "", "edit", f, target.ID, "--omit", "--json")
	var res editResult
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Action != "omit" || res.TargetID != target.ID || len(res.ID) != 8 {
		t.Fatalf("edit --omit: exit %d %q %s", r.code, r.out, r.err)
	}
	if got := len(contextMessages(t, f)); got != n-1 {
		t.Errorf("after --omit the context has %d messages, want %d", got, n-1)
	}
	text := filepath.Join(t.TempDir(), "short.txt")
	if err := os.WriteFile(text, []byte("the short version"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r = runArbor(t, "", "edit", f, target.ID, "--replace-with", text); r.code != 0 {
		t.Fatalf("edit --replace-with: exit %d %s", r.code, r.err)
	}
	if !strings.Contains(contextJSON(t, f), `"content":[{"type":"text","text":"the short version"}]`) {
		t.Errorf("the replacement is not in the context")
	}
	if r = runArbor(t, "stdin text", "edit", f, target.ID, "--replace-with", "-"); r.code != 0 || !strings.Contains(contextJSON(t, f), `"text":"stdin text"`) {
		t.Errorf("edit --replace-with -: exit %d %s", r.code, r.err)
	}
	if r = runArbor(t, "", "edit", f, target.ID, "--restore"); r.code != 0 {
		t.Fatalf("edit --restore: exit %d %s", r.code, r.err)
	}
	if got := contextJSON(t, f); got != before {
		t.Errorf("--restore did not give the context back")
	}
	// The tree shows the edits with --filter all and hides them by default, as pi 1.6.0's tree does.
	if r = runArbor(t, "", "tree", f, "--filter", "all"); !strings.Contains(r.out, "[edit: omit "+target.ID+"]") || !strings.Contains(r.out, "[edit: replace "+target.ID+"]") {
		t.Errorf("tree --filter all does not show the edits:\n%s", r.out)
	}
	if r = runArbor(t, "", "tree", f); strings.Contains(r.out, "[edit: ") || strings.Contains(r.out, "[usage: ") {
		t.Errorf("the default tree shows edits or usage entries:\n%s", r.out)
	}

	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"edit", f, target.ID}, 2, "exactly one of"},
		{[]string{"edit", f, target.ID, "--omit", "--restore"}, 2, "exactly one of"},
		{[]string{"edit", f, "zzzzzzzz", "--omit"}, 1, `no entry "zzzzzzzz"`},
		{[]string{"edit", f, res.ID, "--omit"}, 1, "cannot edit " + res.ID},
		{[]string{"edit", f, target.ID, "--replace-with", filepath.Join(t.TempDir(), "nope")}, 1, "read the replacement"},
	} {
		before, _ := os.ReadFile(f)
		r := runArbor(t, "", tt.args...)
		if r.code != tt.code || !strings.Contains(r.err, tt.err) {
			t.Errorf("%v: exit %d %q, want %d and %q", tt.args[3:], r.code, r.err, tt.code, tt.err)
		}
		if after, _ := os.ReadFile(f); !bytes.Equal(before, after) {
			t.Errorf("%v changed the session", tt.args[3:])
		}
	}
}

// TestPi16ReadsArborWrites: sessions arbor writes with context edits,
// compactions (with a system checkpoint) and branch summaries, over files pi
// 1.6.0 wrote, are read by pi 1.6.0 with the context, llm messages and system
// prompt arbor says (run live with Node and the pi 1.6.0 peer).
func TestPi16ReadsArborWrites(t *testing.T) {
	pi := pi16Peer(t)
	for _, name := range []string{"n-s1-0", "n-s2-1", "n-s5-2"} {
		t.Run(name, func(t *testing.T) {
			f := copyFile(t, filepath.Join(pi16Corpus, "sessions", name+".jsonl"), t.TempDir())
			same := func(step string) {
				t.Helper()
				for _, c := range [][2][]string{
					{{"context", f, "--json"}, {"context", f}},
					{{"context", f, "--format", "llm"}, {"llm", f}},
					{{"context", f, "--system", "--json"}, {"system", f}},
				} {
					r := runArbor(t, "", c[0]...)
					if r.code != 0 {
						t.Fatalf("%s: arbor %v: exit %d %s", step, c[0], r.code, r.err)
					}
					if got := runPi(t, pi, c[1]...); !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace([]byte(r.out))) {
						t.Errorf("%s: pi 1.6.0 %s differs from arbor's:\n  pi %.400s\narbor %.400s", step, c[1][0], got, r.out)
					}
				}
			}
			l, err := jsonl.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			var editable []string
			for _, m := range l.Context().Messages {
				if m.Entry != nil && m.Entry.Type == session.TypeMessage && (m.Role == session.RoleUser || m.Role == session.RoleAssistant || m.Role == session.RoleToolResult) {
					editable = append(editable, m.Entry.ID)
				}
			}
			if len(editable) < 3 {
				t.Fatalf("only %d editable messages", len(editable))
			}
			if r := runArbor(t, "", "edit", f, editable[0], "--omit"); r.code != 0 {
				t.Fatal(r.err)
			}
			if r := runArbor(t, "replaced by arbor", "edit", f, editable[len(editable)/2], "--replace-with", "-"); r.code != 0 {
				t.Fatal(r.err)
			}
			same("context edits")
			hasSystem := !strings.HasPrefix(runArbor(t, "", "context", f, "--system", "--json").out, `{"message":null`)
			if r := runArbor(t, "", "compact", f, "--keep-recent-tokens", "0"); r.code != 0 {
				t.Fatalf("compact: %s", r.err)
			}
			same("compaction")
			l, _ = jsonl.Read(f)
			comp := l.Leaf()
			if comp.Type != session.TypeCompaction || hasSystem != strings.Contains(string(comp.Raw()), `"systemMessage":{"role":"system"`) {
				t.Errorf("arbor's compaction (system prompt in force: %v) has the wrong checkpoint: %.300s", hasSystem, comp.Raw())
			}
			// an edit of the compaction's kept part
			var kept string
			for _, m := range l.Context().Messages {
				if m.Entry != nil && m.Entry.Type == session.TypeMessage && (m.Role == session.RoleUser || m.Role == session.RoleAssistant || m.Role == session.RoleToolResult) {
					kept = m.Entry.ID
					break
				}
			}
			if kept != "" {
				if r := runArbor(t, "", "edit", f, kept, "--omit"); r.code != 0 {
					t.Fatal(r.err)
				}
				same("edit of the kept part")
			}
			path := l.PathTo("")
			if r := runArbor(t, "", "branch", f, path[len(path)/3].ID, "--summarize", "--summarizer", "mechanical"); r.code != 0 {
				t.Fatalf("branch --summarize: %s", r.err)
			}
			same("branch summary")
			if r := runArbor(t, "", "rename", f, "two\r\nlines"); r.code != 0 {
				t.Fatal(r.err)
			}
			var info struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(runPi(t, pi, "info", f), &info); err != nil || info.Name != "two lines" {
				t.Errorf("pi 1.6.0 reads the name as %q (%v), want %q", info.Name, err, "two lines")
			}
		})
	}
}

func pi16Peer(t *testing.T) string { return pitest.Script(t, pitest.V16) }
