package agent

import (
	"context"
	"encoding/json"
	"fmt"
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
		req := Request{Model: "m", Messages: []json.RawMessage{UserMessage("hi")}, NoRetry: true}
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
		events := make(chan Event, 10)
		a := &Agent{Log: session.New(t.TempDir()), Provider: p, Model: Model{Provider: kind, ID: "m"}, Emit: func(e Event) {
			if strings.HasPrefix(e.Type, "auto_retry") {
				events <- e
			}
		}}
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
		close(events)
		var got []string
		for e := range events {
			got = append(got, fmt.Sprintf("%s %v %s", e.Type, *e.Attempt, e.FinalError))
			if e.Type == "auto_retry_start" && (*e.DelayMs != 20000 || *e.MaxAttempts != 2) {
				t.Errorf("%s: auto_retry_start %+v, want delayMs 20000 (Retry-After) of 2 attempts", kind, e)
			}
		}
		if strings.Join(got, "; ") != "auto_retry_start 1 ; auto_retry_end 1 Retry cancelled" {
			t.Errorf("%s: retry events %q", kind, got)
		}
		if m := a.Log.Context().Messages; len(m) != 2 || !strings.Contains(string(m[1].Raw), `"stopReason":"error"`) {
			t.Errorf("%s: the failed reply is not kept: %d messages", kind, len(m))
		}
	}
}

// TestRetryEventsArePis: a request the client retries is announced with pi's
// auto_retry_start (attempt, maxAttempts, delayMs from Retry-After, the
// failure) and closed with auto_retry_end: a success after the reply, or the
// last failure once the retries are spent.
func TestRetryEventsArePis(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		fake := agenttest.New(t, kind,
			agenttest.Reply{Status: 503, RetryAfter: "0", Body: `{"error":{"message":"busy"}}`}, agenttest.Reply{Text: "ok"},
			agenttest.Reply{Status: 500, RetryAfter: "0"}, agenttest.Reply{Status: 502, RetryAfter: "0"}, agenttest.Reply{Status: 503, RetryAfter: "0"})
		o := Options{Name: kind, BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: 2}
		p := Provider(NewOpenAI(o))
		if kind == "anthropic" {
			p = NewAnthropic(o)
		}
		var events []Event
		a := &Agent{Log: session.New(t.TempDir()), Provider: p, Model: Model{Provider: kind, ID: "m"},
			Emit: func(e Event) {
				if strings.HasPrefix(e.Type, "auto_retry") || e.Type == "message_end" {
					events = append(events, e)
				}
			}}
		if _, err := a.Run(context.Background(), "hi"); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		var got []string
		for _, e := range events {
			b, _ := json.Marshal(Event{Type: e.Type, Attempt: e.Attempt, MaxAttempts: e.MaxAttempts, DelayMs: e.DelayMs,
				Success: e.Success, FinalError: e.FinalError, ErrorMessage: e.ErrorMessage})
			got = append(got, string(b))
		}
		// pi's members in pi's order (the message left out above).
		want := []string{`{"type":"message_end","message":null}`,
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":2,"delayMs":0,"errorMessage":"503 Service Unavailable"}`,
			`{"type":"message_end","message":null}`, `{"type":"auto_retry_end","success":true,"attempt":1}`}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: events\n%s\nwant\n%s", kind, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		events = nil
		_, err := a.Run(context.Background(), "again")
		if err == nil {
			t.Fatalf("%s: three failures with two retries succeeded", kind)
		}
		var types []string
		for _, e := range events {
			types = append(types, e.Type)
		}
		last := events[len(events)-1]
		if strings.Join(types, " ") != "message_end auto_retry_start auto_retry_start message_end auto_retry_end" ||
			*last.Success || *last.Attempt != 2 || !strings.Contains(last.FinalError, "503") {
			t.Errorf("%s: %v, last %+v", kind, types, last)
		}
	}
}
