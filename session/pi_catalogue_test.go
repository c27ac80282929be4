package session_test

// pi's own session-manager tests (test/session-manager/*.test.ts in pi-mono,
// catalogued in reference/pi.md §8), re-created against arbor. Where arbor
// deliberately differs (SPEC §8) the test asserts arbor's behaviour and names
// the SPEC row.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

func ptr(s string) *string { return &s }

// --- build-context -----------------------------------------------------------

func compactionLine(id, parent, summary, firstKept string, tokens int) string {
	return fmt.Sprintf(`{"type":"compaction","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:01:00.000Z","summary":%q,"firstKeptEntryId":%q,"tokensBefore":%d}`,
		id, parentJSON(parent), summary, firstKept, tokens)
}

func TestBuildContext(t *testing.T) {
	tests := []struct {
		name      string
		lines     []string
		leaf      *string // nil: the log's own leaf
		want      []string
		wantLevel string
		wantModel string // provider/modelId, "" for null
	}{
		{name: "empty session", want: nil, wantLevel: `"off"`},
		{name: "single user message", lines: []string{msgLine("1", "", "user", "hello")}, want: []string{"user:hello"}, wantLevel: `"off"`},
		{
			name: "four messages keep their roles in order",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				msgLine("3", "2", "user", "q2"), msgLine("4", "3", "assistant", "r2"),
			},
			want:      []string{"user:q1", "assistant:r1", "user:q2", "assistant:r2"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "thinking level change sets the level and is not a message",
			lines: []string{
				msgLine("1", "", "user", "q1"),
				`{"type":"thinking_level_change","id":"2","parentId":"1","timestamp":"2026-01-01T00:00:02.000Z","thinkingLevel":"high"}`,
				msgLine("3", "2", "assistant", "r1"),
			},
			want:      []string{"user:q1", "assistant:r1"},
			wantLevel: `"high"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name:      "model comes from an assistant message",
			lines:     []string{msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1")},
			want:      []string{"user:q1", "assistant:r1"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "a model change before an assistant message is overridden by it",
			lines: []string{
				`{"type":"model_change","id":"1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","provider":"openai","modelId":"gpt-4"}`,
				msgLine("2", "1", "user", "q1"), msgLine("3", "2", "assistant", "r1"),
			},
			want:      []string{"user:q1", "assistant:r1"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "a model change after the assistant message wins",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				`{"type":"model_change","id":"3","parentId":"2","timestamp":"2026-01-01T00:00:03.000Z","provider":"openai","modelId":"gpt-4"}`,
			},
			want:      []string{"user:q1", "assistant:r1"},
			wantLevel: `"off"`, wantModel: `{"provider":"openai","modelId":"gpt-4"}`,
		},
		{
			name: "compaction keeps from firstKeptEntryId",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				msgLine("3", "2", "user", "q2"), msgLine("4", "3", "assistant", "r2"),
				compactionLine("5", "4", "S", "3", 1000),
				msgLine("6", "5", "user", "q3"), msgLine("7", "6", "assistant", "r3"),
			},
			want:      []string{"compactionSummary:S", "user:q2", "assistant:r2", "user:q3", "assistant:r3"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "compaction keeping from the first entry",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				compactionLine("3", "2", "S", "1", 10),
				msgLine("4", "3", "user", "q2"),
			},
			want:      []string{"compactionSummary:S", "user:q1", "assistant:r1", "user:q2"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "only the latest of two compactions counts",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				compactionLine("3", "2", "S1", "1", 10),
				msgLine("4", "3", "user", "q2"), msgLine("5", "4", "assistant", "r2"),
				compactionLine("6", "5", "S2", "4", 20),
				msgLine("7", "6", "user", "q3"),
			},
			want:      []string{"compactionSummary:S2", "user:q2", "assistant:r2", "user:q3"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "a compaction whose kept entry is not on the path keeps nothing before it",
			lines: []string{
				msgLine("1", "", "user", "q1"), compactionLine("2", "1", "S", "gone", 10), msgLine("3", "2", "user", "q2"),
			},
			want:      []string{"compactionSummary:S", "user:q2"},
			wantLevel: `"off"`,
		},
		{
			name: "leaf on the first branch",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				msgLine("3", "2", "user", "branch A"), msgLine("4", "2", "user", "branch B"),
			},
			leaf:      ptr("3"),
			want:      []string{"user:q1", "assistant:r1", "user:branch A"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "leaf on the second branch",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				msgLine("3", "2", "user", "branch A"), msgLine("4", "2", "user", "branch B"),
			},
			leaf:      ptr("4"),
			want:      []string{"user:q1", "assistant:r1", "user:branch B"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "branch summary on the path",
			lines: []string{
				msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
				`{"type":"branch_summary","id":"3","parentId":"2","timestamp":"2026-01-01T00:00:03.000Z","fromId":"2","summary":"tried X"}`,
				msgLine("4", "3", "user", "q2"),
			},
			want:      []string{"user:q1", "assistant:r1", "branchSummary:tried X", "user:q2"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name: "an empty branch summary emits nothing",
			lines: []string{
				msgLine("1", "", "user", "q1"),
				`{"type":"branch_summary","id":"2","parentId":"1","timestamp":"2026-01-01T00:00:03.000Z","fromId":"1","summary":""}`,
			},
			want:      []string{"user:q1"},
			wantLevel: `"off"`,
		},
		{
			name: "complex tree: the branch left through a summary",
			lines: []string{
				msgLine("1", "", "user", "start"), msgLine("2", "1", "assistant", "r1"),
				msgLine("3", "2", "user", "q2"), msgLine("4", "3", "assistant", "r2"),
				msgLine("5", "4", "user", "main 5"),
				`{"type":"branch_summary","id":"6","parentId":"3","timestamp":"2026-01-01T00:00:06.000Z","fromId":"3","summary":"abandoned"}`,
				msgLine("7", "6", "assistant", "better"),
			},
			want:      []string{"user:start", "assistant:r1", "user:q2", "branchSummary:abandoned", "assistant:better"},
			wantLevel: `"off"`, wantModel: `{"provider":"anthropic","modelId":"claude-test"}`,
		},
		{
			name:      "an unknown leaf falls back to the last entry",
			lines:     []string{msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"), msgLine("3", "", "user", "other root")},
			leaf:      ptr("nope"),
			want:      []string{"user:other root"},
			wantLevel: `"off"`,
		},
		{
			name:      "an orphan's context is itself",
			lines:     []string{msgLine("1", "", "user", "q1"), msgLine("2", "missing", "user", "orphan")},
			want:      []string{"user:orphan"},
			wantLevel: `"off"`,
		},
		{
			name: "custom messages reach the context, custom entries do not",
			lines: []string{
				msgLine("1", "", "user", "q1"),
				`{"type":"custom","customType":"ext","data":{"x":1},"id":"2","parentId":"1","timestamp":"2026-01-01T00:00:02.000Z"}`,
				`{"type":"custom_message","customType":"note","content":"remember","display":true,"id":"3","parentId":"2","timestamp":"2026-01-01T00:00:03.000Z"}`,
			},
			want:      []string{"user:q1", "custom:remember"},
			wantLevel: `"off"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := session.Load(fileOf(tt.lines...))
			if !l.Report().Clean() && !strings.Contains(tt.name, "orphan") {
				t.Errorf("Report() = %+v, want clean", l.Report())
			}
			ctx := l.Context()
			if tt.leaf != nil {
				ctx = l.ContextAt(tt.leaf)
			}
			if diff := cmp.Diff(tt.want, texts(t, ctx)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if got := string(ctx.ThinkingLevel); got != tt.wantLevel {
				t.Errorf("thinking level = %s, want %s", got, tt.wantLevel)
			}
			gotModel := ""
			if ctx.Model != nil {
				b, err := jsonMarshal(ctx.Model)
				check(t, err)
				gotModel = b
			}
			if gotModel != tt.wantModel {
				t.Errorf("model = %s, want %s", gotModel, tt.wantModel)
			}
		})
	}
}

