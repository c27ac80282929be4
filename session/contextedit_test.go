package session_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/arborlog/arbor/session"
)

func TestContextEditOmitReplaceRestore(t *testing.T) {
	l := session.New("/p")
	u := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "question")))
	a := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "long answer")))
	must[*session.Entry](t)(l.AppendMessage(userMsg(t, "next")))
	before := contextJSON(t, l.Context())

	must[*session.Entry](t)(l.AppendContextEdit(a.ID, nil))
	if got := texts(t, l.Context()); !slices.Equal(got, []string{"user:question", "user:next"}) {
		t.Fatalf("after omitting %s: %v", a.ID, got)
	}
	text := session.TextContent("short")
	e := must[*session.Entry](t)(l.AppendContextEdit(a.ID, &text))
	if !strings.Contains(string(e.Raw()), `"replacement":{"content":[{"type":"text","text":"short"}]}`) {
		t.Errorf("a string replacement of an assistant message is stored as one text block (pi 1.6.0): %s", e.Raw())
	}
	if got := texts(t, l.Context()); !slices.Equal(got, []string{"user:question", "assistant:short", "user:next"}) {
		t.Fatalf("after replacing %s: %v", a.ID, got)
	}
	user := session.TextContent("reworded")
	e = must[*session.Entry](t)(l.AppendContextEdit(u.ID, &user))
	if !strings.Contains(string(e.Raw()), `"replacement":{"content":"reworded"}`) {
		t.Errorf("a user replacement keeps its string: %s", e.Raw())
	}
	must[*session.Entry](t)(l.Cursor("").RestoreContext(u.ID))
	must[*session.Entry](t)(l.Cursor("").RestoreContext(a.ID))
	if got := contextJSON(t, l.Context()); got != before {
		t.Errorf("restoring both did not give the context back:\n got %s\nwant %s", got, before)
	}
	if got := contextJSON(t, reopen(l).Context()); got != before {
		t.Errorf("the edits read back differently:\n got %s\nwant %s", got, before)
	}

	// What cannot be edited, as pi's appendContextEdit refuses it.
	if _, err := l.AppendContextEdit("nope", nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown target: %v", err)
	}
	edit := must[*session.Entry](t)(l.AppendContextEdit(u.ID, nil))
	if _, err := l.AppendContextEdit(edit.ID, nil); !errors.Is(err, session.ErrNotEditable) {
		t.Errorf("an edit of an edit: %v", err)
	}
	mc := must[*session.Entry](t)(l.AppendModelChange("p", "m"))
	if _, err := l.AppendContextEdit(mc.ID, nil); !errors.Is(err, session.ErrNotEditable) {
		t.Errorf("a model change: %v", err)
	}
	check(t, l.BranchTo(u.ID))
	if _, err := l.AppendContextEdit(a.ID, nil); !errors.Is(err, session.ErrNotEditable) {
		t.Errorf("an entry on another branch: %v", err)
	}
}

// Edits pi's API would refuse still turn up in files (hand-made, other
// programs); reading them follows pi 1.6.0's projection.
func TestContextEditsReadAsPi(t *testing.T) {
	line := func(id, parent, target, replacement string) string {
		return fmt.Sprintf(`{"type":"context_edit","id":%q,"parentId":%s,"timestamp":"2026-01-01T00:00:09.000Z","targetId":%q,"replacement":%s}`,
			id, parentJSON(parent), target, replacement)
	}
	l := session.Load(fileOf(
		msgLine("1", "", "user", "q1"), msgLine("2", "1", "assistant", "r1"),
		msgLine("9", "1", "assistant", "other branch"),
		msgLine("3", "2", "user", "q2"),
		compactionLine("4", "3", "sum", "2", 5), // keeps 2 and 3
		line("5", "4", "2", "null"),             // an edit of the compaction's kept part
		line("6", "5", "5", `{"content":"x"}`),  // an edit of an edit: nothing to replace
		line("7", "6", "9", "null"),             // an edit of an entry on another branch
		line("8", "7", "3", `{"content":[{"type":"text","text":"q2 edited"}]}`),
		line("10", "8", "1", "null"), // the summarized part is not in the context: nothing to omit
		msgLine("11", "10", "assistant", "r2"),
	))
	want := []string{"compactionSummary:sum", "user:q2 edited", "assistant:r2"}
	if got := texts(t, l.Context()); !slices.Equal(got, want) {
		t.Errorf("context %v, want %v", got, want)
	}
	p := l.Projection()
	var edited []string
	for _, e := range p.Entries {
		if e.Edit != nil {
			edited = append(edited, e.Entry.ID+"<-"+e.Edit.ID)
		}
	}
	if !slices.Equal(edited, []string{"2<-5", "3<-8"}) {
		t.Errorf("edits applied %v", edited)
	}
}

