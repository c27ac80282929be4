package session

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Stop reasons of an assistant message, as pi writes them.
const (
	StopEnd     = "stop"
	StopLength  = "length"
	StopToolUse = "toolUse"
	StopError   = "error"
	StopAborted = "aborted"
)

// Content block types.
const (
	BlockText     = "text"
	BlockThinking = "thinking"
	BlockImage    = "image"
	BlockToolCall = "toolCall"
)

// Image is a picture in a user message or a tool result: base64 data and its
// MIME type (image/png, image/jpeg...).
type Image struct {
	Data     string
	MimeType string
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// ThinkingBlock returns a thinking block with the provider's signature ("" for
// none), which a provider needs to receive the thinking back.
func ThinkingBlock(thinking, signature string) Block {
	return Block{Type: BlockThinking, Thinking: thinking, ThinkingSignature: signature}
}

// ImageBlock returns an image block.
func ImageBlock(img Image) Block {
	return Block{Type: BlockImage, Data: img.Data, MimeType: img.MimeType}
}

// ToolCallBlock returns a toolCall block; args is encoded as the call's
// arguments object (nil: {}). It panics if args cannot be encoded as JSON.
func ToolCallBlock(id, name string, args any) Block {
	b := Block{Type: BlockToolCall, ID: id, Name: name}
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		b.Arguments = a
	case []byte:
		b.Arguments = a
	default:
		b.Arguments = json.RawMessage(mustValue(args))
	}
	return b
}

// User is a user message: a prompt's text and any images, stored as pi stores
// a prompt (a list of one text block, then the images).
type User struct {
	Text      string
	Images    []Image
	Timestamp int64 // Unix milliseconds; 0: the time of the append
}

// Assistant is a model's reply as pi stores it.
type Assistant struct {
	Content      []Block `json:"content"` // text, thinking and toolCall blocks, in the order the model sent them
	API          string  `json:"api"`     // the provider API spoken (anthropic-messages, openai-completions...)
	Provider     string  `json:"provider"`
	Model        string  `json:"model"`
	Usage        Usage   `json:"usage"`
	StopReason   string  `json:"stopReason"`   // StopEnd, StopToolUse...
	ErrorMessage string  `json:"errorMessage"` // why the reply failed, with StopError or StopAborted
	// ThinkingLevel is the thinking level the agent asked for (off, minimal,
	// low, medium, high, xhigh; "" for none), as pi's agent loop records it.
	ThinkingLevel string `json:"thinkingLevel"`
	DurationMs    int64  `json:"durationMs"` // how long the request took; 0: not recorded
	Timestamp     int64  `json:"timestamp"`  // Unix milliseconds; 0: the time of the append
}

// Text returns the reply's text blocks joined.
func (a Assistant) Text() string { return Content{Blocks: a.Content}.Text("") }

// ToolCalls returns the reply's toolCall blocks.
func (a Assistant) ToolCalls() []Block {
	var out []Block
	for _, b := range a.Content {
		if b.Type == BlockToolCall {
			out = append(out, b)
		}
	}
	return out
}

// ToolResult is a tool's answer to one call. It always records isError, as
// pi's agent loop does.
type ToolResult struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    []Block         `json:"content"` // text and image blocks
	Details    json.RawMessage `json:"details"` // a JSON value for the front end, never sent to the model; nil: none
	IsError    bool            `json:"isError"`
	DurationMs int64           `json:"durationMs"` // how long the tool ran; 0: not recorded
	Timestamp  int64           `json:"timestamp"`  // Unix milliseconds; 0: the time of the append
}

// BashExecution is a command the user ran themselves (pi's "!cmd"), with its
// output; the model sees it as a user message unless ExcludeFromContext.
type BashExecution struct {
	Command            string `json:"command"`
	Output             string `json:"output"`
	ExitCode           *int   `json:"exitCode"` // nil when the command did not finish (cancelled)
	Cancelled          bool   `json:"cancelled"`
	Truncated          bool   `json:"truncated"`
	FullOutputPath     string `json:"fullOutputPath"`     // where the whole output was saved when Truncated ("" for none)
	ExcludeFromContext bool   `json:"excludeFromContext"` // pi's "!!cmd": kept in the session, not sent to the model
	Timestamp          int64  `json:"timestamp"`          // Unix milliseconds; 0: the time of the append
}

// stamped returns ms, or the time of now when ms is 0.
func stamped(ms int64, now time.Time) int64 {
	if ms != 0 {
		return ms
	}
	return now.UnixMilli()
}

