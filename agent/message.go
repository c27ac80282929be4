package agent

import (
	"encoding/json"
	"strings"

	"github.com/arborlog/arbor/session"
)

// Stop reasons of an assistant message (pi's).
const (
	StopEnd     = "stop"
	StopLength  = "length"
	StopToolUse = "toolUse"
	StopError   = "error"
	StopAborted = "aborted"
)

// Block is one content block of a message, in pi's shape: text, thinking
// (with the provider's signature, needed to send it back), toolCall or image.
type Block struct {
	Type              string          `json:"type"`
	Text              string          `json:"text,omitempty"`
	Thinking          string          `json:"thinking,omitempty"`
	ThinkingSignature string          `json:"thinkingSignature,omitempty"`
	ID                string          `json:"id,omitempty"`
	Name              string          `json:"name,omitempty"`
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	Data              string          `json:"data,omitempty"`
	MimeType          string          `json:"mimeType,omitempty"`

	// argError says why a streamed call's arguments were not a JSON object
	// (Arguments is then {}); the call is answered with it as an error.
	argError string
}

// Assistant is an assistant message as pi stores it.
type Assistant struct {
	Role         string        `json:"role"`
	Content      []Block       `json:"content"`
	API          string        `json:"api"`
	Provider     string        `json:"provider"`
	Model        string        `json:"model"`
	Usage        session.Usage `json:"usage"`
	StopReason   string        `json:"stopReason"`
	ErrorMessage string        `json:"errorMessage,omitempty"`
	Timestamp    int64         `json:"timestamp"`
}

// Text is the message's text blocks joined.
func (a *Assistant) Text() string {
	var parts []string
	for _, b := range a.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "")
}

// ToolCalls returns the message's toolCall blocks.
func (a *Assistant) ToolCalls() []Block {
	var out []Block
	for _, b := range a.Content {
		if b.Type == "toolCall" {
			out = append(out, b)
		}
	}
	return out
}

// User is a user message as pi stores a prompt.
type User struct {
	Role      string  `json:"role"`
	Content   []Block `json:"content"`
	Timestamp int64   `json:"timestamp"`
}

// ToolResult is a tool's answer to one call, as pi stores it.
type ToolResult struct {
	Role       string  `json:"role"`
	ToolCallID string  `json:"toolCallId"`
	ToolName   string  `json:"toolName"`
	Content    []Block `json:"content"`
	Details    any     `json:"details,omitempty"`
	IsError    bool    `json:"isError"`
	Timestamp  int64   `json:"timestamp"`
}

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
type Content []Block

// UnmarshalJSON accepts pi's two content shapes.
func (c *Content) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var bs []Block
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
			if m.StopReason == StopError || m.StopReason == StopAborted {
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
