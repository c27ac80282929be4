package window

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arborlog/arbor/session"
)

// Options says how to build a context.
type Options struct {
	// Budget is the prompt budget in tokens (see Budget.Prompt); 0 applies
	// the resolutions without fitting.
	Budget int
	// Estimator counts tokens; nil means DefaultEstimator.
	Estimator *Estimator
	// ResultShare is the largest share of the budget one tool result may take
	// before it is cut (default 0.25).
	ResultShare float64
	// Blobs, when set, receives the full text of every cut tool result, so the
	// note in its place can say how to read it back.
	Blobs BlobWriter
}

// BlobWriter keeps a full tool output outside the log; Put returns its reference.
type BlobWriter interface {
	Put(data []byte) (string, error)
}

// Budget is a model's window and what is taken from it before the conversation.
type Budget struct {
	Window  int // the model's context window
	Reserve int // kept free for the reply
	System  int // the system prompt
	Tools   int // the tool schemas
}

// Prompt is what is left for the conversation: window − reserve − system − tools.
func (b Budget) Prompt() int { return max(0, b.Window-b.Reserve-b.System-b.Tools) }

// Message is one message of a built context.
type Message struct {
	session.ContextMessage
	Level  session.Level // the level it is rendered at
	Tokens int           // estimated, once converted for a model
	// Synthetic messages are not in the log: the note about left-out turns and
	// the error results that close unanswered tool calls.
	Synthetic bool
	cut       bool
	orig      *facts // what Measure reads of the message as logged (nil for synthetic ones)
}

// Result is a built context and what was done to make it.
type Result struct {
	Messages      []Message
	ThinkingLevel json.RawMessage
	Model         *session.Model
	Budget        int // 0 when built without one
	Tokens        int // estimated total of Messages
	Protected     int // estimated tokens of what the planner may not touch

	Changes []Change // downgrades the planner made, in message order
	LeftOut LeftOut  // turns left out
	Cuts    []Cut    // tool results cut to their share of the budget
	Closed  []string // tool call ids closed with an error result
	Orphans []string // entry ids of tool results whose call is not in the context, sent as user text
}

// Change is one downgrade made by the planner.
type Change struct {
	EntryID  string        `json:"entryId"`
	Role     string        `json:"role"`
	From     session.Level `json:"from"`
	To       session.Level `json:"to"`
	Before   int           `json:"tokensBefore"`
	After    int           `json:"tokensAfter"`
	Position int           `json:"position"` // index in the unfitted context
}

// LeftOut counts the turns the planner left out.
type LeftOut struct {
	Turns    int      `json:"turns"`
	Messages int      `json:"messages"`
	Tokens   int      `json:"tokens"`
	Entries  []string `json:"entryIds,omitempty"`
}

// Cut is a tool result cut to its share of the budget.
type Cut struct {
	EntryID string `json:"entryId"`
	Bytes   int    `json:"bytes"` // the full output
	Kept    int    `json:"keptBytes"`
	Blob    string `json:"blob,omitempty"`
}

// BudgetError is returned when even the protected part of a context does not fit.
// Each message kept counts in exactly one part, the first that applies in the
// order below, so the parts add up to Protected.
type BudgetError struct {
	Budget    int
	Protected int // tokens of everything that must stay: the sum of the parts below
	System    int // tokens of the system messages (the prompt and tools)
	First     int // tokens of the first user request
	Last      int // tokens of the last user request, when it is not the first
	LastTurn  int // tokens of the rest of the last turn
	Pinned    int // tokens of the other pinned entries
	NPinned   int // how many pinned entries Pinned counts
	Paired    int // tokens of the rest of the pinned entries' turns (the calls and results they pair with, and closing results), each at its smallest
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("window: the context cannot fit in %d tokens: what must stay needs %d (system prompt %d, first request %d, last request %d, last turn %d, %s %d, the rest of their turns %d); raise the budget or unpin entries",
		e.Budget, e.Protected, e.System, e.First, e.Last, e.LastTurn, plural(e.NPinned, "pinned entry"), e.Pinned, e.Paired)
}

// ErrBudget is matched by every *BudgetError.
var ErrBudget = errors.New("window: context does not fit the budget")

func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Fit is the context a cursor gives the model: the cursor's context rendered
// at its resolutions (its pins kept whatever the budget) and, with a budget,
// fitted to it (see the package comment). The log is never changed.
func Fit(c *session.Cursor, o Options) (*Result, error) {
	ctx, stamps := c.ContextWithResolutions()
	return Build(ctx, stamps, o)
}

// Build renders ctx at the resolutions (stamps) of the cursor it was built for
// (session.Cursor.Resolutions; nil: no stamps, every entry at its default
// level) and, with a budget, fits it (see the package comment). Fit does both
// for a cursor.
func Build(ctx session.Context, stamps map[string]session.Resolution, o Options) (*Result, error) {
	return build(ctx, stamps, o, true)
}

// plan decodes, counts and pairs the messages of ctx: what every build
// starts from, and all Measure needs.
func plan(ctx session.Context, stamps map[string]session.Resolution, o Options) *planner {
	if o.Estimator == nil {
		o.Estimator = &DefaultEstimator
	}
	if o.ResultShare <= 0 {
		o.ResultShare = 0.25
	}
	p := &planner{est: o.Estimator, o: o, stamps: stamps}
	p.load(ctx.Messages)
	p.pair()
	return p
}

