package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/arborlog/arbor/session"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Provider sends one request to a model and streams the reply.
type Provider interface {
	// API names the wire format, as pi records it on assistant messages
	// ("openai-completions", "anthropic-messages").
	API() string
	// Stream sends the request and calls on for every delta. It returns the
	// reply so far even when it fails: Content, Usage and StopReason are
	// filled; API, Provider, Model, ThinkingLevel and Timestamp are the caller's.
	Stream(ctx context.Context, r Request, on func(Delta)) (*session.Assistant, error)
}

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON schema object
}

// Delta is one streamed piece of the reply: pi's assistantMessageEvent as
// its JSON stream writes it (without the partial message). A provider sends
// text_delta, thinking_delta, toolcall_start (with ID and ToolName) and
// toolcall_delta; the loop adds text_start, text_end, thinking_start,
// thinking_end and toolcall_end around each block as pi's providers send them
// (pi's start, done and error are message_start and message_end on its
// stream, never message_update). MarshalJSON writes each kind's members.
type Delta struct {
	Type         string
	ContentIndex int
	Delta        string         // *_delta: the new text or argument JSON
	Content      string         // text_end, thinking_end: the block's whole text
	ID, ToolName string         // toolcall_start
	ToolCall     *session.Block // toolcall_end: the call, its arguments parsed
	// Usage is the reply's usage so far, as the provider has reported it
	// (message_update's usage); it is not part of the event itself.
	Usage session.Usage
}

// ProviderError is a failed request: the status (0 when there was no reply)
// and the provider's message.
type ProviderError struct {
	Provider string
	Status   int
	Message  string
	Overflow bool // the request did not fit the model's context window
}

func (e *ProviderError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %s", e.Provider, e.Message)
	}
	return fmt.Sprintf("%s: %d %s: %s", e.Provider, e.Status, http.StatusText(e.Status), e.Message)
}

// ErrStalled is returned when a stream sends nothing for longer than the idle timeout.
var ErrStalled = errors.New("agent: the provider stopped sending")

// overflowPhrases are how providers say a request was longer than the window.
var overflowPhrases = []string{
	"context_length_exceeded", "maximum context length", "context length", "prompt is too long",
	"exceeds the available context size", "too many tokens", "context window", "input is too long",
	"reduce the length", "exceed context limit",
}

// IsOverflow reports whether a provider's error message says the request did
// not fit the context window.
func IsOverflow(msg string) bool {
	m := strings.ToLower(msg)
	for _, p := range overflowPhrases {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// watchdog cancels a stream that receives nothing for idle.
type watchdog struct {
	mu      sync.Mutex
	timer   *time.Timer
	stalled bool
}

func newWatchdog(idle time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{}
	if idle <= 0 {
		return w
	}
	w.timer = time.AfterFunc(idle, func() {
		w.mu.Lock()
		w.stalled = true
		w.mu.Unlock()
		cancel()
	})
	return w
}

// alive resets the timer; idle is the same duration it started with.
func (w *watchdog) alive(idle time.Duration) {
	if w.timer != nil {
		w.timer.Reset(idle)
	}
}

func (w *watchdog) stop() bool {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stalled
}

// Options are what every provider takes.
type Options struct {
	Name        string // the provider's name as recorded (openai, ollama, anthropic, …)
	BaseURL     string
	APIKey      string
	MaxRetries  int           // retries on 429, 5xx and connection errors (default 3)
	Timeout     time.Duration // the whole request, stream included (default 10 minutes)
	IdleTimeout time.Duration // silence in a stream before it is given up (default 2 minutes)
	HTTPClient  *http.Client
}

func (o Options) withDefaults() Options {
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return o
}

// parseArguments turns streamed tool-call arguments into a JSON object; text
// that is not one becomes {} and the returned error says so.
func parseArguments(s string) (json.RawMessage, error) {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage(`{}`), nil
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return json.RawMessage(`{}`), fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	return compactJSON(s), nil
}

// arguments is parseArguments with the error as text, for session.Block.ArgumentsError.
func arguments(s string) (json.RawMessage, string) {
	a, err := parseArguments(s)
	if err != nil {
		return a, fmt.Sprintf("the arguments of this call were not valid JSON (%v): %s", err, truncate(s, 300))
	}
	return a, ""
}

func compactJSON(s string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return json.RawMessage(s)
	}
	return json.RawMessage(buf.Bytes())
}

// apiError is what an SDK's error type says about a failed request.
type apiError struct {
	status   int
	message  string
	raw      string
	overflow bool
}

// mapError turns a failed stream into what the loop acts on: context.Canceled
// for an abort, a ProviderError otherwise (stalled, timed out, refused).
func (o Options) mapError(ctx context.Context, err error, stalled bool, api *apiError) error {
	if stalled {
		return &ProviderError{Provider: o.Name, Message: fmt.Sprintf("%v: nothing received for %s", ErrStalled, o.IdleTimeout)}
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	if api != nil {
		msg := api.message
		if msg == "" {
			msg = strings.TrimSpace(api.raw)
		}
		if msg == "" {
			msg = "no message"
		}
		return &ProviderError{Provider: o.Name, Status: api.status, Message: msg, Overflow: api.overflow || IsOverflow(msg)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ProviderError{Provider: o.Name, Message: fmt.Sprintf("no complete reply within %s", o.Timeout)}
	}
	return &ProviderError{Provider: o.Name, Message: err.Error(), Overflow: IsOverflow(err.Error())}
}
