package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/arborlog/arbor/checkpoint"
	"strings"
	"time"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/redact"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window"
)

// ErrAborted is returned when the run was stopped (Ctrl-C): the partial reply
// is kept with stop reason "aborted".
var ErrAborted = errors.New("agent: aborted")

// Model is the model a run talks to and what it costs.
type Model struct {
	Provider  string // as recorded on messages and model_change entries
	ID        string
	Window    int // context window in tokens (0: unknown, no budget and no automatic compaction)
	Reserve   int // tokens kept free for the reply
	MaxTokens int // the reply's limit (0: the provider's default)
	Prices    Prices
}

// Prices are dollars per million tokens.
type Prices struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

func (p Prices) cost(u session.Usage) session.Cost {
	c := session.Cost{Input: u.Input * p.Input / 1e6, Output: u.Output * p.Output / 1e6,
		CacheRead: u.CacheRead * p.CacheRead / 1e6, CacheWrite: u.CacheWrite * p.CacheWrite / 1e6}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}

// Agent runs prompts against a model on one session: it takes its history
// from the log's active cursor and appends every message as it completes.
type Agent struct {
	Log *session.Log
	// Flush writes a new session's file (the prompt must be on disk before the
	// request goes out); nil for a session that is not persisted.
	Flush    func() error
	Provider Provider
	Model    Model
	Thinking string
	System   string
	Tools    []Tool
	Env      *ToolEnv
	Redactor *redact.Redactor
	// Blobs keeps full tool outputs that are cut (MaxResultBytes) and outputs
	// the budget planner cuts.
	Blobs          window.BlobWriter
	MaxResultBytes int // a tool result longer than this is cut in the log, the rest kept in Blobs (default 50 KB)
	Compaction     compaction.Settings
	Summarizer     compaction.Summarizer // nil: the model itself writes summaries
	Emit           func(Event)
	Now            func() time.Time
	// Queue holds steering and follow-up messages sent while a run works
	// (nil: none). Several agents of one session may share it.
	Queue *Queue
	// NoRetry sends each request once (pi's auto-retry off); by default the
	// provider's client retries 429, 5xx and lost connections.
	NoRetry bool
	// Checkpoints, when set, records the working folder as each user
	// message is sent and before each tool that may change files.
	Checkpoints *Checkpoints

	retry   retryGate
	changes changes
}

// Event is one thing that happened in a run, with pi 1.6.0's event names and
// members: agent_start, agent_end, turn_start, turn_end, message_start,
// message_update, message_end, tool_execution_start, tool_execution_update,
// tool_execution_end, compaction_start, compaction_end, auto_retry_start,
// auto_retry_end, queue_update, thinking_level_changed; agent_settled
// (SettledEvent) and arbor_error (ErrorEvent) are for the front ends to send.
// Its JSON is pi's (MarshalJSON).
type Event struct {
	Type                  string            `json:"type"`
	Message               json.RawMessage   `json:"message,omitempty"`
	AssistantMessageEvent *Delta            `json:"assistantMessageEvent,omitempty"`
	ToolCallID            string            `json:"toolCallId,omitempty"`
	ToolName              string            `json:"toolName,omitempty"`
	Args                  json.RawMessage   `json:"args,omitempty"`
	Result                json.RawMessage   `json:"result,omitempty"`
	IsError               *bool             `json:"isError,omitempty"`
	Reason                string            `json:"reason,omitempty"`
	Aborted               *bool             `json:"aborted,omitempty"`
	WillRetry             *bool             `json:"willRetry,omitempty"`
	ErrorMessage          string            `json:"errorMessage,omitempty"`
	Messages              []json.RawMessage `json:"messages,omitempty"`
	ToolResults           []json.RawMessage `json:"toolResults,omitempty"`
	Level                 string            `json:"level,omitempty"`         // thinking_level_changed
	Usage                 *session.Usage    `json:"usage,omitempty"`         // message_update: the reply's so far
	DurationMs            *int64            `json:"durationMs,omitempty"`    // tool_execution_end: how long the tool ran
	PartialResult         json.RawMessage   `json:"partialResult,omitempty"` // tool_execution_update
	// auto_retry_start (attempt, maxAttempts, delayMs, errorMessage) and
	// auto_retry_end (success, attempt, finalError), pi's retry events.
	Attempt     *int   `json:"attempt,omitempty"`
	MaxAttempts *int   `json:"maxAttempts,omitempty"`
	DelayMs     *int64 `json:"delayMs,omitempty"`
	Success     *bool  `json:"success,omitempty"`
	FinalError  string `json:"finalError,omitempty"`
	// queue_update: what is queued (always both lists, possibly empty).
	Steering *[]string `json:"steering,omitempty"`
	FollowUp *[]string `json:"followUp,omitempty"`
}