func (u User) members(ms int64) []member {
	blocks := make([]Block, 0, 1+len(u.Images))
	blocks = append(blocks, TextBlock(u.Text))
	for _, img := range u.Images {
		blocks = append(blocks, ImageBlock(img))
	}
	return []member{{"role", quoted(RoleUser)}, {"content", mustValue(blocks)}, {"timestamp", mustValue(ms)}}
}

func (a Assistant) members(ms int64) []member {
	content := a.Content
	if content == nil {
		content = []Block{}
	}
	out := []member{{"role", quoted(RoleAssistant)}, {"content", mustValue(content)},
		{"api", quoted(a.API)}, {"provider", quoted(a.Provider)}, {"model", quoted(a.Model)},
		{"usage", mustValue(a.Usage)}, {"stopReason", quoted(a.StopReason)}}
	if a.ErrorMessage != "" {
		out = append(out, member{"errorMessage", quoted(a.ErrorMessage)})
	}
	out = append(out, member{"timestamp", mustValue(ms)})
	if a.DurationMs != 0 {
		out = append(out, member{"durationMs", mustValue(a.DurationMs)})
	}
	if a.ThinkingLevel != "" {
		out = append(out, member{"thinkingLevel", quoted(a.ThinkingLevel)})
	}
	return out
}

func (r ToolResult) members(ms int64) []member {
	content := r.Content
	if content == nil {
		content = []Block{}
	}
	out := []member{{"role", quoted(RoleToolResult)}, {"toolCallId", quoted(r.ToolCallID)},
		{"toolName", quoted(r.ToolName)}, {"content", mustValue(content)}}
	if len(r.Details) > 0 && string(r.Details) != "null" { // pi leaves an undefined details out
		out = append(out, member{"details", jsontext.Value(r.Details)})
	}
	out = append(out, member{"isError", mustValue(r.IsError)})
	if r.DurationMs != 0 {
		out = append(out, member{"durationMs", mustValue(r.DurationMs)})
	}
	return append(out, member{"timestamp", mustValue(ms)})
}

func (b BashExecution) members(ms int64) []member {
	out := []member{{"role", quoted(RoleBashExecution)}, {"command", quoted(b.Command)}, {"output", quoted(b.Output)}}
	if b.ExitCode != nil {
		out = append(out, member{"exitCode", mustValue(*b.ExitCode)})
	}
	out = append(out, member{"cancelled", mustValue(b.Cancelled)}, member{"truncated", mustValue(b.Truncated)})
	if b.FullOutputPath != "" {
		out = append(out, member{"fullOutputPath", quoted(b.FullOutputPath)})
	}
	out = append(out, member{"timestamp", mustValue(ms)})
	if b.ExcludeFromContext {
		out = append(out, member{"excludeFromContext", mustValue(true)})
	}
	return out
}

// typedMessage is one of the message types above.
type typedMessage interface {
	members(ms int64) []member
	stamp() int64 // the timestamp asked for (0: the append's time)
}

func (u User) stamp() int64          { return u.Timestamp }
func (a Assistant) stamp() int64     { return a.Timestamp }
func (r ToolResult) stamp() int64    { return r.Timestamp }
func (b BashExecution) stamp() int64 { return b.Timestamp }

func messageOf(m typedMessage, now time.Time) Message {
	raw := buildObject(m.members(stamped(m.stamp(), now)))
	msg, err := ParseMessage(raw)
	if err != nil {
		panic(fmt.Sprintf("session: built message does not parse: %v", err))
	}
	return msg
}

// MarshalJSON writes the message as pi stores it (Timestamp 0: now); the
// struct tags read it back.
func (a Assistant) MarshalJSON() ([]byte, error) { return a.Message().Raw(), nil }

// MarshalJSON writes the message as pi stores it (Timestamp 0: now).
func (r ToolResult) MarshalJSON() ([]byte, error) { return r.Message().Raw(), nil }

// MarshalJSON writes the message as pi stores it (Timestamp 0: now).
func (b BashExecution) MarshalJSON() ([]byte, error) { return b.Message().Raw(), nil }

// Message returns the user message as it would be appended (Timestamp 0: now).
func (u User) Message() Message { return messageOf(u, time.Now()) }

// Message returns the reply as it would be appended (Timestamp 0: now).
func (a Assistant) Message() Message { return messageOf(a, time.Now()) }

// Message returns the tool result as it would be appended (Timestamp 0: now).
func (r ToolResult) Message() Message { return messageOf(r, time.Now()) }

// Message returns the bash execution as it would be appended (Timestamp 0: now).
func (b BashExecution) Message() Message { return messageOf(b, time.Now()) }

