package window

import (
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// facts is what the planner and Measure read of a decoded message besides its
// texts, so a context of a million messages is not held decoded: a text is
// decoded again only to render an outline or summary of it. It is 48 bytes,
// for the many tool calls and results that cannot share one.
type facts struct {
	toolCallID string
	calls      []toolBlock // the toolCall blocks, in order
	assistant  bool        // the role is assistant
	hasUsage   bool        // a usage is recorded (Message.usage decodes it when asked)
	hasText    bool        // Content.Text("") != ""
	failed     bool        // stopped by an error or an abort
	counts     bool        // the usage counts tokens (pi's calculateContextTokens > 0)
}

// toolBlock is one toolCall block of an assistant message.
type toolBlock struct {
	id string
	call
}

// noFacts are the facts of a message that could not be decoded.
var noFacts facts

// factsOf reads the facts of a decoded message. Most messages have no facts
// but four flags: those share one value.
func factsOf(d session.MessageData) *facts {
	f := facts{toolCallID: d.ToolCallID, assistant: d.Role == session.RoleAssistant, hasUsage: d.Usage != nil,
		hasText: d.Content.Text("") != "", failed: d.StopReason == "error" || d.StopReason == "aborted",
		counts: d.Usage != nil && contextTokens(*d.Usage) > 0}
	f.calls = appendCalls(nil, d)
	if f.toolCallID == "" && f.calls == nil {
		return &plainFacts[plainIndex(f)]
	}
	return &f
}

// plainIndex is the index in plainFacts of the facts f, which have no tool
// call id and no tool calls.
func plainIndex(f facts) int {
	return (((b2i(f.assistant)*2+b2i(f.hasUsage))*2+b2i(f.hasText))*2+b2i(f.failed))*2 + b2i(f.counts)
}

// plainFacts holds the facts of every message without a tool call id or
// tool calls, at plainIndex.
var plainFacts = func() []facts {
	out := make([]facts, 32)
	for i := range out {
		f := facts{assistant: i&16 != 0, hasUsage: i&8 != 0, hasText: i&4 != 0, failed: i&2 != 0, counts: i&1 != 0}
		out[plainIndex(f)] = f
	}
	return out
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendCalls appends the toolCall blocks of d to dst.
func appendCalls(dst []toolBlock, d session.MessageData) []toolBlock {
	for _, b := range d.Content.Blocks {
		if b.Type == "toolCall" {
			dst = append(dst, toolBlock{b.ID, call{b.Name, jsontext.Value(b.Arguments)}})
		}
	}
	return dst
}