// QueueEvent is pi's queue_update event.
func QueueEvent(steering, followUp []string) Event {
	if steering == nil {
		steering = []string{}
	}
	if followUp == nil {
		followUp = []string{}
	}
	return Event{Type: "queue_update", Steering: &steering, FollowUp: &followUp}
}

func (a *Agent) emit(e Event) {
	if a.Emit != nil {
		a.Emit(e)
	}
}

func (a *Agent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func ptr[T any](v T) *T { return &v }

// Prepare records the model and thinking level when they differ from what the
// session's context has (a new session records both), as pi does.
func (a *Agent) Prepare() error {
	ctx := a.Log.Context()
	if ctx.Model == nil || unquote(ctx.Model.Provider) != a.Model.Provider || unquote(ctx.Model.ModelID) != a.Model.ID {
		if _, err := a.Log.AppendModelChange(a.Model.Provider, a.Model.ID); err != nil {
			return err
		}
	}
	level := unquote(ctx.ThinkingLevel)
	if level != a.Thinking || !hasThinkingChange(a.Log) {
		if _, err := a.Log.AppendThinkingLevelChange(a.Thinking); err != nil {
			return err
		}
	}
	return nil
}

func hasThinkingChange(l *session.Log) bool {
	leaf := l.Leaf()
	if leaf == nil {
		return false
	}
	for _, e := range l.PathTo(leaf.ID) {
		if e.Type == session.TypeThinkingLevelChange {
			return true
		}
	}
	return false
}

func unquote(v []byte) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// run holds what one Run appended.
type run struct {
	messages []json.RawMessage
}

func (a *Agent) appendMessage(r *run, m session.Message) (json.RawMessage, error) {
	if _, err := a.Log.AppendMessage(m); err != nil {
		return nil, err
	}
	raw := json.RawMessage(m.Raw())
	r.messages = append(r.messages, raw)
	return raw, nil
}

// ErrNothingQueued is Continue's error when no message is queued.
var ErrNothingQueued = errors.New("agent: no queued message to continue with")

// Run sends a prompt and runs until the model stops calling tools and no
// steering or follow-up message is queued (see Queue). It returns the last
// assistant message. A provider or tool failure that stops the run is
// returned as an error (the failed reply is kept with stop reason error);
// Ctrl-C (ctx cancelled) returns ErrAborted.
func (a *Agent) Run(ctx context.Context, prompt string) (*session.Assistant, error) {
	return a.start(ctx, []string{prompt}, true)
}

// Continue starts a run with what is queued: the steering messages (as the
// mode delivers them), else the follow-ups. It is for messages queued after a
// run last looked (pi's continue); with nothing queued it returns
// ErrNothingQueued and emits nothing.
func (a *Agent) Continue(ctx context.Context) (*session.Assistant, error) {
	first, poll := a.Queue.take(false), false
	if len(first) == 0 {
		first, poll = a.Queue.take(true), true
	}
	if len(first) == 0 {
		return nil, ErrNothingQueued
	}
	return a.start(ctx, first, poll)
}

func (a *Agent) start(ctx context.Context, first []string, poll bool) (*session.Assistant, error) {
	release := a.Hold()
	r := &run{}
	a.emit(Event{Type: "agent_start"})
	a.emit(Event{Type: "turn_start"})
	last, err := a.run(ctx, r, first, poll)
	if c := a.Checkpoints; c != nil && c.dirty {
		c.dirty = false
		if cerr := a.recordCheckpoint(c.take(), CheckpointEnd, a.Log.Leaf().ID, ""); cerr != nil && err == nil {
			err = cerr
		}
	}
	if eerr := release(); eerr != nil && err == nil {
		err = eerr
	}
	// arbor's client retries within the request, so no run ends to be retried.
	a.emit(Event{Type: "agent_end", Messages: r.messages, WillRetry: ptr(false)})
	return last, err
}

// user appends a user message and emits it.
func (a *Agent) user(r *run, text string) error {
	var snap checkpoint.Hash
	if a.Checkpoints != nil {
		snap = a.Checkpoints.take()
	}
	user := session.User{Text: text, Timestamp: a.now().UnixMilli()}
	raw, err := a.appendMessage(r, user.Message())
	if err != nil {
		return err
	}
	if a.Checkpoints != nil {
		if err := a.recordCheckpoint(snap, CheckpointUser, a.Log.Leaf().ID, ""); err != nil {
			return err
		}
	}
	a.emit(Event{Type: "message_start", Message: raw})
	a.emit(Event{Type: "message_end", Message: raw})
	return nil
}

// run appends the first messages and loops as pi's agent loop does: a turn
// is one request and the tool calls of its reply; steering messages are
// appended after a turn's tool calls have all run, before the next request
// (poll: also right after the first messages); follow-ups when the run would
// otherwise stop.
func (a *Agent) run(ctx context.Context, r *run, first []string, poll bool) (*session.Assistant, error) {
	for _, text := range first {
		if err := a.user(r, text); err != nil {
			return nil, err
		}
	}
	if a.Flush != nil {
		if err := a.Flush(); err != nil {
			return nil, err
		}
	}
	var pending []string
	if poll {
		pending = a.Queue.take(false)
	}
	overflowRetried := false
	for {
		for _, text := range pending {
			if err := a.user(r, text); err != nil {
				return nil, err
			}
		}
		pending = nil
		if ctx.Err() != nil {
			return nil, ErrAborted
		}
		if err := a.applyPending(); err != nil {
			return nil, err
		}
		req := Request{Model: a.Model.ID, System: a.System, Thinking: a.Thinking, MaxTokens: a.Model.MaxTokens, NoRetry: a.NoRetry, retry: &a.retry, checked: true}
		if err := a.history(ctx, &req); err != nil {
			if ctx.Err() != nil {
				return nil, ErrAborted
			}
			return nil, err
		}
		for _, t := range a.Tools {
			req.Tools = append(req.Tools, ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		rep := a.newReply()
		a.retry.watch(a.emit)
		asst, err := a.Provider.Stream(ctx, req, rep.on)
		if asst == nil {
			asst = &session.Assistant{Content: []session.Block{}}
		}
		rep.finish(asst, err)
		retried := a.retry.end(ctx, err)
		asst.API, asst.Provider, asst.Model, asst.ThinkingLevel = a.Provider.API(), a.Model.Provider, a.Model.ID, a.Thinking
		asst.Timestamp = a.now().UnixMilli()
		asst.Usage.Cost = a.Model.Prices.cost(asst.Usage)
		var pe *ProviderError
		switch {
		case err != nil && ctx.Err() != nil:
			asst.StopReason, asst.ErrorMessage = session.StopAborted, "Request was aborted"
		case errors.As(err, &pe) && pe.Overflow && !overflowRetried && a.settings().Enabled:
			// Not kept: compact once and send again.
			overflowRetried = true
			if retried != nil {
				a.emit(*retried)
			}
			if cerr := a.compact(ctx, "overflow", true, ""); cerr != nil {
				return nil, fmt.Errorf("%w (compaction after it failed: %v)", err, cerr)
			}
			continue
		case err != nil:
			if aborted, last := a.retry.abortedAfter(); aborted {
				err = fmt.Errorf("%s: %s (its retries were stopped)", a.Model.Provider, last)
			}
			asst.StopReason, asst.ErrorMessage = session.StopError, err.Error()
		}
		raw, aerr := a.appendMessage(r, asst.Message())
		if aerr != nil {
			return asst, aerr
		}
		if !rep.started {
			a.emit(Event{Type: "message_start", Message: raw})
		}
		a.emit(Event{Type: "message_end", Message: raw})
		if retried != nil {
			a.emit(*retried)
		}
		switch {
		case asst.StopReason == session.StopAborted:
			a.emit(Event{Type: "turn_end", Message: raw})
			return asst, ErrAborted
		case err != nil:
			a.emit(Event{Type: "turn_end", Message: raw})
			return asst, err
		}
		calls := asst.ToolCalls()
		var results []json.RawMessage
		if len(calls) > 0 {
			var aborted bool
			results, aborted, err = a.runTools(ctx, r, calls)
			a.emit(Event{Type: "turn_end", Message: raw, ToolResults: results})
			if err != nil {
				return asst, err
			}
			if aborted {
				return asst, ErrAborted
			}
		} else {
			a.emit(Event{Type: "turn_end", Message: raw})
		}
		pending = a.Queue.take(false)
		if len(calls) == 0 && len(pending) == 0 {
			if pending = a.Queue.take(true); len(pending) == 0 {
				return asst, nil
			}
		}
		a.emit(Event{Type: "turn_start"})
	}
}

// runTools runs the calls in order and appends each result as it completes.
// After an abort the remaining calls are answered as skipped, so the log
// never holds a call without its result.
func (a *Agent) runTools(ctx context.Context, r *run, calls []session.Block) ([]json.RawMessage, bool, error) {
	var results []json.RawMessage
	holder := a.Log.Leaf().ID // the assistant message with the calls
	for _, call := range calls {
		var (
			out  ToolOutput
			took *int64 // pi leaves durationMs out for a tool that did not run
			snap checkpoint.Hash
		)
		if ctx.Err() != nil {
			out = ToolOutput{Text: "Skipped: the run was aborted before this tool ran", IsError: true}
		} else {
			if a.Checkpoints != nil && a.changesFiles(call.Name) {
				snap = a.Checkpoints.take()
				a.Checkpoints.dirty = true
			}
			a.emit(Event{Type: "tool_execution_start", ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
			began := time.Now()
			out = a.runTool(withProgress(ctx, a.progress(call)), call)
			took = ptr(time.Since(began).Milliseconds())
		}
		m, err := a.toolResult(call, out)
		if err != nil {
			return results, false, err
		}
		raw, err := a.appendMessage(r, m)
		if err != nil {
			return results, false, err
		}
		results = append(results, raw)
		a.emit(Event{Type: "tool_execution_end", ToolCallID: call.ID, ToolName: call.Name, Result: raw, IsError: ptr(out.IsError), DurationMs: took})
		// Recorded after the result, so the call and its result stay adjacent.
		if err := a.recordCheckpoint(snap, CheckpointTool, holder, call.ID); err != nil {
			return results, false, err
		}
	}
	return results, ctx.Err() != nil, nil
}

func (a *Agent) runTool(ctx context.Context, call session.Block) ToolOutput {
	if call.ArgumentsError != "" {
		return errorOutput("%s", call.ArgumentsError)
	}
	for _, t := range a.Tools {
		if t.Name == call.Name {
			return t.Run(ctx, a.Env, call.Arguments)
		}
	}
	return errorOutput("Tool %s not found", call.Name)
}

// progress emits a running call's partial output (tool_execution_update),
// its secrets redacted as the result's will be; nil without an Emit.
func (a *Agent) progress(call session.Block) func(string) {
	if a.Emit == nil {
		return nil
	}
	return func(text string) {
		if a.Redactor != nil {
			text, _ = a.Redactor.Redact(text)
		}
		raw, err := json.Marshal(map[string]any{"content": []session.Block{session.TextBlock(text)}})
		if err != nil {
			return
		}
		a.emit(Event{Type: "tool_execution_update", ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, PartialResult: raw})
	}
}

// toolResult builds the result message: secrets redacted, then cut to
// MaxResultBytes with the full (redacted) text kept in Blobs.
func (a *Agent) toolResult(call session.Block, out ToolOutput) (session.Message, error) {
	text, n := out.Text, 0
	if a.Redactor != nil {
		if out.File != "" {
			text, n = a.Redactor.RedactFile(out.File, text)
		} else {
			text, n = a.Redactor.Redact(text)
		}
	}
	content := append([]session.Block{session.TextBlock(text)}, out.Images...)
	tr := session.ToolResult{ToolCallID: call.ID, ToolName: call.Name, Content: content, IsError: out.IsError, Timestamp: a.now().UnixMilli()}
	details := map[string]any{}
	for k, v := range out.Details {
		details[k] = v
	}
	if n > 0 {
		details[window.RedactedKey] = n
	}
	if len(details) > 0 {
		raw, err := json.Marshal(details)
		if err != nil {
			return session.Message{}, err
		}
		tr.Details = raw
	}
	m := tr.Message()
	var err error
	limit := a.MaxResultBytes
	if limit == 0 {
		limit = 50 * 1024
	}
	if a.Blobs != nil && limit > 0 {
		m, _, err = window.BoundToolResult(m, limit, a.Blobs)
	}
	return m, err
}

// history gives req its messages: the active cursor's context at its
// resolutions, compacted first when it passes window − reserve, fitted to the
// budget, with unanswered tool calls closed, converted for the model. They are
// the log's own bytes where a message is sent as logged: nothing is decoded
// until the provider writes it (Request.Decoded). Without a budget they are
// made as the provider writes them (req.each), each read once.
func (a *Agent) history(ctx context.Context, req *Request) error {
	cur := a.Log.Cursor("")
	c, stamps := cur.ContextWithResolutions()
	if a.Model.Window > 0 && a.settings().Enabled {
		if need, _ := compaction.NeedsCompaction(c.Messages, a.Model.Window, a.settings()); need {
			if err := a.compact(ctx, "threshold", false, ""); err == nil {
				c, stamps = cur.ContextWithResolutions()
			} else if ctx.Err() != nil {
				return err
			}
		}
	}
	opts := window.Options{Budget: a.budget(), Blobs: a.Blobs}
	if opts.Budget == 0 && window.Streamable(stamps) {
		// Nothing to fit: each message is made as it is sent and read once.
		req.each = streamHistory(c, stamps)
		return nil
	}
	_, msgs, err := window.BuildForModel(c, stamps, opts)
	if errors.Is(err, window.ErrBudget) && a.settings().Enabled {
		if cerr := a.compact(ctx, "threshold", false, ""); cerr != nil {
			return fmt.Errorf("%w; compaction failed too: %v", err, cerr)
		}
		c, stamps = cur.ContextWithResolutions()
		_, msgs, err = window.BuildForModel(c, stamps, opts)
	}
	req.Messages = msgs
	return err
}

// streamHistory yields the messages of c as BuildForModel makes them without a
// budget (window.Stream, then session.ForModel), each as it is sent, with
// what the scanner read of it when the model gets it as logged.
func streamHistory(c session.Context, stamps map[string]session.Resolution) func(yield func(json.RawMessage, *session.MessageData) bool) {
	return func(yield func(json.RawMessage, *session.MessageData) bool) {
		window.Stream(c, stamps, func(m session.ContextMessage, d *session.MessageData) bool {
			raw, same, ok := session.ForModelOne(m)
			if !ok {
				return true
			}
			if !same {
				d = nil
			}
			return yield(raw, d)
		})
	}
}

func (a *Agent) settings() compaction.Settings {
	s := a.Compaction
	if s == (compaction.Settings{}) {
		s = compaction.DefaultSettings
	}
	if a.Model.Reserve > 0 {
		s.ReserveTokens = a.Model.Reserve
	}
	return s
}

// SetAutoCompaction turns pi's automatic compaction (before a request that
// would not fit, and after a context-overflow error) on or off; Compact
// works either way.
func (a *Agent) SetAutoCompaction(on bool) {
	a.Compaction = a.settings()
	a.Compaction.Enabled = on
}

// CompactionSettings are the compaction settings in effect (the defaults
// when none are set; the model's reserve when it has one).
func (a *Agent) CompactionSettings() compaction.Settings { return a.settings() }

// AutoCompaction says whether automatic compaction is on.
func (a *Agent) AutoCompaction() bool { return a.settings().Enabled }

// Overhead is the estimated tokens of the system prompt and of the tool
// schemas, which every request carries beside the messages.
func (a *Agent) Overhead() (system, tools int) {
	est := window.DefaultEstimator
	for _, t := range a.Tools {
		tools += est.Text(t.Name+t.Description+string(t.Parameters), window.Code)
	}
	return est.Text(a.System, window.Prose), tools
}

// budget is window − reserve − system prompt − tool schemas (0 without a window).
func (a *Agent) budget() int {
	if a.Model.Window <= 0 {
		return 0
	}
	system, tools := a.Overhead()
	b := window.Budget{Window: a.Model.Window, Reserve: a.settings().ReserveTokens, System: system, Tools: tools}
	return max(b.Prompt(), 1)
}

// compact summarizes the older part of the branch (pi's automatic compaction),
// with the user's focus when there is one.
func (a *Agent) compact(ctx context.Context, reason string, willRetry bool, instructions string) error {
	a.emit(Event{Type: "compaction_start", Reason: reason})
	e, _, err := compaction.Compact(ctx, a.Log.Cursor(""), compaction.Options{Settings: a.settings(), Summarizer: a.summarizer(), Instructions: instructions})
	end := Event{Type: "compaction_end", Reason: reason, Aborted: ptr(ctx.Err() != nil), WillRetry: ptr(willRetry && err == nil)}
	if err != nil {
		end.ErrorMessage = err.Error()
	} else {
		end.Result = json.RawMessage(e.Raw())
	}
	a.emit(end)
	return err
}

func (a *Agent) summarizer() compaction.Summarizer {
	if a.Summarizer != nil {
		return a.Summarizer
	}
	return modelSummarizer{a}
}

// BranchSummarizer is what writes the agent's summaries (Summarizer, or the
// model itself), for branch summaries written outside a run (the chat's /tree).
func (a *Agent) BranchSummarizer() compaction.Summarizer { return a.summarizer() }

// modelSummarizer asks the agent's own model for a compaction summary, with pi's prompts.
type modelSummarizer struct{ a *Agent }

func (m modelSummarizer) Summarize(ctx context.Context, r compaction.Request) (string, error) {
	text, _, err := m.SummarizeMetered(ctx, r)
	return text, err
}

// SummarizeMetered also returns the call's usage and cost, which the
// compaction records (pi 1.6.0).
func (m modelSummarizer) SummarizeMetered(ctx context.Context, r compaction.Request) (string, session.Usage, error) {
	req := Request{Model: m.a.Model.ID, System: compaction.SystemPrompt, MaxTokens: r.MaxTokens,
		Messages: []json.RawMessage{UserMessage(compaction.Prompt(r))}}
	out, err := m.a.Provider.Stream(ctx, req, func(Delta) {})
	if err != nil {
		return "", session.Usage{}, err
	}
	text := strings.TrimSpace(out.Text())
	if text == "" {
		return "", session.Usage{}, compaction.ErrEmptySummary
	}
	u := out.Usage
	u.Cost = m.a.Model.Prices.cost(u)
	return text, u, nil
}

// Compact summarizes the older part of the active branch now (pi's manual
// compaction), with the agent's summarizer; instructions ("" for none) say
// what the summary should focus on.
func (a *Agent) Compact(ctx context.Context, instructions string) error {
	release := a.Hold()
	err := a.compact(ctx, "manual", false, instructions)
	return errors.Join(err, release())
}