func TestBuildContextNullLeaf(t *testing.T) {
	l := session.Load(fileOf(msgLine("1", "", "user", "q1")))
	got := contextJSON(t, l.ContextAt(nil))
	if want := `{"messages":[],"thinkingLevel":"off","model":null}`; got != want {
		t.Errorf("ContextAt(nil) = %s, want %s", got, want)
	}
}

// --- custom-session-id -------------------------------------------------------

func TestCustomSessionID(t *testing.T) {
	l := session.New("/p", session.WithID("my-custom-id"))
	if got := l.Header().ID; got != "my-custom-id" {
		t.Errorf("ID = %q, want my-custom-id", got)
	}
	if !strings.Contains(string(l.Header().Raw()), `"id":"my-custom-id"`) {
		t.Errorf("header %s does not carry the id", l.Header().Raw())
	}

	a, b := session.New("/p"), session.New("/p", session.WithParent("/old.jsonl"))
	if a.Header().ID == "" || b.Header().ID == "" || a.Header().ID == b.Header().ID {
		t.Errorf("generated ids %q, %q: want two different non-empty ids", a.Header().ID, b.Header().ID)
	}
	if got := b.Header().ParentSession; got != "/old.jsonl" {
		t.Errorf("ParentSession = %q", got)
	}
	if !strings.Contains(string(b.Header().Raw()), `"parentSession":"/old.jsonl"`) {
		t.Errorf("header %s lacks parentSession", b.Header().Raw())
	}
	if strings.Contains(string(a.Header().Raw()), "parentSession") {
		t.Errorf("header %s has a parentSession it was not given", a.Header().Raw())
	}
}

