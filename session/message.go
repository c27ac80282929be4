package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Message roles (SPEC §4). branchSummary and compactionSummary exist only in a built context.
const (
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
)

// KnownRole reports whether pi writes messages with this role to a session
// file: the roles above but the two that exist only in a built context, and
// "system" (pi 1.6.0's system prompt and tool checkpoints).
func KnownRole(role string) bool {
	switch role {
	case RoleUser, RoleAssistant, RoleToolResult, RoleBashExecution, RoleCustom, "system":
		return true
	}
	return false
}

// Message is one message as the JSON it was read or built as. Fields arbor does
// not know survive every read, copy and write unchanged.
type Message struct {
	Role  string
	raw   []byte
	stamp int8 // whether the object has a "timestamp" member, when the fast scan saw it (stampUnknown otherwise)
}

const (
	stampUnknown int8 = iota
	stampPresent
	stampAbsent
)

// ErrNoRole is returned for a message without a string role.
var ErrNoRole = errors.New("session: message has no role")

// ParseMessage checks that raw is a JSON object with a string role and keeps it as it is.
func ParseMessage(raw []byte) (Message, error) {
	if role, stamped, ok := plainRole(raw); ok {
		m := Message{Role: role, raw: raw, stamp: stampAbsent}
		if stamped {
			m.stamp = stampPresent
		}
		return m, nil
	}
	if !validJSON(raw) {
		return Message{}, errors.New("session: message is not valid JSON")
	}
	var v struct {
		Role jsontext.Value `json:"role"`
	}
	if err := unmarshal(raw, &v); err != nil {
		return Message{}, fmt.Errorf("session: message is not a JSON object: %w", err)
	}
	role, ok := jsonString(v.Role)
	if !ok || role == "" {
		return Message{}, ErrNoRole
	}
	return Message{Role: role, raw: raw}, nil
}

// WithTimestamp returns the message with a "timestamp" member of ms
// (milliseconds since the epoch, as pi writes it) added at its end when it has
// none; the message's other bytes stay as they are.
func (m Message) WithTimestamp(ms int64) Message {
	switch m.stamp {
	case stampPresent:
		return m
	case stampUnknown:
		var v struct {
			Timestamp jsontext.Value `json:"timestamp"`
		}
		if err := unmarshal(m.raw, &v); err == nil && len(v.Timestamp) > 0 {
			return m
		}
	}
	end := strings.LastIndexByte(string(m.raw), '}')
	if end < 0 {
		return m
	}
	raw := make([]byte, 0, len(m.raw)+32)
	raw = append(raw, m.raw[:end]...)
	raw = append(raw, fmt.Sprintf(",\"timestamp\":%d}", ms)...)
	return Message{Role: m.Role, raw: raw, stamp: stampPresent}
}

// NewMessage encodes v (a MessageData, a map or any struct) as a message.
func NewMessage(v any) (Message, error) {
	raw, err := marshal(v)
	if err != nil {
		return Message{}, fmt.Errorf("session: encode message: %w", err)
	}
	return ParseMessage(raw)
}

// Raw returns the message's JSON object. The caller must not modify it.
func (m Message) Raw() []byte { return m.raw }

// Data decodes the message's fields.
func (m Message) Data() (MessageData, error) {
	if d, ok := ScanMessageData(m.raw); ok { // a plain message: one walk, no decoder
		return d, nil
	}
	var d MessageData
	if err := unmarshal(m.raw, &d); err == nil {
		return d, nil
	}
	// A field of an unexpected type: read the others one by one, as a
	// JavaScript reader would carry on past it.
	d = MessageData{}
	ms, err := objectMembers(m.raw)
	if err != nil {
		return d, fmt.Errorf("session: decode %s message: %w", m.Role, err)
	}
	for _, mb := range ms {
		_ = unmarshal(buildObject([]member{mb}), &d)
	}
	return d, nil
}

// MessageData is a decoded message. Fields that do not belong to its role are zero.
type MessageData struct {
	Role      string  `json:"role"`
	Content   Content `json:"content,omitzero"`
	Timestamp float64 `json:"timestamp,omitzero"` // Unix milliseconds

	// assistant
	API          string `json:"api,omitzero"`
	Provider     string `json:"provider,omitzero"`
	Model        string `json:"model,omitzero"`
	Usage        *Usage `json:"usage,omitzero"`
	StopReason   string `json:"stopReason,omitzero"`
	ErrorMessage string `json:"errorMessage,omitzero"`

	// toolResult
	ToolCallID string          `json:"toolCallId,omitzero"`
	ToolName   string          `json:"toolName,omitzero"`
	IsError    bool            `json:"isError,omitzero"`
	Details    json.RawMessage `json:"details,omitzero"`

	// bashExecution
	Command            string   `json:"command,omitzero"`
	Output             string   `json:"output,omitzero"`
	ExitCode           *float64 `json:"exitCode,omitzero"`
	Cancelled          bool     `json:"cancelled,omitzero"`
	Truncated          bool     `json:"truncated,omitzero"`
	FullOutputPath     string   `json:"fullOutputPath,omitzero"`
	ExcludeFromContext bool     `json:"excludeFromContext,omitzero"`

	// custom
	CustomType string `json:"customType,omitzero"`
	Display    bool   `json:"display,omitzero"`
}

