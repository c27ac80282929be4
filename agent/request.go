package agent

import (
	"encoding/json"
	"iter"
	"slices"

	"github.com/arborlog/arbor/session"
)

// Request is one model request.
type Request struct {
	Model  string
	System string
	// Messages are the conversation as the model gets it, pi's JSON messages
	// (session.ForModel: user, assistant, toolResult). Providers read them
	// with Decoded, one at a time, so a long session is never held decoded.
	// The agent's own requests without a budget leave it empty: their
	// messages are made from the log as they are sent (Raw and Decoded give
	// them).
	Messages  []json.RawMessage
	Tools     []ToolSpec
	Thinking  string // off, minimal, low, medium, high, xhigh
	MaxTokens int
	NoRetry   bool // send once: no retry of a 429, 5xx or lost connection
	retry     *retryGate
	// checked: Messages are JSON already checked (the agent's history, read
	// from its log or made by it), so Decoded does not check them again.
	checked bool
	// each, when set, yields the messages in place of Messages, each with
	// what the session's scanner read of it when it did (valid until the
	// next), so that Decoded reads each message once.
	each func(yield func(json.RawMessage, *session.MessageData) bool)
}

// Raw yields the messages as pi's JSON: Messages, or those the agent makes as
// the request is sent.
func (r Request) Raw() iter.Seq[json.RawMessage] {
	return func(yield func(json.RawMessage) bool) {
		for raw := range r.messages() {
			if !yield(raw) {
				return
			}
		}
	}
}

// messages yields each message with what was read of it, if anything.
func (r Request) messages() iter.Seq2[json.RawMessage, *session.MessageData] {
	if r.each != nil {
		return r.each
	}
	return func(yield func(json.RawMessage, *session.MessageData) bool) {
		for _, raw := range r.Messages {
			if !yield(raw, nil) {
				return
			}
		}
	}
}

// Decoded yields the messages a provider sends, each decoded when it is
// reached, without what providers refuse, as pi drops it: assistant messages
// that ended in an error or were aborted (with their tool calls), tool results
// whose call is not in the request, other roles and messages that do not
// decode. It can be ranged over again (a retried request sends it again).
// A message's content blocks are valid until the next message is yielded
// (one list is reused for all), its strings for good.
func (r Request) Decoded() iter.Seq[session.MessageData] {
	return func(yield func(session.MessageData) bool) {
		var calls sentCalls
		var sc session.MessageScanner
		for raw, read := range r.messages() {
			// What msg.Data reads first, into the one list; on checked JSON
			// it succeeds only where ParseMessage would.
			m, ok := session.MessageData{}, false
			switch {
			case read != nil:
				m, ok = *read, true
			case r.checked:
				m, ok = sc.Scan(raw)
			}
			if !ok {
				msg, err := session.ParseMessage(raw)
				if err != nil {
					continue
				}
				if m, ok = sc.Scan(raw); !ok {
					if m, err = msg.Data(); err != nil {
						continue
					}
				}
			}
			switch m.Role {
			case session.RoleAssistant:
				if m.StopReason == session.StopError || m.StopReason == session.StopAborted {
					continue
				}
				calls.add(m.Content.AsBlocks())
			case session.RoleToolResult:
				if !calls.has(m.ToolCallID) {
					continue
				}
			case session.RoleUser:
			default:
				continue
			}
			if !yield(m) {
				return
			}
		}
	}
}

// sentCalls are the ids of the tool calls of the assistant messages sent so
// far. A result mostly answers the last of them, so only its calls are looked
// through first; the ids of all are indexed only when a result answers an
// earlier one (a million calls are not hashed for a history whose results
// follow their calls).
type sentCalls struct {
	last  []string        // the last assistant message's
	older []string        // the others', until index is made
	index map[string]bool // of older, once a result is not an answer to last
}

// add records the calls among an assistant message's blocks.
func (c *sentCalls) add(blocks []session.Block) {
	if c.index != nil {
		for _, id := range c.last {
			c.index[id] = true
		}
	} else {
		c.older = append(c.older, c.last...)
	}
	c.last = c.last[:0]
	for _, b := range blocks {
		if b.Type == "toolCall" {
			c.last = append(c.last, b.ID)
		}
	}
}

// has says whether a call with id was sent.
func (c *sentCalls) has(id string) bool {
	if slices.Contains(c.last, id) {
		return true
	}
	if c.index == nil {
		c.index = make(map[string]bool, len(c.older))
		for _, o := range c.older {
			c.index[o] = true
		}
		c.older = nil
	}
	return c.index[id]
}

// UserMessage is a user message of text, as Request.Messages holds it.
func UserMessage(text string) json.RawMessage {
	return session.User{Text: text}.Message().Raw()
}