// --- labels ------------------------------------------------------------------

func TestLabels(t *testing.T) {
	t.Run("set and get", func(t *testing.T) {
		l := session.New("/p")
		m := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "hi")))
		le := must[*session.Entry](t)(l.SetLabel(m.ID, "checkpoint"))
		if got := l.Label(m.ID); got != "checkpoint" {
			t.Errorf("Label = %q", got)
		}
		if le.Type != session.TypeLabel || le.ParentID != m.ID {
			t.Errorf("label entry type %s parent %s", le.Type, le.ParentID)
		}
		var v struct {
			TargetID string `json:"targetId"`
			Label    string `json:"label"`
		}
		check(t, le.Decode(&v))
		if v.TargetID != m.ID || v.Label != "checkpoint" {
			t.Errorf("label entry fields %+v", v)
		}
	})
	t.Run("clear", func(t *testing.T) {
		l := session.New("/p")
		m := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "hi")))
		must[*session.Entry](t)(l.SetLabel(m.ID, "x"))
		must[*session.Entry](t)(l.SetLabel(m.ID, ""))
		if got := l.Label(m.ID); got != "" {
			t.Errorf("Label after clear = %q", got)
		}
		if got := reopen(l).Label(m.ID); got != "" {
			t.Errorf("Label after clear and reopen = %q", got)
		}
	})
	t.Run("last one wins", func(t *testing.T) {
		l := session.New("/p")
		m := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "hi")))
		for _, s := range []string{"a", "b", "c"} {
			must[*session.Entry](t)(l.SetLabel(m.ID, s))
		}
		if got := l.Label(m.ID); got != "c" {
			t.Errorf("Label = %q, want c", got)
		}
		if got := reopen(l).Label(m.ID); got != "c" {
			t.Errorf("Label after reopen = %q, want c", got)
		}
	})
	t.Run("on tree nodes", func(t *testing.T) {
		l := session.New("/p", session.WithClock(fixedClock()))
		m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		m2 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "2")))
		le := must[*session.Entry](t)(l.SetLabel(m1.ID, "first"))
		root := l.Tree()[0]
		if root.Label != "first" || root.LabelTimestamp != le.Timestamp {
			t.Errorf("root label %q at %q, want first at %s", root.Label, root.LabelTimestamp, le.Timestamp)
		}
		if c := root.Children[0]; c.Entry.ID != m2.ID || c.Label != "" {
			t.Errorf("child %s label %q", c.Entry.ID, c.Label)
		}
	})
	t.Run("branched session keeps on-path labels only", func(t *testing.T) {
		l := session.New("/p", session.WithClock(fixedClock()))
		m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		m2 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "2")))
		l1 := must[*session.Entry](t)(l.SetLabel(m1.ID, "one"))
		l2 := must[*session.Entry](t)(l.SetLabel(m2.ID, "two"))
		check(t, l.BranchTo(m1.ID))
		off := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "off path")))
		must[*session.Entry](t)(l.SetLabel(off.ID, "elsewhere"))

		nb, err := l.Branched(m2.ID)
		check(t, err)
		var labels []*session.Entry
		for _, e := range nb.Entries() {
			if e.Type == session.TypeLabel {
				labels = append(labels, e)
			}
		}
		if len(labels) != 2 {
			t.Fatalf("branched session has %d label entries, want 2: %v", len(labels), ids(nb.Entries()))
		}
		if nb.Label(m1.ID) != "one" || nb.Label(m2.ID) != "two" || nb.Label(off.ID) != "" {
			t.Errorf("labels %q %q %q", nb.Label(m1.ID), nb.Label(m2.ID), nb.Label(off.ID))
		}
		// Re-emitted with the original timestamps, chained after the path.
		if labels[0].Timestamp != l1.Timestamp || labels[1].Timestamp != l2.Timestamp {
			t.Errorf("label timestamps %s %s, want %s %s", labels[0].Timestamp, labels[1].Timestamp, l1.Timestamp, l2.Timestamp)
		}
		if labels[0].ParentID != m2.ID || labels[1].ParentID != labels[0].ID {
			t.Errorf("label parents %s %s", labels[0].ParentID, labels[1].ParentID)
		}
	})
	t.Run("labels are not in the context", func(t *testing.T) {
		l := session.New("/p")
		m := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "hi")))
		must[*session.Entry](t)(l.SetLabel(m.ID, "x"))
		if diff := cmp.Diff([]string{"user:hi"}, texts(t, l.Context())); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("unknown target is an error", func(t *testing.T) {
		l := session.New("/p")
		_, err := l.SetLabel("nope", "x")
		if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("SetLabel(unknown) = %v, want ErrNotFound naming the id", err)
		}
		if l.Len() != 0 {
			t.Errorf("a failed SetLabel appended %d entries", l.Len())
		}
	})
}

