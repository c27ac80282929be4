package window

import (
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// facts is what the planner and Measure read of a decoded message besides its
// texts, so a context of a million messages is not held decoded: a text is
// decoded again only to render an outline or summary of it.
type facts struct {
	role       string
	toolCallID string
	stopReason string
	usage      *session.Usage
	hasText    bool        // Content.Text("") != ""
	calls      []toolBlock // the toolCall blocks, in order
}

// toolBlock is one toolCall block of an assistant message.
type toolBlock struct {
	id, name  string
	arguments jsontext.Value
}

// noFacts are the facts of a message that could not be decoded.
var noFacts facts

// factsOf reads the facts of a decoded message. Most messages have no more
// facts than their role and whether they have text: those share one value.
func factsOf(d session.MessageData) *facts {
	f := facts{role: intern(d.Role), toolCallID: d.ToolCallID, stopReason: intern(d.StopReason), usage: d.Usage, hasText: d.Content.Text("") != ""}
	for _, b := range d.Content.Blocks {
		if b.Type == "toolCall" {
			f.calls = append(f.calls, toolBlock{b.ID, b.Name, jsontext.Value(b.Arguments)})
		}
	}
	if f.toolCallID == "" && f.stopReason == "" && f.usage == nil && f.calls == nil {
		for i := range plainFacts {
			if p := &plainFacts[i]; p.role == f.role && p.hasText == f.hasText {
				return p
			}
		}
	}
	return &f
}

// plainFacts are the facts of messages that have only a role and text or none.
var plainFacts = []facts{
	{role: session.RoleUser, hasText: true}, {role: session.RoleUser},
	{role: session.RoleAssistant, hasText: true}, {role: session.RoleAssistant},
	{role: session.RoleToolResult, hasText: true}, {role: session.RoleToolResult},
}

// intern returns the usual roles and stop reasons as constants, so facts do not
// keep a copy of each.
func intern(s string) string {
	for _, c := range [...]string{session.RoleUser, session.RoleAssistant, session.RoleToolResult, "stop", "toolUse", "error", "aborted", "length"} {
		if c == s {
			return c
		}
	}
	return s
}
