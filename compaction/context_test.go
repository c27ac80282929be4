package compaction

import (
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

// pi's compaction.test.ts, "buildSessionContext" cases: what the context holds
// around compactions, built by the session package and by this package's
// contextOf (which TokensBefore uses).
func TestContextAroundCompactions(t *testing.T) {
	roles := func(msgs []session.ContextMessage) string {
		var out []string
		for _, m := range msgs {
			s := m.Role
			if m.Role == session.RoleUser || m.Role == session.RoleAssistant {
				s += ":" + decode(m.Raw).Content.Text("")
			}
			out = append(out, s)
		}
		return strings.Join(out, " ")
	}
	compact := func(b *builder, keep *session.Entry, summary string) {
		if _, err := b.l.AppendCompaction(session.CompactionData{Summary: summary, FirstKeptEntryID: keep.ID, TokensBefore: 100}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		build func(b *builder)
		want  string
	}{
		{"no compaction", func(b *builder) {
			b.user("q1")
			b.assistant("r1")
			b.user("q2")
			b.assistant("r2")
		}, "user:q1 assistant:r1 user:q2 assistant:r2"},
		{"single compaction", func(b *builder) {
			b.user("q1")
			b.assistant("r1")
			u2 := b.user("q2")
			b.assistant("r2")
			compact(b, u2, "S")
			b.user("q3")
			b.assistant("r3")
		}, "compactionSummary user:q2 assistant:r2 user:q3 assistant:r3"},
		{"the latest of several compactions counts", func(b *builder) {
			u1 := b.user("q1")
			b.assistant("r1")
			compact(b, u1, "S1")
			u2 := b.user("q2")
			b.assistant("r2")
			compact(b, u2, "S2")
			b.user("q3")
		}, "compactionSummary user:q2 assistant:r2 user:q3"},
		{"keep from the first entry", func(b *builder) {
			u1 := b.user("q1")
			b.assistant("r1")
			compact(b, u1, "S")
			b.user("q2")
			b.assistant("r2")
		}, "compactionSummary user:q1 assistant:r1 user:q2 assistant:r2"},
		{"first kept entry not on the branch keeps nothing", func(b *builder) {
			b.user("q1")
			b.assistant("r1")
			if _, err := b.l.AppendCompaction(session.CompactionData{Summary: "S", FirstKeptEntryID: "elsewhere", TokensBefore: 1}); err != nil {
				t.Fatal(err)
			}
			b.user("q2")
		}, "compactionSummary user:q2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder(t)
			tt.build(b)
			if got := roles(b.l.Context().Messages); got != tt.want {
				t.Errorf("session context %q, want %q", got, tt.want)
			}
			if got := roles(contextOf(b.l.PathTo(""))); got != tt.want {
				t.Errorf("contextOf %q, want %q", got, tt.want)
			}
		})
	}
	// Model and thinking level survive a compaction (they come from the whole path).
	b := newBuilder(t)
	if _, err := b.l.AppendThinkingLevelChange("high"); err != nil {
		t.Fatal(err)
	}
	b.user("q1")
	b.assistant("r1")
	u2 := b.user("q2")
	compact(b, u2, "S")
	ctx := b.l.Context()
	if string(ctx.ThinkingLevel) != `"high"` || ctx.Model == nil || string(ctx.Model.ModelID) != `"claude-test"` {
		t.Errorf("thinking %s, model %+v", ctx.ThinkingLevel, ctx.Model)
	}
}
