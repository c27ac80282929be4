package compaction

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"pgregory.net/rapid"
)

// randomSession drives a session through random turns, tool calls and their
// results, settings, custom messages, branch moves and compactions written
// without arbor's checks (as older pi versions and extensions wrote them, so
// some keep from a tool result).
func randomSession(t *rapid.T) *builder {
	b := newBuilder(t)
	words := rapid.SampledFrom([]string{"fix", "the", "parser", "漢字", "🚀", "test", "go", "\"q\"", "line\nbreak"})
	text := func(label string) string {
		return strings.Join(rapid.SliceOfN(words, 1, 60).Draw(t, label), " ")
	}
	n := rapid.IntRange(2, 60).Draw(t, "ops")
	for i := 0; i < n; i++ {
		switch rapid.IntRange(0, 9).Draw(t, "op") {
		case 0, 1, 2:
			b.user(text("user"))
		case 3, 4, 5:
			var calls []map[string]any
			for range rapid.IntRange(0, 3).Draw(t, "calls") {
				calls = append(calls, b.toolCall(rapid.SampledFrom([]string{"read", "edit", "write", "bash"}).Draw(t, "tool"), "f.go"))
			}
			b.assistant(text("assistant"), calls...)
			for _, c := range calls {
				if rapid.IntRange(0, 9).Draw(t, "answered") > 0 {
					b.result(c, text("result"))
				}
			}
		case 6:
			if _, err := b.l.AppendThinkingLevelChange("high"); err != nil {
				t.Fatal(err)
			}
		case 7:
			if _, err := b.l.AppendCustomMessage("ext.note", session.TextContent(text("note")), true, nil); err != nil {
				t.Fatal(err)
			}
		case 8:
			if ids := nonMarkers(b.l); len(ids) > 0 {
				if err := b.l.BranchTo(rapid.SampledFrom(ids).Draw(t, "branch")); err != nil {
					t.Fatal(err)
				}
			}
		case 9:
			if path := b.l.PathTo(""); len(path) > 1 && path[len(path)-1].Type != session.TypeCompaction {
				kept := rapid.SampledFrom(path).Draw(t, "oldFirstKept")
				if _, err := b.l.AppendCompaction(session.CompactionData{Summary: text("old summary"), FirstKeptEntryID: kept.ID, TokensBefore: 1}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	b.user(text("last"))
	return b
}

func nonMarkers(l *session.Log) []string {
	var ids []string
	for _, e := range l.Entries() {
		if !e.IsMarker() {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// After any compaction, by pi's plan or at a caller's own first kept entry:
// the context starts with its summary, no tool result is without its call, and
// undo restores the exact context from before.
func TestPropertyCompactUndo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := randomSession(t)
		before := contextBytes(t, b.l)
		var e *session.Entry
		var err error
		switch rapid.IntRange(0, 2).Draw(t, "how") {
		case 0: // a caller's own cut
			path := b.l.PathTo("")
			kept := rapid.SampledFrom(path).Draw(t, "firstKept")
			e, err = Append(b.l.Cursor(""), Result{Summary: "caller summary", FirstKeptEntryID: kept.ID, TokensBefore: 1})
		case 1: // rho's compact_older_than
			e, _, err = CompactOlderThan(context.Background(), b.l.Cursor(""), rapid.IntRange(1, 500).Draw(t, "threshold"), Options{})
			if errors.Is(err, ErrBelowThreshold) {
				t.Skip("too little to compact")
			}
		default: // pi's plan
			keep := rapid.IntRange(0, 3000).Draw(t, "keep")
			e, _, err = Compact(context.Background(), b.l.Cursor(""), Options{Settings: Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: keep}})
			if errors.Is(err, ErrNothingToCompact) {
				t.Skip("everything fits: pi 1.6.0 makes no plan")
			}
		}
		if err != nil {
			t.Fatalf("compact: %v", err)
		}
		ctx := b.l.Context().Messages
		if len(ctx) == 0 || ctx[0].Role != session.RoleCompactionSummary || ctx[0].Entry.ID != e.ID {
			t.Fatalf("context does not start with the new summary")
		}
		if o := orphans(ctx); len(o) > 0 {
			t.Fatalf("tool results without their call: %v", o)
		}
		if _, err := Undo(b.l.Cursor("")); err != nil {
			t.Fatalf("undo: %v", err)
		}
		if got := contextBytes(t, b.l); string(got) != string(before) {
			t.Fatalf("undo changed the context:\n got %s\nwant %s", got, before)
		}
	})
}

// A second compaction starts where the first one's kept part starts, so what
// the first kept is summarized by the second (pi 0.73; 0.58 lost it).
func TestPropertySecondCompactionResummarizesKept(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := randomSession(t)
		keep := rapid.IntRange(0, 2000).Draw(t, "keep")
		opts := Options{Settings: Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: keep}}
		first, p1, err := Compact(context.Background(), b.l.Cursor(""), opts)
		if errors.Is(err, ErrNothingToCompact) {
			t.Skip("everything fits: pi 1.6.0 makes no plan")
		}
		if err != nil {
			t.Fatalf("first compaction: %v", err)
		}
		for range rapid.IntRange(1, 5).Draw(t, "more") {
			b.user(strings.Repeat("more work ", 50))
			b.assistant(strings.Repeat("done ", 50))
		}
		p2, err := Prepare(b.l.PathTo(""), opts.Settings)
		if errors.Is(err, ErrNothingToCompact) {
			t.Skip("everything fits: pi 1.6.0 makes no plan")
		}
		if err != nil {
			t.Fatalf("second plan: %v", err)
		}
		if p2.PreviousSummary == nil || p2.Path[p2.BoundaryStart].ID != p1.FirstKeptEntryID {
			t.Fatalf("second plan starts at %s, want the first's kept entry %s", p2.Path[p2.BoundaryStart].ID, p1.FirstKeptEntryID)
		}
		cov, err := Covers(b.l, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		summarized := map[string]bool{}
		for _, m := range p2.MessagesToSummarize {
			summarized[m.Entry.ID] = true
		}
		for _, m := range p2.TurnPrefixMessages {
			summarized[m.Entry.ID] = true
		}
		// What the first compaction kept and the second cuts off is summarized now.
		for _, e := range cov.Kept {
			i := indexOf(p2.Path, e.ID)
			if i < 0 || i >= p2.FirstKeptIndex || len(p2.Projected[i].Messages) == 0 {
				continue
			}
			if !summarized[e.ID] {
				t.Fatalf("entry %s kept by the first compaction is not summarized by the second", e.ID)
			}
		}
	})
}

// The mechanical summary of a long history is the same whether Summarize lets
// older segments and findings go as it reads (at once, or every 160 and 80)
// or holds them all until the end.
func TestPropertyMechanicalTrims(t *testing.T) {
	defer func(s, f int) { trimSegments, trimFindings = s, f }(trimSegments, trimFindings)
	rapid.Check(t, func(t *rapid.T) {
		b := newBuilder(t)
		words := rapid.SampledFrom([]string{"fix", "go test ./...", "make", "parser", "漢字", "done", "ok"})
		for range rapid.IntRange(1, 400).Draw(t, "turns") {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0:
				b.user(words.Draw(t, "user"))
			case 1:
				b.assistant(words.Draw(t, "reply"))
			case 2:
				b.msg(map[string]any{"role": "bashExecution", "command": words.Draw(t, "cmd"), "output": "out", "exitCode": 0})
			default:
				var calls []map[string]any
				for range rapid.IntRange(1, 3).Draw(t, "calls") {
					calls = append(calls, b.toolCall(rapid.SampledFrom([]string{"read", "edit", "write", "bash", "grep"}).Draw(t, "tool"), words.Draw(t, "path")))
				}
				b.assistant("", calls...)
				for _, c := range calls {
					b.result(c, words.Draw(t, "result"))
				}
			}
		}
		req := Request{Kind: History, Messages: b.l.Context().Messages}
		if rapid.Bool().Draw(t, "previous") {
			prev := "## Original request\nfirst\n\n## Activity\n- (3 older phase segments truncated)\n- [exploration] read a\n- [execution] edit b\n\n## Key findings\n- read a: x"
			req.PreviousSummary = &prev
		}
		summary := func(s, f int) string {
			trimSegments, trimFindings = s, f
			out, err := Mechanical{}.Summarize(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		want := summary(math.MaxInt, math.MaxInt)
		for _, n := range [][2]int{{1, 1}, {4 * MaxSegments, 4 * MaxFindings}, {MaxSegments + 1, MaxFindings + 1}} {
			if got := summary(n[0], n[1]); got != want {
				t.Fatalf("trimming at %v:\n%s\nwant\n%s", n, got, want)
			}
		}
	})
}
