package compaction

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

var tight = Options{Settings: Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 1}}

func TestCompactThenUndo(t *testing.T) {
	b := work(t)
	before := contextBytes(t, b.l)
	leaf := b.l.Leaf().ID
	e, plan, err := Compact(context.Background(), b.l.Cursor(""), tight)
	if err != nil {
		t.Fatal(err)
	}
	ctx := b.l.Context().Messages
	if ctx[0].Role != session.RoleCompactionSummary || ctx[0].Entry.ID != e.ID {
		t.Fatalf("context starts with a %s", ctx[0].Role)
	}
	if len(ctx) >= len(session.Load(nil).Context().Messages)+len(plan.Path) {
		t.Error("the context did not shrink")
	}
	var c session.CompactionData
	if err := e.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.FirstKeptEntryID != plan.FirstKeptEntryID || c.TokensBefore != plan.TokensBefore || string(c.Details) != `{"readFiles":[],"modifiedFiles":["README.md","parser.go"]}` {
		t.Errorf("entry %+v", c)
	}
	if !strings.HasSuffix(c.Summary, "\n\n<modified-files>\nREADME.md\nparser.go\n</modified-files>") {
		t.Errorf("summary does not end with the file lists: %q", c.Summary)
	}
	u, err := Undo(b.l.Cursor(""))
	if err != nil {
		t.Fatal(err)
	}
	if u.Compaction.ID != e.ID || u.From != e.ID || u.To != leaf || u.Left != 0 {
		t.Errorf("undone %+v", u)
	}
	if got := contextBytes(t, b.l); string(got) != string(before) {
		t.Errorf("undo did not restore the context:\n got %s\nwant %s", got, before)
	}
	if b.l.Entry(e.ID) == nil {
		t.Error("undo deleted the compaction")
	}
	if _, err := Undo(b.l.Cursor(session.MainCursor)); !errors.Is(err, ErrNoCompaction) {
		t.Errorf("second undo: %v, want ErrNoCompaction", err)
	}
}

func TestUndoAfterMoreWork(t *testing.T) {
	b := work(t)
	before := contextBytes(t, b.l)
	if _, _, err := Compact(context.Background(), b.l.Cursor(""), tight); err != nil {
		t.Fatal(err)
	}
	b.user("after")
	last := b.assistant("reply")
	u, err := Undo(b.l.Cursor(""))
	if err != nil {
		t.Fatal(err)
	}
	if u.Left != 2 || u.From != last.ID {
		t.Errorf("undone %+v, want 2 entries left behind from %s", u, last.ID)
	}
	if string(contextBytes(t, b.l)) != string(before) {
		t.Error("undo did not restore the context from before the compaction")
	}
}

func TestNothingToCompact(t *testing.T) {
	b := newBuilder(t)
	if _, _, err := Compact(context.Background(), b.l.Cursor(""), tight); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("empty session: %v", err)
	}
	b.user("hi")
	b.assistant("hello")
	if _, _, err := Compact(context.Background(), b.l.Cursor(""), tight); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Compact(context.Background(), b.l.Cursor(""), tight); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("branch ending in a compaction: %v", err)
	}
}

// A caller's own firstKeptEntryId at a tool result is moved back to its call.
func TestAppendMovesCutToTheCall(t *testing.T) {
	b := newBuilder(t)
	b.user("go")
	c1, c2 := b.toolCall("read", "a.go"), b.toolCall("read", "b.go")
	call := b.assistant("", c1, c2)
	r1 := b.result(c1, "A")
	b.result(c2, "B")
	b.assistant("done")
	e, err := Append(b.l.Cursor(""), Result{Summary: "s", FirstKeptEntryID: r1.ID, TokensBefore: 10})
	if err != nil {
		t.Fatal(err)
	}
	var c session.CompactionData
	_ = e.Decode(&c)
	if c.FirstKeptEntryID != call.ID {
		t.Errorf("kept from %s, want the call %s", c.FirstKeptEntryID, call.ID)
	}
	if o := orphans(b.l.Context().Messages); len(o) > 0 {
		t.Errorf("orphaned tool results %v", o)
	}
	if _, err := Append(b.l.Cursor(""), Result{Summary: "s", FirstKeptEntryID: "nothere"}); !errors.Is(err, ErrNotOnBranch) {
		t.Errorf("unknown first kept entry: %v", err)
	}
}

