package agent

import (
	"encoding/json"
	"strings"

	"github.com/arborlog/arbor/session"
)

// Message is one message of a request, decoded from the context converted for
// the model (session.ForModel): user, assistant or toolResult.
type Message struct {
	Role       string  `json:"role"`
	Content    Content `json:"content"`
	StopReason string  `json:"stopReason"`
	ToolCallID string  `json:"toolCallId"`
	ToolName   string  `json:"toolName"`
	IsError    bool    `json:"isError"`
}

// Content is a string or a list of blocks, read as blocks.
type Content []session.Block

// UnmarshalJSON accepts pi's two content shapes.
func (c *Content) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = Content{session.TextBlock(s)}
		return nil
	}
	var bs []session.Block
	if err := json.Unmarshal(b, &bs); err != nil {
		*c = nil
		return nil
	}
	*c = bs
	return nil
}

// Text joins the text blocks.
func (c Content) Text() string {
	var parts []string
	for _, b := range c {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// messagesForRequest decodes the converted context and drops what providers
// refuse, as pi does: assistant messages that ended in an error or were aborted
// (with their tool calls), and tool results whose call is not in the request.
func messagesForRequest(raw [][]byte) []Message {
	var out []Message
	calls := map[string]bool{}
	for _, r := range raw {
		var m Message
		if json.Unmarshal(r, &m) != nil {
			continue
		}
		switch m.Role {
		case session.RoleAssistant:
			if m.StopReason == session.StopError || m.StopReason == session.StopAborted {
				continue
			}
			for _, b := range m.Content {
				if b.Type == "toolCall" {
					calls[b.ID] = true
				}
			}
		case session.RoleToolResult:
			if !calls[m.ToolCallID] {
				continue
			}
		case session.RoleUser:
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}
