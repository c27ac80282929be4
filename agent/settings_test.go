package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session"
)

// TestApplyDuringARunWaitsForTheNextTurn: a change sent from another
// goroutine while a request is in flight is seen by Current at once, goes
// out with the run's next request (model, provider and thinking level), and
// is recorded in the log before that request's reply.
func TestApplyDuringARunWaitsForTheNextTurn(t *testing.T) {
	gate := make(chan struct{})
	first := agenttest.New(t, "openai", agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "ls", Args: `{}`}}, Hold: gate})
	second := agenttest.New(t, "anthropic", agenttest.Reply{Text: "done"})
	tools, err := Tools([]string{"ls"})
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Log: session.New(t.TempDir()), Provider: NewOpenAI(Options{Name: "openai", BaseURL: first.BaseURL(), APIKey: "k"}),
		Model: Model{Provider: "openai", ID: "m1"}, Thinking: "off", Tools: tools, Env: &ToolEnv{Cwd: t.TempDir()}}
	if err := a.Prepare(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), "go")
		done <- err
	}()
	for len(first.Requests()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	level, off := "high", false
	a.Apply(Change{Provider: NewAnthropic(Options{Name: "anthropic", BaseURL: second.BaseURL(), APIKey: "k"}),
		Model: &Model{Provider: "anthropic", ID: "m2", MaxTokens: 4096}, Thinking: &level, AutoCompaction: &off})
	if cur := a.Current(); cur.Model.ID != "m2" || cur.Thinking != "high" || cur.AutoCompaction {
		t.Errorf("Current during the run: %+v", cur)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	reqs := second.Requests()
	if len(reqs) != 1 || reqs[0].Body["model"] != "m2" || reqs[0].Body["thinking"] == nil {
		t.Fatalf("the next request: %v", reqs)
	}
	var got []string
	for _, e := range a.Log.Entries() {
		switch e.Type {
		case session.TypeModelChange, session.TypeThinkingLevelChange:
			got = append(got, string(e.Type))
		case session.TypeMessage:
			m, err := e.Message()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, m.Role)
		}
	}
	want := "model_change thinking_level_change user assistant toolResult model_change thinking_level_change assistant"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("log %s\nwant %s", g, want)
	}
}
