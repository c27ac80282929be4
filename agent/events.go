package agent

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/arborlog/arbor/session"
)

// The events as pi 1.6.0 writes them on its JSON stream (arbor -p --mode
// json) and its RPC mode's stdout: toJsonEvent applied to AgentSessionEvent
// (pi-coding-agent's dist/modes/json-event.d.ts and core/agent-session.d.ts,
// pi-agent-core's AgentEvent, pi-ai's AssistantMessageEvent). Both doors
// encode Event with this MarshalJSON, so the shapes live here once.

// ArborError is the type of arbor's own event for a run that failed in a way
// no message of the run shows (a session file that could not be written, a
// request that could not be built): pi has none, it says so on stderr.
const ArborError = "arbor_error"

// SettledEvent is pi's agent_settled: the session is idle again after a run.
func SettledEvent(aborted bool) Event { return Event{Type: "agent_settled", Aborted: &aborted} }

// ErrorEvent is arbor's arbor_error event for err.
func ErrorEvent(err error, aborted bool) Event {
	return Event{Type: ArborError, ErrorMessage: err.Error(), Aborted: &aborted}
}

// plainEvent is Event without its MarshalJSON: the members that are set.
type plainEvent Event

// MarshalJSON writes the members pi's type of the event has, in pi's order,
// the required ones even when empty or false; message_update carries the
// reply's usage and no partial message, tool_execution_end's result is the
// tool's {content, details} and compaction_end's the CompactionResult.
// arbor_error is {errorMessage, aborted}; any other type is written with the
// members that are set.
func (e Event) MarshalJSON() ([]byte, error) {
	var o object
	o.str("type", e.Type)
	switch e.Type {
	case "agent_start", "turn_start":
	case "agent_end":
		o.list("messages", e.Messages)
		o.boolean("willRetry", e.WillRetry)
	case "agent_settled":
		o.boolean("aborted", e.Aborted)
	case "turn_end":
		o.raw("message", e.Message, "null")
		o.list("toolResults", e.ToolResults)
	case "message_start", "message_end":
		o.raw("message", e.Message, "null")
	case "message_update":
		u := session.Usage{}
		if e.Usage != nil {
			u = *e.Usage
		}
		o.value("usage", u)
		o.value("assistantMessageEvent", e.AssistantMessageEvent)
	case "tool_execution_start", "tool_execution_update", "tool_execution_end":
		o.str("toolCallId", e.ToolCallID)
		o.str("toolName", e.ToolName)
		switch e.Type {
		case "tool_execution_start":
			o.raw("args", e.Args, "{}")
		case "tool_execution_update":
			o.raw("args", e.Args, "{}")
			o.raw("partialResult", e.PartialResult, "null")
		default:
			o.raw("result", toolResultOf(e.Result), "null")
			o.boolean("isError", e.IsError)
			if e.DurationMs != nil {
				o.value("durationMs", *e.DurationMs)
			}
		}
	case "compaction_start":
		o.str("reason", e.Reason)
	case "compaction_end":
		o.str("reason", e.Reason)
		if e.Result != nil { // pi's undefined result is left out
			o.raw("result", compactionResultOf(e.Result), "null")
		}
		o.boolean("aborted", e.Aborted)
		o.boolean("willRetry", e.WillRetry)
		if e.ErrorMessage != "" {
			o.str("errorMessage", e.ErrorMessage)
		}
	case "auto_retry_start":
		o.value("attempt", deref(e.Attempt))
		o.value("maxAttempts", deref(e.MaxAttempts))
		o.value("delayMs", deref(e.DelayMs))
		o.str("errorMessage", e.ErrorMessage)
	case "auto_retry_end":
		o.boolean("success", e.Success)
		o.value("attempt", deref(e.Attempt))
		if e.FinalError != "" {
			o.str("finalError", e.FinalError)
		}
	case "queue_update":
		o.value("steering", orEmpty(e.Steering))
		o.value("followUp", orEmpty(e.FollowUp))
	case "thinking_level_changed":
		o.str("level", e.Level)
	case ArborError:
		o.str("errorMessage", e.ErrorMessage)
		o.boolean("aborted", e.Aborted)
	default:
		return marshal(plainEvent(e))
	}
	return o.bytes()
}

// MarshalJSON writes the members pi's kind of assistantMessageEvent has.
func (d Delta) MarshalJSON() ([]byte, error) {
	var o object
	o.str("type", d.Type)
	o.value("contentIndex", d.ContentIndex)
	switch d.Type {
	case "text_delta", "thinking_delta", "toolcall_delta":
		o.str("delta", d.Delta)
	case "text_end", "thinking_end":
		o.str("content", d.Content)
	case "toolcall_start":
		o.str("id", d.ID)
		o.str("toolName", d.ToolName)
	case "toolcall_end":
		call := session.Block{Type: "toolCall", Arguments: json.RawMessage(`{}`)}
		if d.ToolCall != nil {
			call = *d.ToolCall
		}
		o.value("toolCall", call)
	}
	return o.bytes()
}