// Usage is the provider's token accounting on an assistant message.
type Usage struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CacheRead   float64 `json:"cacheRead"`
	CacheWrite  float64 `json:"cacheWrite"`
	TotalTokens float64 `json:"totalTokens"`
	Cost        Cost    `json:"cost"`
}

// Cost is the provider's price of one assistant message, in dollars.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Content is a message's content: a plain string or a list of blocks.
type Content struct {
	String   string
	IsString bool
	Blocks   []Block
}

// Block is one content block of a message, in pi's shape: text, image,
// thinking (with the provider's signature, needed to send it back) or toolCall.
// Build them with TextBlock, ImageBlock, ThinkingBlock and ToolCallBlock.
type Block struct {
	Type              string          `json:"type"`
	Text              string          `json:"text,omitzero"`
	TextSignature     string          `json:"textSignature,omitzero"`
	Thinking          string          `json:"thinking,omitzero"`
	ThinkingSignature string          `json:"thinkingSignature,omitzero"`
	Redacted          bool            `json:"redacted,omitzero"` // the thinking was redacted; its payload is in ThinkingSignature
	Data              string          `json:"data,omitzero"`     // an image's base64 bytes
	MimeType          string          `json:"mimeType,omitzero"`
	ID                string          `json:"id,omitzero"`
	Name              string          `json:"name,omitzero"`
	Arguments         json.RawMessage `json:"arguments,omitzero"`
	ThoughtSignature  string          `json:"thoughtSignature,omitzero"`
	// ArgumentsError says why the model's arguments were not a JSON object
	// (Arguments is then {}); the call is answered with it as an error.
	ArgumentsError string `json:"argumentsError,omitzero"`
}

// plainBlock is Block without its MarshalJSON.
type plainBlock Block

// MarshalJSON writes the members pi writes for the block's type, the
// required ones even when empty (a text block's text, a call's arguments).
func (b Block) MarshalJSON() ([]byte, error) {
	var ms []member
	str := func(name, v string) { ms = append(ms, member{name, quoted(v)}) }
	optStr := func(name, v string) {
		if v != "" {
			str(name, v)
		}
	}
	switch b.Type {
	case BlockText:
		str("type", b.Type)
		str("text", b.Text)
		optStr("textSignature", b.TextSignature)
	case BlockThinking:
		str("type", b.Type)
		str("thinking", b.Thinking)
		optStr("thinkingSignature", b.ThinkingSignature)
		if b.Redacted {
			ms = append(ms, member{"redacted", jsontext.Value("true")})
		}
	case BlockImage:
		str("type", b.Type)
		str("data", b.Data)
		str("mimeType", b.MimeType)
	case BlockToolCall:
		str("type", b.Type)
		str("id", b.ID)
		str("name", b.Name)
		args := jsontext.Value(b.Arguments)
		if len(args) == 0 {
			args = jsontext.Value("{}")
		}
		ms = append(ms, member{"arguments", args})
		optStr("thoughtSignature", b.ThoughtSignature)
		optStr("argumentsError", b.ArgumentsError)
	default:
		return marshal(plainBlock(b))
	}
	return buildObject(ms), nil
}

// UnmarshalJSON accepts a string or an array of blocks; anything else leaves the content empty.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	switch jsontext.Value(b).Kind() {
	case '"':
		c.IsString = true
		return unmarshal(b, &c.String)
	case '[':
		var raws []jsontext.Value
		if err := unmarshal(b, &raws); err != nil {
			return err
		}
		for _, r := range raws {
			if blk, ok := parseBlock(r); ok {
				c.Blocks = append(c.Blocks, blk)
			}
		}
	}
	return nil
}

// parseBlock reads a content block field by field, so that a field of an
// unexpected type (which JavaScript would carry along) leaves the others readable.
func parseBlock(r jsontext.Value) (Block, bool) {
	if r.Kind() != '{' {
		return Block{}, false
	}
	var blk Block
	if unmarshal(r, &blk) == nil {
		return blk, true
	}
	var v map[string]jsontext.Value
	if unmarshal(r, &v) != nil {
		return Block{}, false
	}
	str := func(name string) string { s, _ := jsonString(v[name]); return s }
	return Block{Type: str("type"), Text: str("text"), TextSignature: str("textSignature"), Thinking: str("thinking"),
		ThinkingSignature: str("thinkingSignature"), Redacted: string(v["redacted"]) == "true", Data: str("data"),
		MimeType: str("mimeType"), ID: str("id"), Name: str("name"), Arguments: json.RawMessage(v["arguments"]),
		ThoughtSignature: str("thoughtSignature"), ArgumentsError: str("argumentsError")}, true
}

// MarshalJSON writes the string or the block list.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.IsString {
		return marshal(c.String)
	}
	if c.Blocks == nil {
		return []byte("[]"), nil
	}
	return marshal(c.Blocks)
}

// IsZero reports whether the content is absent.
func (c Content) IsZero() bool { return !c.IsString && c.Blocks == nil }

// Text joins the text blocks with sep (or returns the plain string).
func (c Content) Text(sep string) string {
	if c.IsString {
		return c.String
	}
	var parts []string
	for _, b := range c.Blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, sep)
}

// TextContent returns a text content of one string.
func TextContent(s string) Content { return Content{String: s, IsString: true} }
