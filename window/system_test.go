package window

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/session"
)

// A pi 1.6.0 context starts with the system prompt and tools as a system
// message: fitting a budget never outlines or leaves it out, statistics count
// it as system tokens, and a budget it alone overflows says so.
func TestBudgetKeepsSystemMessages(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "pi16", "sessions", "n-s1-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	l := session.Load(b)
	ctx := l.Context()
	var system []string
	for _, m := range ctx.Messages {
		if m.Role == session.RoleSystem {
			system = append(system, string(m.Raw))
		}
	}
	if len(system) == 0 {
		t.Fatal("the session has no system message")
	}
	full, err := Build(ctx, nil, Options{})
	if err != nil || full.Tokens < 4000 {
		t.Fatalf("the whole context: %d tokens, %v", full.Tokens, err)
	}
	r, err := Build(ctx, nil, Options{Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if r.LeftOut.Turns == 0 {
		t.Fatalf("half the budget left nothing out: %s", r.Explain())
	}
	var kept []string
	for _, m := range r.Messages {
		if m.Role == session.RoleSystem {
			kept = append(kept, string(m.Raw))
			if m.Level != session.Full {
				t.Errorf("system message %s rendered %s", m.Entry.ID, m.Level)
			}
		}
	}
	if len(kept) != len(system) {
		t.Errorf("%d of %d system messages kept under a budget", len(kept), len(system))
	}
	s := Measure(l.Cursor(""), StatsOptions{})
	if s.RoleTokens.System == 0 {
		t.Error("statistics count no system tokens")
	}
	var be *BudgetError
	if _, err := Build(ctx, nil, Options{Budget: 10}); !errors.As(err, &be) || be.System == 0 {
		t.Errorf("a tiny budget: %v", err)
	}
}