// BuildEach is Build handing each built message to add, in order, rather
// than keeping them: the Result it returns has no Messages. The planner lets
// go of each message as it hands it over, so a caller that keeps less than a
// Message of each (its JSON, say) never holds a context of a million
// messages twice.
func BuildEach(ctx session.Context, stamps map[string]session.Resolution, o Options, add func(Message)) (*Result, error) {
	p, res, err := fitted(ctx, stamps, o, true)
	if err != nil {
		return nil, err
	}
	p.emit(res, add)
	return res, nil
}

// BuildForModel is BuildEach converting the messages for a model
// (Result.ForModel) as they are built.
func BuildForModel(ctx session.Context, stamps map[string]session.Resolution, o Options) (*Result, []json.RawMessage, error) {
	conv := newConverter(len(ctx.Messages)) // the results closing unanswered calls may add a few
	res, err := BuildEach(ctx, stamps, o, func(m Message) { conv.add(m.ContextMessage) })
	if err != nil {
		return nil, nil, err
	}
	return res, conv.done(), nil
}

// build is Build; early false turns off the shortcut of leaveOutEarly, so
// tests can check that it changes nothing.
func build(ctx session.Context, stamps map[string]session.Resolution, o Options, early bool) (*Result, error) {
	p, res, err := fitted(ctx, stamps, o, early)
	if err != nil {
		return nil, err
	}
	res.Messages = make([]Message, 0, p.emitted())
	p.emit(res, func(m Message) { res.Messages = append(res.Messages, m) })
	return res, nil
}

// fitted plans ctx and, with a budget, fits it: all but emitting the result.
func fitted(ctx session.Context, stamps map[string]session.Resolution, o Options, early bool) (*planner, *Result, error) {
	p := plan(ctx, stamps, o)
	p.group()
	res := &Result{ThinkingLevel: ctx.ThinkingLevel, Model: ctx.Model, Budget: o.Budget}
	if o.Budget > 0 {
		p.bound()
		if err := p.fit(res, early); err != nil {
			return nil, nil, err
		}
		if err := p.keepCut(res); err != nil {
			return nil, nil, err
		}
	}
	return p, res, nil
}

// Context returns the built messages as a session.Context, for printing or ForModel.
func (r *Result) Context() session.Context {
	c := session.Context{ThinkingLevel: r.ThinkingLevel, Model: r.Model, Messages: make([]session.ContextMessage, 0, len(r.Messages))}
	for _, m := range r.Messages {
		c.Messages = append(c.Messages, m.ContextMessage)
	}
	return c
}

// ForModel converts the built messages for a model (pi's convertToLlm). It
// converts them a slice at a time rather than copying them all into a Context
// first: for a million messages that copy is 50 MB held beside the result.
func (r *Result) ForModel() []json.RawMessage {
	conv := newConverter(len(r.Messages))
	for _, m := range r.Messages {
		conv.add(m.ContextMessage)
	}
	return conv.done()
}

// converter converts messages for a model (session.ForModel) a chunk of
// forModelChunk at a time, as they are added.
type converter struct {
	out  []json.RawMessage
	part []session.ContextMessage
}

// forModelChunk is how many messages a converter converts at once.
const forModelChunk = 1024

// newConverter returns a converter for about n messages.
func newConverter(n int) *converter {
	return &converter{out: make([]json.RawMessage, 0, n), part: make([]session.ContextMessage, 0, min(max(n, 1), forModelChunk))}
}

func (c *converter) add(m session.ContextMessage) {
	if c.part = append(c.part, m); len(c.part) == cap(c.part) {
		c.out = append(c.out, session.ForModel(c.part)...)
		c.part = c.part[:0]
	}
}

// done converts what is left and returns every message converted.
func (c *converter) done() []json.RawMessage {
	return append(c.out, session.ForModel(c.part)...)
}

// Explain writes, one line each, what was cut, downgraded and left out.
func (r *Result) Explain() string {
	var b strings.Builder
	for _, line := range r.ExplainLines() {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// ExplainLines is Explain as lines, without their newlines. The ids and roles
// in them are as the session has them, so a line can hold a newline of its
// own: a front end prints each as one line (termtext.Line), so that a session
// cannot add a line that seems to be the planner's.
func (r *Result) ExplainLines() []string {
	lines := []string{
		fmt.Sprintf("budget %d tokens, used %d (%d may not be touched)", r.Budget, r.Tokens, r.Protected),
	}
	byLevel := map[session.Level]int{}
	for _, c := range r.Changes {
		byLevel[c.To]++
	}
	lines = append(lines, fmt.Sprintf("%d cut, %d outlined, %d summarized, %s left out", len(r.Cuts), byLevel[session.Outlined], byLevel[session.Summarized], plural(r.LeftOut.Turns, "turn")))
	for _, c := range r.Cuts {
		where := "the session entry"
		if c.Blob != "" {
			where = c.Blob
		}
		lines = append(lines, fmt.Sprintf("cut        %s  tool result %s → %s, full output in %s", c.EntryID, size(c.Bytes), size(c.Kept), where))
	}
	for _, c := range r.Changes {
		lines = append(lines, fmt.Sprintf("%-10s %s  %s %d → %d tokens", c.To, c.EntryID, c.Role, c.Before, c.After))
	}
	if r.LeftOut.Turns > 0 {
		lines = append(lines, fmt.Sprintf("left out   %s (%s, %d tokens), oldest first", plural(r.LeftOut.Turns, "turn"), plural(r.LeftOut.Messages, "message"), r.LeftOut.Tokens))
	}
	for _, id := range r.Closed {
		lines = append(lines, fmt.Sprintf("closed     tool call %s had no result; sent an error result", id))
	}
	for _, id := range r.Orphans {
		lines = append(lines, fmt.Sprintf("orphan     %s  tool result without its call, sent as user text", id))
	}
	return lines
}
