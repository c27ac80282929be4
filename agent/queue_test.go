package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session"
)

// queued runs prompt on a new session against fake, calling during when the
// first tool starts (while the run works), and returns the events' types.
func queued(t *testing.T, fake *agenttest.Server, q *Queue, during func()) []string {
	t.Helper()
	var events []string
	a := &Agent{Log: session.New(t.TempDir()), Provider: NewOpenAI(Options{Name: "openai", BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: -1}),
		Model: Model{Provider: "openai", ID: "m"}, Thinking: "off", Env: &ToolEnv{Cwd: t.TempDir()}, Queue: q}
	a.Tools, _ = Tools([]string{"bash"})
	a.Emit = func(e Event) {
		events = append(events, e.Type)
		if e.Type == "tool_execution_start" && during != nil {
			during()
			during = nil
		}
	}
	if _, err := a.Run(context.Background(), "prompt"); err != nil {
		t.Fatal(err)
	}
	return events
}

// texts is a request's messages as role:text.
func texts(fake *agenttest.Server, i int) string {
	var out []string
	for _, m := range fake.Messages(fake.Requests()[i]) {
		t := m.Text
		if len(m.Calls) > 0 {
			t = "call"
		}
		out = append(out, m.Role+":"+t)
	}
	return strings.Join(out, " ")
}

func TestSteerArrivesAfterToolCallsBeforeNextRequest(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"echo one"}`}, {ID: "c2", Name: "bash", Args: `{"command":"echo two"}`}}},
		agenttest.Reply{Text: "steered"},
		agenttest.Reply{Text: "followed"})
	q := &Queue{}
	var updates [][2]int
	q.OnChange = func(s, f []string) { updates = append(updates, [2]int{len(s), len(f)}) }
	events := queued(t, fake, q, func() {
		q.FollowUp("later")
		q.Steer("change course")
	})
	if n := len(fake.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	// Both tool calls ran (pi does not skip them), then the steering message.
	if got, want := texts(fake, 1), "user:prompt assistant:call tool:one\n tool:two\n user:change course"; got != want {
		t.Errorf("request after the steer:\n%s\nwant\n%s", got, want)
	}
	if got := texts(fake, 2); !strings.HasSuffix(got, "user:change course assistant:steered user:later") {
		t.Errorf("the follow-up is not sent after the run would stop: %s", got)
	}
	// pi's event order: the steering message opens the next turn.
	all := strings.Join(events, " ")
	if !strings.Contains(all, "tool_execution_end turn_end turn_start message_start message_end message_start message_update") {
		t.Errorf("events: %s", all)
	}
	if q.Len() != 0 {
		t.Errorf("%d messages still queued", q.Len())
	}
	if want := [][2]int{{0, 1}, {1, 1}, {0, 1}, {0, 0}}; len(updates) != len(want) || updates[1] != want[1] || updates[3] != want[3] {
		t.Errorf("queue updates %v, want %v", updates, want)
	}
}

func TestQueueModes(t *testing.T) {
	for _, mode := range []string{OneAtATime, All} {
		t.Run(mode, func(t *testing.T) {
			fake := agenttest.New(t, "openai",
				agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"true"}`}}},
				agenttest.Reply{Text: "a"}, agenttest.Reply{Text: "b"})
			q := &Queue{}
			if err := q.SetModes(mode, ""); err != nil {
				t.Fatal(err)
			}
			queued(t, fake, q, func() {
				q.Steer("s1")
				q.Steer("s2")
			})
			second := texts(fake, 1)
			switch mode {
			case OneAtATime:
				if !strings.HasSuffix(second, "user:s1") || len(fake.Requests()) != 3 || !strings.HasSuffix(texts(fake, 2), "user:s1 assistant:a user:s2") {
					t.Errorf("one at a time: %q then %q", second, texts(fake, 2))
				}
			case All:
				if !strings.HasSuffix(second, "user:s1 user:s2") || len(fake.Requests()) != 2 {
					t.Errorf("all: %q (%d requests)", second, len(fake.Requests()))
				}
			}
		})
	}
	if err := (&Queue{}).SetModes("some", ""); err == nil {
		t.Error("a bad mode is accepted")
	}
}

func TestQueuedWhileIdleGoesWithTheNextPrompt(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "a"}, agenttest.Reply{Text: "b"})
	q := &Queue{}
	q.Steer("also this")
	q.FollowUp("then this")
	queued(t, fake, q, nil)
	if got := texts(fake, 0); got != "user:prompt user:also this" {
		t.Errorf("first request %q", got)
	}
	if got := texts(fake, 1); !strings.HasSuffix(got, "assistant:a user:then this") {
		t.Errorf("second request %q", got)
	}
	if s, f := q.Clear(); len(s)+len(f) != 0 {
		t.Errorf("left queued %v %v", s, f)
	}
}

func TestContinueRunsWhatIsQueued(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "a"})
	a := &Agent{Log: session.New(t.TempDir()), Provider: NewOpenAI(Options{Name: "openai", BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: -1}),
		Model: Model{Provider: "openai", ID: "m"}, Queue: &Queue{}}
	if _, err := a.Continue(context.Background()); err != ErrNothingQueued {
		t.Fatalf("continue with nothing queued: %v", err)
	}
	a.Queue.FollowUp("queued late")
	last, err := a.Continue(context.Background())
	if err != nil || last.Text() != "a" {
		t.Fatalf("continue: %v %v", last, err)
	}
	if got := texts(fake, 0); got != "user:queued late" {
		t.Errorf("request %q", got)
	}
}
