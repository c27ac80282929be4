package agent

import (
	"context"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
)

func TestNoRetrySendsOnce(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		fake := agenttest.New(t, kind, agenttest.Reply{Status: 503, RetryAfter: "0", Body: `{"error":{"message":"busy"}}`}, agenttest.Reply{Text: "ok"})
		o := Options{Name: kind, BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: 2}
		p := Provider(NewOpenAI(o))
		if kind == "anthropic" {
			p = NewAnthropic(o)
		}
		req := Request{Model: "m", Messages: []Message{{Role: "user", Content: Content{{Type: "text", Text: "hi"}}}}, NoRetry: true}
		if _, err := p.Stream(context.Background(), req, func(Delta) {}); err == nil || len(fake.Requests()) != 1 {
			t.Errorf("%s NoRetry: %v after %d requests", kind, err, len(fake.Requests()))
		}
		req.NoRetry = false
		if out, err := p.Stream(context.Background(), req, func(Delta) {}); err != nil || out.Text() != "ok" {
			t.Errorf("%s retried: %v %v", kind, out, err)
		}
	}
}