// An older file's compaction kept from a tool result: pi 1.6.0 has nothing
// to summarize there and makes no plan, leaving the result without its call;
// arbor plans the compaction that keeps from the call.
func TestPrepareRepairsAnOlderCompaction(t *testing.T) {
	b := newBuilder(t)
	b.user("go")
	c1 := b.toolCall("read", "a.go")
	call := b.assistant("", c1)
	r1 := b.result(c1, strings.Repeat("A", 100))
	// As pi < 0.60 or an extension could write it: keep from the tool result.
	if _, err := b.l.AppendCompaction(session.CompactionData{Summary: "old", FirstKeptEntryID: r1.ID, TokensBefore: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.l.AppendThinkingLevelChange("high"); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(b.l.PathTo(""), tight.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if p.MovedFrom != r1.ID || p.FirstKeptEntryID != call.ID {
		t.Errorf("kept from %s (moved from %q), want %s moved from %s", p.FirstKeptEntryID, p.MovedFrom, call.ID, r1.ID)
	}
	assertNoOrphans(t, p)
	// With more turns after it, the stray part is summarized and kept nowhere.
	for i := 0; i < 4; i++ {
		b.user(strings.Repeat("u", 400))
		b.assistant(strings.Repeat("a", 400))
	}
	if p, err = Prepare(b.l.PathTo(""), tight.Settings); err != nil {
		t.Fatal(err)
	}
	assertNoOrphans(t, p)
}

func TestCompactOlderThan(t *testing.T) {
	b := newBuilder(t)
	var users []*session.Entry
	for i := 0; i < 10; i++ {
		users = append(users, b.user(strings.Repeat("u", 400))) // 100 tokens
		b.assistant(strings.Repeat("a", 400))
	}
	e, p, err := CompactOlderThan(context.Background(), b.l.Cursor(""), 350, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 4 messages reach 400 ≥ 350: keep from the next one, the third user message.
	if p.FirstKeptEntryID != users[2].ID || len(p.MessagesToSummarize) != 4 {
		t.Errorf("kept from %s after %d messages, want %s after 4", p.FirstKeptEntryID, len(p.MessagesToSummarize), users[2].ID)
	}
	if b.l.Leaf().ID != e.ID {
		t.Error("the compaction is not the leaf")
	}
	if _, _, err := CompactOlderThan(context.Background(), b.l.Cursor(""), 1_000_000, Options{}); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("after compacting: %v", err)
	}
	b.user("more")
	if _, _, err := CompactOlderThan(context.Background(), b.l.Cursor(""), 1_000_000, Options{}); !errors.Is(err, ErrBelowThreshold) {
		t.Errorf("huge threshold: %v", err)
	}
}

func TestNeedsCompaction(t *testing.T) {
	b := newBuilder(t)
	b.user("hi")
	b.msg(map[string]any{"role": "assistant", "content": []any{}, "usage": usage(190000), "stopReason": "stop"})
	need, est := NeedsCompaction(b.l.Context().Messages, 200000, DefaultSettings)
	if !need || est.Tokens != 190000 {
		t.Errorf("190k of 200k: need %v, est %+v", need, est)
	}
	if need, _ := NeedsCompaction(b.l.Context().Messages, 400000, DefaultSettings); need {
		t.Error("190k of 400k needs no compaction")
	}
}

func TestCovers(t *testing.T) {
	b := work(t)
	first, p1, err := Compact(context.Background(), b.l.Cursor(""), tight)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := Covers(b.l, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cov.Previous != nil || cov.Replaced[0].ID != p1.Path[0].ID || cov.Kept[0].ID != p1.FirstKeptEntryID {
		t.Errorf("coverage %+v", cov)
	}
	b.user("again")
	b.assistant(strings.Repeat("x", 400))
	second, _, err := Compact(context.Background(), b.l.Cursor(""), tight)
	if err != nil {
		t.Fatal(err)
	}
	cov2, _ := Covers(b.l, second.ID)
	if cov2.Previous == nil || cov2.Previous.ID != first.ID {
		t.Fatalf("previous %v, want %s", cov2.Previous, first.ID)
	}
	// The second compaction re-summarizes what the first kept.
	if cov2.Replaced[0].ID != p1.FirstKeptEntryID {
		t.Errorf("second compaction replaced from %s, want the first's kept %s", cov2.Replaced[0].ID, p1.FirstKeptEntryID)
	}
	if _, err := Covers(b.l, b.l.PathTo("")[0].ID); err == nil {
		t.Error("Covers accepted an entry that is not a compaction")
	}
}

func TestBranchSummary(t *testing.T) {
	b := work(t)
	path := b.l.PathTo("")
	fork := path[0] // the first user message
	oldLeaf := b.l.Leaf().ID
	m, err := BranchWithSummary(context.Background(), b.l.Cursor(""), fork.ID, BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.From != oldLeaf || m.Left != len(path)-1 || m.Summary == nil {
		t.Fatalf("moved %+v", m)
	}
	var bs session.BranchSummaryData
	_ = m.Summary.Decode(&bs)
	if m.Summary.ParentID != fork.ID || bs.FromID != oldLeaf || b.l.Leaf().ID != m.Summary.ID {
		t.Errorf("summary entry %s parent %s fromId %s", m.Summary.ID, m.Summary.ParentID, bs.FromID)
	}
	if !strings.HasPrefix(bs.Summary, BranchSummaryPreamble+"## Original request\n") || !strings.Contains(bs.Summary, "<modified-files>\nREADME.md\nparser.go\n</modified-files>") {
		t.Errorf("summary %q", bs.Summary)
	}
	if string(bs.Details) != `{"readFiles":[],"modifiedFiles":["README.md","parser.go"]}` {
		t.Errorf("details %s", bs.Details)
	}
	ctx := b.l.Context().Messages
	if len(ctx) != 2 || ctx[1].Role != session.RoleBranchSummary {
		t.Errorf("context after the move: %d messages", len(ctx))
	}
	// Moving to the leaf does nothing; moving up the same branch leaves entries behind.
	n := b.l.Len()
	if m, err := BranchWithSummary(context.Background(), b.l.Cursor(""), b.l.Leaf().ID, BranchOptions{}); err != nil || m.Summary != nil || b.l.Len() != n {
		t.Errorf("move to the leaf: %+v, %v", m, err)
	}
}

// pi's prepareBranchEntries: newest first within the budget, no tool results,
// summaries admitted under 90%, file lists from earlier branch summaries.
func TestBranchMessages(t *testing.T) {
	b := newBuilder(t)
	if _, err := b.l.BranchWithSummary("", "earlier", map[string]any{"readFiles": []string{"old.go"}, "modifiedFiles": []string{"mod.go"}}, false); err != nil {
		t.Fatal(err)
	}
	b.user(strings.Repeat("u", 400)) // 100
	c := b.toolCall("read", "new.go")
	b.assistant(strings.Repeat("a", 380), c) // 95 + call
	b.result(c, strings.Repeat("r", 4000))
	b.user(strings.Repeat("v", 400)) // 100
	entries := b.l.PathTo("")
	msgs, read, modified, _ := BranchMessages(entries, 0)
	if len(msgs) != 4 || msgs[0].Role != session.RoleBranchSummary {
		t.Errorf("no budget: %d messages", len(msgs))
	}
	if strings.Join(read, ",") != "new.go,old.go" || strings.Join(modified, ",") != "mod.go" {
		t.Errorf("files %v %v", read, modified)
	}
	msgs, _, _, tokens := BranchMessages(entries, 250)
	if len(msgs) != 2 || tokens > 250 {
		t.Errorf("budget 250: %d messages, %d tokens", len(msgs), tokens)
	}
	s, err := SummarizeBranch(context.Background(), nil, BranchOptions{})
	if err != nil || s.Summary != "No content to summarize" {
		t.Errorf("empty branch: %q, %v", s.Summary, err)
	}
}

// Compacting and undoing another cursor leaves the active one alone.
func TestCompactOtherCursor(t *testing.T) {
	b := work(t)
	idC, err := b.l.NewCursor("review")
	if err != nil {
		t.Fatal(err)
	}
	id := idC.ID()
	b.user("main goes on")
	mainContext := func() string {
		c := b.l.Cursor(session.MainCursor).Context()
		j, _ := c.MarshalJSON()
		return string(j)
	}
	mainBefore := mainContext()
	e, _, err := Compact(context.Background(), b.l.Cursor("review"), Options{Settings: tight.Settings})
	if err != nil {
		t.Fatal(err)
	}
	if e.Cursor != id || b.l.Cursor("review").Leaf().ID != e.ID {
		t.Errorf("compaction %s on cursor %q, review's leaf %s", e.ID, e.Cursor, b.l.Cursor("review").Leaf().ID)
	}
	if mainContext() != mainBefore {
		t.Error("compacting review changed main's context")
	}
	if _, err := Undo(b.l.Cursor("review")); err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(b.l.Cursor(session.MainCursor)); !errors.Is(err, ErrNoCompaction) {
		t.Errorf("main has no compaction: %v", err)
	}
}