// toolResultOf is pi's tool result ({content, details}) of a toolResult
// message; anything else passes as it is.
func toolResultOf(msg json.RawMessage) json.RawMessage {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Details json.RawMessage `json:"details"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Role != session.RoleToolResult {
		return msg
	}
	var o object
	o.raw("content", m.Content, "[]")
	o.raw("details", m.Details, "{}")
	b, err := o.bytes()
	if err != nil {
		return msg
	}
	return b
}

// compactionResultOf is pi's CompactionResult of a compaction entry;
// anything else passes as it is.
func compactionResultOf(entry json.RawMessage) json.RawMessage {
	var c struct {
		Type             string          `json:"type"`
		Summary          string          `json:"summary"`
		FirstKeptEntryID string          `json:"firstKeptEntryId"`
		TokensBefore     json.RawMessage `json:"tokensBefore"`
		Usage            json.RawMessage `json:"usage"`
		Details          json.RawMessage `json:"details"`
	}
	if json.Unmarshal(entry, &c) != nil || c.Type != session.TypeCompaction {
		return entry
	}
	var o object
	o.str("summary", c.Summary)
	o.str("firstKeptEntryId", c.FirstKeptEntryID)
	o.raw("tokensBefore", c.TokensBefore, "0")
	if len(c.Usage) > 0 && string(c.Usage) != "null" {
		o.raw("usage", c.Usage, "")
	}
	if len(c.Details) > 0 && string(c.Details) != "null" {
		o.raw("details", c.Details, "")
	}
	b, err := o.bytes()
	if err != nil {
		return entry
	}
	return b
}

// object writes a JSON object a member at a time, in the order given.
type object struct {
	b   []byte
	err error
}

func (o *object) key(name string) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

func (o *object) value(name string, v any) {
	b, err := marshal(v)
	if err != nil {
		o.err = err
		return
	}
	o.key(name)
	o.b = append(o.b, b...)
}

func (o *object) str(name, v string) { o.value(name, v) }

func (o *object) boolean(name string, v *bool) { o.value(name, v != nil && *v) }

// raw writes v as it is, or empty (a JSON literal) when v is unset.
func (o *object) raw(name string, v json.RawMessage, empty string) {
	if len(v) == 0 {
		v = json.RawMessage(empty)
	}
	o.key(name)
	o.b = append(o.b, v...)
}

// list writes a list that is never null.
func (o *object) list(name string, vs []json.RawMessage) {
	o.key(name)
	o.b = append(o.b, '[')
	for i, v := range vs {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = append(o.b, v...)
	}
	o.b = append(o.b, ']')
}

func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return append(o.b, '}'), nil
}

// marshal is json.Marshal without HTML escaping, as pi's JSON.stringify.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func orEmpty(p *[]string) []string {
	if p == nil || *p == nil {
		return []string{}
	}
	return *p
}

// reply follows one streamed reply and emits pi's events for it:
// message_start (the empty reply) at its first piece, then a message_update
// for each piece, with the *_start and *_end pi's providers send around every
// content block, and the usage so far.
type reply struct {
	a       *Agent
	started bool
	open    int                   // the block being streamed, -1 before the first
	kinds   map[int]string        // text, thinking or toolcall, by content index
	text    map[int]*bytes.Buffer // its text or argument JSON so far
	calls   map[int]*session.Block
	usage   session.Usage
}

func (a *Agent) newReply() *reply {
	return &reply{a: a, open: -1, kinds: map[int]string{}, text: map[int]*bytes.Buffer{}, calls: map[int]*session.Block{}}
}

func (r *reply) on(d Delta) {
	if !r.started {
		r.started = true
		start := session.Assistant{Content: []session.Block{}, API: r.a.Provider.API(), Provider: r.a.Model.Provider,
			Model: r.a.Model.ID, StopReason: session.StopEnd, Timestamp: r.a.now().UnixMilli()}
		r.a.emit(Event{Type: "message_start", Message: json.RawMessage(start.Message().Raw())})
	}
	r.usage = d.Usage
	if u := &r.usage; u.TotalTokens == 0 {
		u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	r.usage.Cost = r.a.Model.Prices.cost(r.usage)
	i := d.ContentIndex
	if i != r.open {
		r.end()
		r.open = i
		// A block the provider goes back to (reasoning between pieces of
		// text) is not started again.
		if _, seen := r.kinds[i]; !seen {
			k, _, _ := strings.Cut(d.Type, "_")
			r.kinds[i], r.text[i] = k, &bytes.Buffer{}
			if k == "toolcall" {
				r.calls[i] = &session.Block{Type: "toolCall", ID: d.ID, Name: d.ToolName}
			} else {
				r.update(Delta{Type: k + "_start", ContentIndex: i})
			}
		}
	}
	r.text[i].WriteString(d.Delta)
	r.update(d)
}

func (r *reply) update(d Delta) {
	u := r.usage
	r.a.emit(Event{Type: "message_update", AssistantMessageEvent: &d, Usage: &u})
}

// end sends the end of the open block.
func (r *reply) end() {
	i := r.open
	if i < 0 {
		return
	}
	r.open = -1
	if k := r.kinds[i]; k != "toolcall" {
		r.update(Delta{Type: k + "_end", ContentIndex: i, Content: r.text[i].String()})
		return
	}
	c := *r.calls[i]
	c.Arguments, c.ArgumentsError = arguments(r.text[i].String())
	r.update(Delta{Type: "toolcall_end", ContentIndex: i, ToolCall: &c})
}

// finish closes the last block of a reply that completed; pi's providers
// send no *_end for a reply that failed or was aborted.
func (r *reply) finish(asst *session.Assistant, err error) {
	if err != nil || !r.started {
		return
	}
	// A call's id and name may come after its first piece (OpenAI's
	// chunks); the reply has them.
	for i, c := range r.calls {
		if i < len(asst.Content) && asst.Content[i].Type == "toolCall" {
			c.ID, c.Name = asst.Content[i].ID, asst.Content[i].Name
		}
	}
	r.end()
}