// --- save-entry --------------------------------------------------------------

func TestSaveCustomEntry(t *testing.T) {
	l := session.New("/p")
	m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "q")))
	c := must[*session.Entry](t)(l.AppendCustom("my_ext", map[string]any{"k": "v"}))
	m2 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "a")))
	if c.ParentID != m1.ID || m2.ParentID != c.ID {
		t.Errorf("parents: custom %s (want %s), message %s (want %s)", c.ParentID, m1.ID, m2.ParentID, c.ID)
	}
	if diff := cmp.Diff([]string{m1.ID, c.ID, m2.ID}, ids(l.PathTo(""))); diff != "" {
		t.Errorf("Branch: %s", diff)
	}
	if c.CustomType() != "my_ext" || !strings.Contains(string(c.Raw()), `"data":{"k":"v"}`) {
		t.Errorf("custom entry %s", c.Raw())
	}
	if diff := cmp.Diff([]string{"user:q", "assistant:a"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
}

// --- migration ---------------------------------------------------------------

func TestMigrationCatalogue(t *testing.T) {
	v1 := `{"type":"session","id":"sess-v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"m","thinkingLevel":"off"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"provider":"anthropic","model":"m","timestamp":2}}
{"type":"thinking_level_change","timestamp":"2025-01-01T00:00:03.000Z","thinkingLevel":"high"}
`
	l := session.Load([]byte(v1))
	rep := l.Report()
	if !rep.Migrated || rep.Version != 1 {
		t.Errorf("report version %d migrated %v, want 1 and true", rep.Version, rep.Migrated)
	}
	// The header is rewritten as version 3 when the file is next written (SPEC §5.3).
	if h := string(session.MigratedHeader(l.Header())); !strings.Contains(h, `"version":3`) || !strings.Contains(h, `"provider":"anthropic"`) {
		t.Errorf("MigratedHeader = %s", h)
	}
	es := l.Entries()
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3", len(es))
	}
	prev := ""
	for _, e := range es {
		if len(e.ID) != 8 || strings.Trim(e.ID, "0123456789abcdef") != "" {
			t.Errorf("id %q is not 8 lower-case hex characters", e.ID)
		}
		if e.ParentID != prev {
			t.Errorf("entry %s parent %q, want %q (a linear chain)", e.ID, e.ParentID, prev)
		}
		prev = e.ID
	}
	if got := l.Leaf(); got == nil || got.ID != es[2].ID {
		t.Errorf("leaf %v, want the last entry", got)
	}

	v3 := string(fileOf(msgLine("a", "", "user", "q"), msgLine("b", "a", "assistant", "r")))
	l3 := session.Load([]byte(v3))
	if l3.Report().Migrated {
		t.Error("a version 3 file was migrated")
	}
	if got := string(serialize(l3)); got != v3 {
		t.Errorf("version 3 file changed on load:\n got %s\nwant %s", got, v3)
	}
}

