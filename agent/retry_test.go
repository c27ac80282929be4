package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session"
)

func TestNoRetrySendsOnce(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		fake := agenttest.New(t, kind, agenttest.Reply{Status: 503, RetryAfter: "0", Body: `{"error":{"message":"busy"}}`}, agenttest.Reply{Text: "ok"})
		o := Options{Name: kind, BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: 2}
		p := Provider(NewOpenAI(o))
		if kind == "anthropic" {
			p = NewAnthropic(o)
		}
		req := Request{Model: "m", Messages: []session.MessageData{{Role: "user", Content: session.TextContent("hi")}}, NoRetry: true}
		if _, err := p.Stream(context.Background(), req, func(Delta) {}); err == nil || len(fake.Requests()) != 1 {
			t.Errorf("%s NoRetry: %v after %d requests", kind, err, len(fake.Requests()))
		}
		req.NoRetry = false
		if out, err := p.Stream(context.Background(), req, func(Delta) {}); err != nil || out.Text() != "ok" {
			t.Errorf("%s retried: %v %v", kind, out, err)
		}
	}
}

func TestAbortRetryCutsTheWaitShort(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		fake := agenttest.New(t, kind, agenttest.Reply{Status: 503, RetryAfter: "20", Body: `{"error":{"message":"overloaded"}}`}, agenttest.Reply{Text: "too late"})
		o := Options{Name: kind, BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: 2}
		p := Provider(NewOpenAI(o))
		if kind == "anthropic" {
			p = NewAnthropic(o)
		}
		a := &Agent{Log: session.New(t.TempDir()), Provider: p, Model: Model{Provider: kind, ID: "m"}}
		if a.AbortRetry() {
			t.Errorf("%s: AbortRetry with nothing running says it stopped one", kind)
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := a.Run(context.Background(), "hi")
			done <- err
		}()
		for len(fake.Requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		var stopped bool
		for i := 0; i < 200 && !stopped; i++ {
			time.Sleep(5 * time.Millisecond)
			stopped = a.AbortRetry()
		}
		err := <-done
		if !stopped || err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "retries were stopped") || time.Since(start) > 5*time.Second {
			t.Errorf("%s: stopped %v, err %v after %s", kind, stopped, err, time.Since(start))
		}
		if n := len(fake.Requests()); n != 1 {
			t.Errorf("%s: %d requests", kind, n)
		}
		if m := a.Log.Context().Messages; len(m) != 2 || !strings.Contains(string(m[1].Raw), `"stopReason":"error"`) {
			t.Errorf("%s: the failed reply is not kept: %d messages", kind, len(m))
		}
	}
}