// TestPropertyContextEdits: whatever the session, omitting a message removes
// exactly its messages from the context, replacing changes only its content,
// restoring gives the context back byte for byte, an edit of anything not in
// the context changes nothing, and the file reads back the same.
func TestPropertyContextEdits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := session.New("/p")
		var ids []string
		for range rapid.IntRange(1, 25).Draw(t, "n") {
			var e *session.Entry
			var err error
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1:
				e, err = l.AppendMessage(userMsg(t, rapid.SampledFrom([]string{"a", "bb", "fix it"}).Draw(t, "user")))
			case 2, 3:
				e, err = l.AppendMessage(assistantMsg(t, rapid.SampledFrom([]string{"ok", "done", "hmm"}).Draw(t, "assistant")))
			case 4:
				if len(ids) > 0 {
					check(t, l.BranchTo(rapid.SampledFrom(ids).Draw(t, "branch to")))
				}
				continue
			case 5:
				path := l.PathTo("")
				if len(path) < 2 {
					continue
				}
				e, err = l.AppendCompaction(session.CompactionData{Summary: "s", FirstKeptEntryID: rapid.SampledFrom(path).Draw(t, "kept").ID, TokensBefore: 1})
			}
			check(t, err)
			ids = append(ids, e.ID)
		}
		if len(ids) == 0 {
			t.Skip("no entries")
		}
		for range rapid.IntRange(1, 8).Draw(t, "edits") {
			before := l.Context()
			proj := l.Projection()
			// The context is the projection's, which buildContext makes without its entries.
			if c, p := string(must[[]byte](t)(before.MarshalJSON())), string(must[[]byte](t)(proj.Context().MarshalJSON())); c != p {
				t.Fatalf("context %s, projection %s", c, p)
			}
			target := rapid.SampledFrom(ids).Draw(t, "target")
			onBranch := slices.ContainsFunc(l.PathTo(""), func(e *session.Entry) bool { return e.ID == target })
			tgt := l.Entry(target)
			editable := tgt.Type == session.TypeMessage && tgt.Role() != ""
			var err error
			action := rapid.IntRange(0, 2).Draw(t, "action")
			switch action {
			case 0:
				_, err = l.AppendContextEdit(target, nil)
			case 1:
				c := session.TextContent("edited")
				_, err = l.AppendContextEdit(target, &c)
			case 2:
				_, err = l.Cursor("").RestoreContext(target)
			}
			if !onBranch || !editable {
				if !errors.Is(err, session.ErrNotEditable) {
					t.Fatalf("edit of %s (on branch %v, %s): %v", target, onBranch, tgt.Type, err)
				}
				continue
			}
			check(t, err)
			// The context's entries stay what they were (the edit itself adds no
			// message); only the target's messages change.
			var want []string
			for _, e := range proj.Entries {
				switch {
				case e.Entry.ID != target:
					for _, m := range e.Messages {
						want = append(want, m.Entry.ID+":"+string(m.Raw))
					}
				case action == 1:
					want = append(want, target+":edited")
				case action == 2:
					want = append(want, target+":"+string(must[session.Message](t)(tgt.Message()).Raw()))
				}
			}
			var got []string
			for _, m := range l.Context().Messages {
				if m.Entry.ID == target && action == 1 {
					got = append(got, target+":"+texts(t, session.Context{Messages: []session.ContextMessage{m}})[0][len(m.Role)+1:])
					continue
				}
				got = append(got, m.Entry.ID+":"+string(m.Raw))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("action %d on %s: context\n%v\nwant\n%v\nbefore %d messages", action, target, got, want, len(before.Messages))
			}
			// The context is its entries' messages, and a span of entries is
			// theirs, edits and all (a compaction plan reads them so).
			after := l.Projection()
			keys := func(ms []session.ContextMessage) (out []string) {
				for _, m := range ms {
					out = append(out, m.Entry.ID+":"+string(m.Raw))
				}
				return out
			}
			var all []session.ContextMessage
			for _, e := range after.Entries {
				all = append(all, e.Messages...)
			}
			if !slices.Equal(keys(after.Context().Messages), keys(all)) {
				t.Fatalf("action %d on %s: the context is not its entries' messages", action, target)
			}
			from := rapid.IntRange(0, len(after.Entries)).Draw(t, "span from")
			to := rapid.IntRange(from, len(after.Entries)).Draw(t, "span to")
			var span []session.ContextMessage
			for _, e := range after.Entries[from:to] {
				span = append(span, e.Messages...)
			}
			if !slices.Equal(keys(after.Span(from, to)), keys(span)) {
				t.Fatalf("action %d on %s: Span(%d, %d) is not those entries' messages", action, target, from, to)
			}
		}
		if got, want := contextJSON(t, reopen(l).Context()), contextJSON(t, l.Context()); got != want {
			t.Fatalf("read back:\n got %s\nwant %s", got, want)
		}
	})
}