// --- tree-traversal ----------------------------------------------------------

func TestTreeTraversal(t *testing.T) {
	t.Run("appends chain parents and move the leaf from nothing", func(t *testing.T) {
		l := session.New("/p")
		if l.Leaf() != nil {
			t.Fatalf("new session has leaf %v", l.Leaf())
		}
		var prev string
		for i, f := range []func() (*session.Entry, error){
			func() (*session.Entry, error) { return l.AppendMessage(userMsg(t, "q")) },
			func() (*session.Entry, error) { return l.AppendThinkingLevelChange("high") },
			func() (*session.Entry, error) { return l.AppendModelChange("openai", "gpt-4") },
			func() (*session.Entry, error) { return l.AppendMessage(assistantMsg(t, "a")) },
			func() (*session.Entry, error) {
				return l.AppendCompaction(session.CompactionData{Summary: "s", FirstKeptEntryID: prev, TokensBefore: 5})
			},
			func() (*session.Entry, error) { return l.AppendCustom("ext", nil) },
			func() (*session.Entry, error) {
				return l.AppendCustomMessage("note", session.TextContent("n"), true, nil)
			},
			func() (*session.Entry, error) { return l.SetSessionName("named") },
		} {
			e, err := f()
			check(t, err)
			if e.ParentID != prev {
				t.Errorf("append %d (%s): parent %q, want %q", i, e.Type, e.ParentID, prev)
			}
			if l.Leaf().ID != e.ID {
				t.Errorf("append %d: leaf %s, want %s", i, l.Leaf().ID, e.ID)
			}
			if l.Entry(e.ID) != e {
				t.Errorf("Entry(%s) is not the appended entry", e.ID)
			}
			prev = e.ID
		}
		types := []string{}
		for n := l.Tree()[0]; ; n = n.Children[0] {
			types = append(types, n.Entry.Type)
			if len(n.Children) == 0 {
				break
			}
		}
		want := []string{"message", "thinking_level_change", "model_change", "message", "compaction", "custom", "custom_message", "session_info"}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("tree types: %s", diff)
		}
		if l.SessionName() != "named" {
			t.Errorf("Name = %q", l.SessionName())
		}
	})

	t.Run("Branch", func(t *testing.T) {
		l := session.Load(fileOf(msgLine("1", "", "user", "a"), msgLine("2", "1", "assistant", "b"), msgLine("3", "2", "user", "c"), msgLine("4", "3", "assistant", "d")))
		for _, tc := range []struct {
			from string
			want []string
		}{{"", []string{"1", "2", "3", "4"}}, {"1", []string{"1"}}, {"3", []string{"1", "2", "3"}}, {"nope", []string{}}} {
			if diff := cmp.Diff(tc.want, ids(l.PathTo(tc.from))); diff != "" {
				t.Errorf("Branch(%q): %s", tc.from, diff)
			}
		}
		if got := session.New("/p").PathTo(""); len(got) != 0 {
			t.Errorf("Branch of an empty session = %v", ids(got))
		}
	})

	t.Run("Tree shapes", func(t *testing.T) {
		shape := func(ns []*session.TreeNode) string {
			var f func(ns []*session.TreeNode) string
			f = func(ns []*session.TreeNode) string {
				var parts []string
				for _, n := range ns {
					s := n.Entry.ID
					if len(n.Children) > 0 {
						s += "(" + f(n.Children) + ")"
					}
					parts = append(parts, s)
				}
				return strings.Join(parts, " ")
			}
			return f(ns)
		}
		for _, tc := range []struct {
			name  string
			lines []string
			want  string
		}{
			{"empty", nil, ""},
			{"linear", []string{msgLine("1", "", "user", ""), msgLine("2", "1", "user", ""), msgLine("3", "2", "user", "")}, "1(2(3))"},
			{"siblings", []string{msgLine("1", "", "user", ""), msgLine("2", "1", "user", ""), msgLine("3", "1", "user", "")}, "1(2 3)"},
			{"three branches", []string{msgLine("1", "", "user", ""), msgLine("2", "1", "user", ""), msgLine("3", "1", "user", ""), msgLine("4", "1", "user", ""), msgLine("5", "3", "user", "")}, "1(2 3(5) 4)"},
			{"deep", []string{msgLine("1", "", "user", ""), msgLine("2", "1", "user", ""), msgLine("3", "2", "user", ""), msgLine("4", "3", "user", ""), msgLine("5", "4", "user", ""), msgLine("6", "5", "user", "")}, "1(2(3(4(5(6)))))"},
			{"two roots", []string{msgLine("1", "", "user", ""), msgLine("2", "", "user", "")}, "1 2"},
		} {
			if got := shape(session.Load(fileOf(tc.lines...)).Tree()); got != tc.want {
				t.Errorf("%s: tree %q, want %q", tc.name, got, tc.want)
			}
		}
	})

	t.Run("children sorted by timestamp", func(t *testing.T) {
		l := session.Load(fileOf(
			`{"type":"message","id":"r","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"r"}}`,
			`{"type":"message","id":"late","parentId":"r","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"x"}}`,
			`{"type":"message","id":"early","parentId":"r","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}`,
			`{"type":"message","id":"tie","parentId":"r","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}`,
		))
		var got []string
		for _, c := range l.Tree()[0].Children {
			got = append(got, c.Entry.ID)
		}
		if diff := cmp.Diff([]string{"early", "tie", "late"}, got); diff != "" {
			t.Error(diff)
		}
		// Children() keeps file order.
		if diff := cmp.Diff([]string{"late", "early", "tie"}, ids(l.Children("r"))); diff != "" {
			t.Error(diff)
		}
	})

	t.Run("BranchTo moves the leaf, refuses unknown ids, and the next append is a sibling", func(t *testing.T) {
		l := session.New("/p")
		m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		m2 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "2")))
		check(t, l.BranchTo(m1.ID))
		if l.Leaf().ID != m1.ID {
			t.Errorf("leaf %s, want %s", l.Leaf().ID, m1.ID)
		}
		if err := l.BranchTo("nope"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("BranchTo(unknown) = %v", err)
		}
		m3 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "3")))
		if m3.ParentID != m1.ID {
			t.Errorf("append after BranchTo has parent %s, want %s", m3.ParentID, m1.ID)
		}
		// The move itself is an arbor.leaf marker under m1 (SPEC §6.2), also a child.
		kids := l.Children(m1.ID)
		if len(kids) != 3 || !kids[1].IsMarker() || kids[1].CustomType() != "arbor.leaf" {
			t.Fatalf("children of %s: %v", m1.ID, ids(kids))
		}
		if diff := cmp.Diff([]string{m2.ID, m3.ID}, ids(slices.DeleteFunc(kids, (*session.Entry).IsMarker))); diff != "" {
			t.Error(diff)
		}
	})

	t.Run("BranchWithSummary", func(t *testing.T) {
		l := session.New("/p")
		m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		m2 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "2")))
		bs := must[*session.Entry](t)(l.BranchWithSummary(m1.ID, "summary of 2", nil, false))
		if bs.ParentID != m1.ID || l.Leaf().ID != bs.ID {
			t.Errorf("summary parent %s leaf %s", bs.ParentID, l.Leaf().ID)
		}
		var d session.BranchSummaryData
		check(t, bs.Decode(&d))
		// pi 1.6.0 records the leaf that was left (0.73.1 recorded the branch point).
		if d.FromID != m2.ID || d.Summary != "summary of 2" {
			t.Errorf("summary data %+v, want fromId %s", d, m2.ID)
		}
		if _, err := l.BranchWithSummary("nope", "s", nil, false); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("BranchWithSummary(unknown) = %v", err)
		}
		root := must[*session.Entry](t)(l.BranchWithSummary("", "from the top", nil, true))
		check(t, root.Decode(&d))
		if root.ParentID != "" || d.FromID != bs.ID || !d.FromHook {
			t.Errorf("summary from root: parent %q data %+v", root.ParentID, d)
		}
		empty := session.New("/p")
		first := must[*session.Entry](t)(empty.BranchWithSummary("", "nothing left", nil, false))
		check(t, first.Decode(&d))
		if d.FromID != "root" {
			t.Errorf("summary with no leaf to leave: fromId %q, want root", d.FromID)
		}
		if diff := cmp.Diff([]string{"branchSummary:from the top"}, texts(t, l.Context())); diff != "" {
			t.Error(diff)
		}
	})

	t.Run("leaf entry and entry lookup", func(t *testing.T) {
		l := session.New("/p")
		if l.Entry("x") != nil {
			t.Error("Entry(unknown) is not nil")
		}
		m := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		if l.Leaf() != m || l.Entry(m.ID) != m {
			t.Error("Leaf/Entry do not return the appended entry")
		}
	})

	t.Run("context follows the current branch", func(t *testing.T) {
		l := session.New("/p")
		m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "2")))
		check(t, l.BranchTo(m1.ID))
		must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "3")))
		if diff := cmp.Diff([]string{"user:1", "assistant:3"}, texts(t, l.Context())); diff != "" {
			t.Error(diff)
		}
	})

	t.Run("branched session", func(t *testing.T) {
		l := session.New("/p")
		if _, err := l.Branched("nope"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Branched(unknown) = %v", err)
		}
		m1 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "1")))
		m2 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "2")))
		must[*session.Entry](t)(l.AppendMessage(userMsg(t, "3")))
		check(t, l.BranchTo(m2.ID))
		m4 := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "4")))
		m5 := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "5")))

		short, err := l.Branched(m2.ID)
		check(t, err)
		if diff := cmp.Diff([]string{m1.ID, m2.ID}, ids(short.Entries())); diff != "" {
			t.Errorf("Branched(2): %s", diff)
		}
		nb, err := l.Branched(m5.ID, session.WithParent("/old.jsonl"))
		check(t, err)
		if diff := cmp.Diff([]string{m1.ID, m2.ID, m4.ID, m5.ID}, ids(nb.Entries())); diff != "" {
			t.Errorf("Branched(5): %s", diff)
		}
		if nb.Header().ID == l.Header().ID || nb.Header().ParentSession != "/old.jsonl" {
			t.Errorf("branched header %s", nb.Header().Raw())
		}
		if nb.Leaf() == nil || nb.Leaf().ID != m5.ID {
			t.Errorf("branched leaf %v", nb.Leaf())
		}
		if diff := cmp.Diff(texts(t, l.Context()), texts(t, nb.Context())); diff != "" {
			t.Errorf("branched context differs: %s", diff)
		}
	})
}

