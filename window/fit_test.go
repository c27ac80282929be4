package window

import (
	"testing"

	"github.com/arborlog/arbor/session"
)

// TestFitKeepsTheCursorsPins: Fit is the cursor's context with its stamps, so
// a budget that downgrades a tool result in a context built without them
// leaves the cursor's pinned copy in full, and its outlined entry outlined
// even with no budget at all.
func TestFitKeepsTheCursorsPins(t *testing.T) {
	l := load(t, "coding.jsonl")
	c := l.Cursor("")
	ctx := l.Context()
	var results []*session.Entry
	for _, m := range ctx.Messages {
		if m.Role == session.RoleToolResult {
			results = append(results, m.Entry)
		}
	}
	if len(results) < 3 {
		t.Fatalf("coding.jsonl has %d tool results, want 3 or more", len(results))
	}
	pinned, outlined := results[0], results[1]
	full, err := Build(ctx, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Budget: full.Tokens / 2}
	plain, err := Build(ctx, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if lv := renderedAt(plain, pinned); lv == session.Full {
		t.Fatalf("half the tokens leave %s in full without stamps: pick another entry", pinned.ID)
	}

	if err := c.Pin(pinned.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.Outline(outlined.ID, ""); err != nil {
		t.Fatal(err)
	}
	fit, err := Fit(c, o)
	if err != nil {
		t.Fatal(err)
	}
	if lv := renderedAt(fit, pinned); lv != session.Pinned {
		t.Errorf("Fit rendered the pinned entry %s at %q, want pinned", pinned.ID, lv)
	}
	if fit.Tokens > o.Budget {
		t.Errorf("Fit gave %d tokens for a budget of %d", fit.Tokens, o.Budget)
	}
	unbounded, err := Fit(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lv := renderedAt(unbounded, outlined); lv != session.Outlined {
		t.Errorf("Fit without a budget rendered the outlined entry %s at %q", outlined.ID, lv)
	}
	if lv := renderedAt(unbounded, results[2]); lv != session.Full {
		t.Errorf("Fit without a budget rendered an unstamped entry at %q", lv)
	}
}

// renderedAt is the level r renders e at ("" when it was left out).
func renderedAt(r *Result, e *session.Entry) session.Level {
	for _, m := range r.Messages {
		if m.Entry == e {
			return m.Level
		}
	}
	return ""
}