// appendTyped appends a typed message whose timestamp, when not given, is the
// entry's own time.
func (c *Cursor) appendTyped(m typedMessage) (*Entry, error) {
	return c.l.locked(func() (*Entry, error) {
		return c.l.appendWith(c.cid(), TypeMessage, nil, func(e *Entry) []member {
			ms := m.stamp()
			if ms == 0 {
				if t := jsTime(e.Timestamp); !math.IsNaN(t) {
					ms = int64(t)
				}
			}
			return []member{{"message", buildObject(m.members(ms))}}
		})
	})
}

// AppendUser appends a user message of text and images.
func (c *Cursor) AppendUser(text string, images ...Image) (*Entry, error) {
	return c.appendTyped(User{Text: text, Images: images})
}

// AppendAssistant appends a model's reply.
func (c *Cursor) AppendAssistant(a Assistant) (*Entry, error) { return c.appendTyped(a) }

// AppendToolResult appends a tool's answer to a call.
func (c *Cursor) AppendToolResult(r ToolResult) (*Entry, error) { return c.appendTyped(r) }

// AppendBashExecution appends a command the user ran and its output.
func (c *Cursor) AppendBashExecution(b BashExecution) (*Entry, error) { return c.appendTyped(b) }

// AppendUser appends a user message on the active cursor.
func (l *Log) AppendUser(text string, images ...Image) (*Entry, error) {
	return l.Cursor("").AppendUser(text, images...)
}

// AppendAssistant appends a model's reply on the active cursor.
func (l *Log) AppendAssistant(a Assistant) (*Entry, error) { return l.Cursor("").AppendAssistant(a) }

// AppendToolResult appends a tool's answer on the active cursor.
func (l *Log) AppendToolResult(r ToolResult) (*Entry, error) { return l.Cursor("").AppendToolResult(r) }

// AppendBashExecution appends a user's command and its output on the active cursor.
func (l *Log) AppendBashExecution(b BashExecution) (*Entry, error) {
	return l.Cursor("").AppendBashExecution(b)
}

// CustomMessage is a custom_message entry read back: an extension's message
// that reaches the model (as a user message) when it is on the branch.
type CustomMessage struct {
	Entry      *Entry
	CustomType string
	Content    Content
	Display    bool            // whether front ends show it
	Details    json.RawMessage // nil when the entry has none
}

// CustomState returns the data of the latest custom entry of customType on
// the cursor's branch (nil when it has no data), and whether there is one.
func (c *Cursor) CustomState(customType string) (json.RawMessage, bool) {
	for _, e := range slices.Backward(c.branch()) {
		if e.Type == TypeCustom && e.customType() == customType {
			ms, _ := objectMembers(e.raw)
			data, _ := find(ms, "data")
			if len(data) == 0 {
				return nil, true
			}
			return json.RawMessage(data), true
		}
	}
	return nil, false
}

// CustomMessages returns the custom messages of customType on the cursor's
// branch, oldest first.
func (c *Cursor) CustomMessages(customType string) []CustomMessage {
	var out []CustomMessage
	for _, e := range c.branch() {
		if e.Type != TypeCustomMessage {
			continue
		}
		var v struct {
			CustomType string         `json:"customType"`
			Content    Content        `json:"content"`
			Display    bool           `json:"display"`
			Details    jsontext.Value `json:"details"`
		}
		if unmarshal(e.raw, &v) != nil || v.CustomType != customType {
			continue
		}
		cm := CustomMessage{Entry: e, CustomType: v.CustomType, Content: v.Content, Display: v.Display}
		if len(v.Details) > 0 && v.Details.Kind() != 'n' {
			cm.Details = json.RawMessage(v.Details)
		}
		out = append(out, cm)
	}
	return out
}

// CustomState is Cursor.CustomState on the active cursor.
func (l *Log) CustomState(customType string) (json.RawMessage, bool) {
	return l.Cursor("").CustomState(customType)
}

// CustomMessages is Cursor.CustomMessages on the active cursor.
func (l *Log) CustomMessages(customType string) []CustomMessage {
	return l.Cursor("").CustomMessages(customType)
}

// branch is the cursor's path from the root to its leaf.
func (c *Cursor) branch() []*Entry {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	cur, ok := c.l.cursors[c.cid()]
	if !ok {
		return nil
	}
	return entriesOf(c.l.path(cur.leaf))
}

// AsBlocks returns the content as blocks: a plain string is one text block.
func (c Content) AsBlocks() []Block {
	if c.IsString {
		return []Block{TextBlock(c.String)}
	}
	return c.Blocks
}

// Data decodes the message's fields.
func (m ContextMessage) Data() (MessageData, error) {
	msg, err := ParseMessage(m.Raw)
	if err != nil {
		return MessageData{}, err
	}
	return msg.Data()
}