// TestDuplicateIDsFirstWins: SPEC §8 "duplicate ids: first one wins, reported" (pi: last wins).
func TestDuplicateIDsFirstWins(t *testing.T) {
	l := session.Load(fileOf(msgLine("1", "", "user", "first"), msgLine("2", "1", "assistant", "r"), msgLine("1", "2", "user", "second")))
	if got := l.Report().DuplicateIDs; !slices.Equal(got, []string{"1"}) {
		t.Errorf("DuplicateIDs = %v", got)
	}
	if diff := cmp.Diff([]string{"user:first", "assistant:r"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
	if n := len(l.Tree()); n != 1 {
		t.Errorf("%d roots, want 1 (a duplicate is not a second node)", n)
	}
}

// TestParentCycle: SPEC §8 "parent chain with a loop: cuts the loop, reports it"
// (pi 0.73.1 hangs; later pi shows both as childless roots). The link cut is
// that of the loop's member that comes first in the file.
func TestParentCycle(t *testing.T) {
	l := session.Load(fileOf(msgLine("a", "b", "user", "A"), msgLine("b", "a", "assistant", "B")))
	if got := l.Report().Cycles; !slices.Equal(got, []string{"a"}) {
		t.Errorf("Cycles = %v, want [a]", got)
	}
	roots := l.Tree()
	if len(roots) != 1 || roots[0].Entry.ID != "a" || len(roots[0].Children) != 1 || roots[0].Children[0].Entry.ID != "b" {
		t.Fatalf("tree after the cut is not a→b")
	}
	if diff := cmp.Diff([]string{"user:A", "assistant:B"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
}
