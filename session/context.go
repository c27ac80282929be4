package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/arborlog/arbor/internal/js"

	"github.com/go-json-experiment/json/jsontext"
)

// Leaf returns the active cursor's leaf entry, or nil before the first entry.
func (l *Log) Leaf() *Entry { return l.Cursor("").Leaf() }

// Leaf returns the cursor's leaf entry, or nil before the first entry.
func (c *Cursor) Leaf() *Entry {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	cur, ok := c.l.cursors[c.cid()]
	if !ok || cur.leaf == nil {
		return nil
	}
	return cur.leaf.e
}

// Entries returns every indexed entry in file order (duplicates of an earlier id are left out).
func (l *Log) Entries() []*Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Entry(nil), l.entries...)
}

// Len returns the number of indexed entries.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Entry returns the entry with this id, or nil.
func (l *Log) Entry(id string) *Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := l.byID[id]; ok {
		return n.e
	}
	return nil
}

// Children returns the entries whose parent is id, in file order ("" for the roots).
func (l *Log) Children(id string) []*Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ns []*node
	if id == "" {
		ns = l.roots
	} else if n, ok := l.byID[id]; ok {
		ns = n.kids()
	}
	out := make([]*Entry, len(ns))
	for i, n := range ns {
		out[i] = n.e
	}
	return out
}

// PathTo returns the path from the root to the entry id, inclusive ("" for the
// active cursor's leaf). It is empty for an unknown id.
func (l *Log) PathTo(id string) []*Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return entriesOf(l.path(l.start(id)))
}

func (l *Log) start(id string) *node {
	if id == "" {
		return l.cursors[l.active].leaf
	}
	return l.byID[id]
}

// path returns root→n.
func (l *Log) path(n *node) []*node {
	depth := 0
	for m := n; m != nil; m = m.parent {
		depth++
	}
	if depth == 0 {
		return nil
	}
	// Counted first: the path of a million-entry chain is one allocation.
	p := make([]*node, depth)
	for i := depth - 1; n != nil; n, i = n.parent, i-1 {
		p[i] = n
	}
	return p
}

func entriesOf(ns []*node) []*Entry {
	out := make([]*Entry, len(ns))
	for i, n := range ns {
		out[i] = n.e
	}
	return out
}

// Label returns the label of an entry ("" if none).
func (l *Log) Label(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.labels[id].label
}

// SessionName returns the session name: the latest session_info in the file, trimmed.
func (l *Log) SessionName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.name
}

// Context is what the model sees from one leaf (SPEC §6.4).
type Context struct {
	Messages      []ContextMessage
	ThinkingLevel json.RawMessage // usually a string; passed through as stored
	Model         *Model
}

// Model names the provider and model in force at the leaf.
type Model struct {
	Provider json.RawMessage `json:"provider,omitzero"`
	ModelID  json.RawMessage `json:"modelId,omitzero"`
}

// ContextMessage is one message of a context with the entry it came from.
type ContextMessage struct {
	Role  string
	Entry *Entry
	Raw   []byte // the message's JSON object
}

// MarshalJSON writes {"messages":[…],"thinkingLevel":…,"model":…}, each message as stored.
func (c Context) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := c.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteJSON streams the context's JSON to w without building it in memory first.
func (c Context) WriteJSON(w interface {
	Write([]byte) (int, error)
	WriteString(string) (int, error)
}) error {
	w.WriteString(`{"messages":[`)
	for i, m := range c.Messages {
		if i > 0 {
			w.WriteString(",")
		}
		w.Write(m.Raw)
	}
	w.WriteString(`]`)
	if len(c.ThinkingLevel) > 0 {
		w.WriteString(`,"thinkingLevel":`)
		w.Write(c.ThinkingLevel)
	}
	w.WriteString(`,"model":`)
	if c.Model == nil {
		w.WriteString("null")
	} else {
		w.Write(mustValue(c.Model))
	}
	_, err := w.WriteString("}")
	return err
}

// Context builds the active cursor's context.
func (l *Log) Context() Context { return l.Cursor("").Context() }

// Context builds this cursor's context.
func (c *Cursor) Context() Context {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	cur, ok := c.l.cursors[c.cid()]
	if !ok {
		return emptyContext()
	}
	return c.l.buildContext(cur.leaf)
}

// ContextAt builds the context from any entry. A nil leaf gives the empty
// context; an unknown id falls back to the last entry in the file, as pi does.
func (l *Log) ContextAt(leaf *string) Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if leaf == nil {
		return emptyContext()
	}
	n, ok := l.byID[*leaf]
	if !ok && len(l.entries) > 0 {
		n = l.byID[l.entries[len(l.entries)-1].ID]
	}
	return l.buildContext(n)
}

func emptyContext() Context { return Context{ThinkingLevel: json.RawMessage(`"off"`)} }

// buildContext is pi 1.6.0's buildSessionContext: the projection's messages.
// It does not record each entry's part of them (for a million entries, 40 MB
// made only to be dropped).
func (l *Log) buildContext(leaf *node) Context {
	if leaf == nil {
		return emptyContext()
	}
	return projectPath(entriesOf(l.path(leaf)), "", false).Context()
}

// add appends what an entry contributes to the context, if anything.
func (ctx *Context) add(e *Entry) {
	switch e.Type {
	case TypeMessage:
		if raw := e.messageRaw(); raw != nil {
			ctx.Messages = append(ctx.Messages, ContextMessage{Role: e.msgRole(), Entry: e, Raw: raw})
		}
	case TypeCustomMessage:
		ms, err := objectMembers(e.raw)
		if err != nil {
			return
		}
		out := []member{{"role", mustValue(RoleCustom)}}
		for _, f := range []string{"customType", "content", "display", "details"} {
			v, _ := find(ms, f)
			if f == "content" && (len(v) == 0 || v.Kind() == 'n') {
				v = jsontext.Value("[]") // pi 1.6.0: entry.content ?? []
			}
			out = append(out, member{f, v})
		}
		out = append(out, member{"timestamp", jsMillis(e.Timestamp)})
		ctx.Messages = append(ctx.Messages, ContextMessage{Role: RoleCustom, Entry: e, Raw: buildObject(omitEmpty(out))})
	case TypeBranchSummary:
		var v struct {
			Summary jsontext.Value `json:"summary"`
			FromID  jsontext.Value `json:"fromId"`
		}
		if unmarshal(e.raw, &v) != nil || !js.Truthy(v.Summary) {
			return
		}
		ctx.Messages = append(ctx.Messages, ContextMessage{Role: RoleBranchSummary, Entry: e, Raw: buildObject(omitEmpty([]member{
			{"role", mustValue(RoleBranchSummary)}, {"summary", v.Summary}, {"fromId", v.FromID}, {"timestamp", jsMillis(e.Timestamp)},
		}))})
	}
}

// messageRaw returns the bytes of the entry's message value (nil when it has
// none) without decoding it: where it is was noted when the line was scanned.
func (e *Entry) messageRaw() []byte {
	if e.wide {
		if s := scanLine(e.raw); s.msgEnd > 0 {
			return e.raw[s.msgStart:s.msgEnd]
		}
		return nil
	}
	if e.msgEnd == 0 {
		return nil
	}
	return e.raw[e.msgStart:e.msgEnd]
}

// truthy is JavaScript's truthiness for a JSON value.

func omitEmpty(ms []member) []member {
	out := ms[:0]
	for _, m := range ms {
		if len(m.value) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// jsMillis is new Date(ts).getTime() as JSON: null for a time JavaScript cannot parse.
func jsMillis(ts string) jsontext.Value {
	ms := jsTime(ts)
	if math.IsNaN(ms) {
		return jsontext.Value("null")
	}
	return mustValue(int64(ms))
}

// ForModel converts a context's messages into what a model accepts (pi's
// convertToLlm, SPEC §6.4): user, assistant and toolResult pass unchanged, bash
// executions, custom messages and summaries become user messages.
func ForModel(msgs []ContextMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(msgs))
	for _, m := range msgs {
		if raw, _, ok := ForModelOne(m); ok {
			out = append(out, raw)
		}
	}
	return out
}

// ForModelOne is ForModel of one message: what the model gets of m, if
// anything (ok), and whether that is m as logged (same: its own bytes).
func ForModelOne(m ContextMessage) (raw json.RawMessage, same, ok bool) {
	switch m.Role {
	case RoleUser, RoleAssistant, RoleToolResult, RoleSystem:
		return m.Raw, true, true
	case RoleBashExecution:
		ms, err := objectMembers(m.Raw)
		if err != nil {
			return nil, false, false
		}
		if v, _ := find(ms, "excludeFromContext"); js.Truthy(v) {
			return nil, false, false
		}
		return userText(bashText(ms), m.Raw), false, true
	case RoleCustom:
		ms, err := objectMembers(m.Raw)
		if err != nil {
			return nil, false, false
		}
		content, _ := find(ms, "content")
		if content.Kind() == '"' {
			content = mustValue([]textBlock{{Type: "text", Text: jsonStr(content)}})
		}
		ts, _ := find(ms, "timestamp")
		return buildObject(omitEmpty([]member{{"role", mustValue(RoleUser)}, {"content", content}, {"timestamp", ts}})), false, true
	case RoleBranchSummary:
		var v struct {
			Summary string `json:"summary"`
		}
		_ = unmarshal(m.Raw, &v)
		return userText(BranchSummaryPrefix+v.Summary+BranchSummarySuffix, m.Raw), false, true
	case RoleCompactionSummary:
		var v struct {
			Summary string `json:"summary"`
		}
		_ = unmarshal(m.Raw, &v)
		return userText(CompactionSummaryPrefix+v.Summary+CompactionSummarySuffix, m.Raw), false, true
	}
	return nil, false, false
}

// Texts pi puts around summaries when it sends them to a model.
const (
	CompactionSummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	CompactionSummarySuffix = "\n</summary>"
	BranchSummaryPrefix     = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
	BranchSummarySuffix     = "</summary>"
)

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func jsonStr(v jsontext.Value) string {
	s, _ := jsonString(v)
	return s
}

// userText builds {"role":"user","content":[{"type":"text","text":…}],"timestamp":…}
// keeping the original message's timestamp.
func userText(text string, orig []byte) []byte {
	ms, _ := objectMembers(orig)
	ts, _ := find(ms, "timestamp")
	return buildObject(omitEmpty([]member{{"role", mustValue(RoleUser)}, {"content", mustValue([]textBlock{{Type: "text", Text: text}})}, {"timestamp", ts}}))
}

// bashText is pi's bashExecutionToText, with JavaScript's truthiness and
// template-string formatting of whatever the fields hold.
func bashText(ms []member) string {
	field := func(name string) jsontext.Value { v, _ := find(ms, name); return v }
	var b strings.Builder
	fmt.Fprintf(&b, "Ran `%s`\n", jsTemplate(field("command")))
	if out := field("output"); js.Truthy(out) {
		fmt.Fprintf(&b, "```\n%s\n```", jsTemplate(out))
	} else {
		b.WriteString("(no output)")
	}
	if js.Truthy(field("cancelled")) {
		b.WriteString("\n\n(command cancelled)")
	} else if code := field("exitCode"); len(code) > 0 && code.Kind() != 'n' && !(code.Kind() == '0' && jsNumber(code) == "0") {
		fmt.Fprintf(&b, "\n\nCommand exited with code %s", jsTemplate(code))
	}
	if js.Truthy(field("truncated")) && js.Truthy(field("fullOutputPath")) {
		fmt.Fprintf(&b, "\n\n[Output truncated. Full output: %s]", jsTemplate(field("fullOutputPath")))
	}
	return b.String()
}

// jsTemplate is what `${v}` gives in JavaScript for a JSON value (v nil: undefined).
func jsTemplate(v jsontext.Value) string {
	switch v.Kind() {
	case 0:
		return "undefined"
	case '"':
		return jsonStr(v)
	case '0':
		return jsNumber(v)
	case '[':
		var elems []jsontext.Value
		if unmarshal(v, &elems) != nil {
			return ""
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			if k := e.Kind(); k != 'n' { // null and undefined join as ""
				parts[i] = jsTemplate(e)
			}
		}
		return strings.Join(parts, ",")
	case '{':
		return "[object Object]"
	}
	return string(v) // true, false, null
}

// jsNumber prints a JSON number as JavaScript's String(n) does.
func jsNumber(v jsontext.Value) string {
	var f float64
	if unmarshal(v, &f) != nil {
		return string(v)
	}
	return js.Number(f)
}

// AsMessage returns the message an entry stands for when a summarizer reads it
// (pi's getMessageFromEntry in its compaction and branch summarization code): a
// message entry's message as stored; a custom_message as a custom message; a
// branch_summary as a branchSummary message, even when its summary is empty (the
// context leaves those out, the summarizers do not); a compaction as a
// compactionSummary message. Other entries stand for no message.
func (e *Entry) AsMessage() (ContextMessage, bool) {
	switch e.Type {
	case TypeMessage, TypeCustomMessage:
		var ctx Context
		ctx.add(e)
		if len(ctx.Messages) == 0 {
			return ContextMessage{}, false
		}
		return ctx.Messages[0], true
	case TypeBranchSummary:
		ms, err := objectMembers(e.raw)
		if err != nil {
			return ContextMessage{}, false
		}
		summary, _ := find(ms, "summary")
		from, _ := find(ms, "fromId")
		return ContextMessage{Role: RoleBranchSummary, Entry: e, Raw: buildObject(omitEmpty([]member{
			{"role", mustValue(RoleBranchSummary)}, {"summary", summary}, {"fromId", from}, {"timestamp", jsMillis(e.Timestamp)},
		}))}, true
	case TypeCompaction:
		ms, err := objectMembers(e.raw)
		if err != nil {
			return ContextMessage{}, false
		}
		summary, _ := find(ms, "summary")
		tokens, _ := find(ms, "tokensBefore")
		return ContextMessage{Role: RoleCompactionSummary, Entry: e, Raw: buildObject(omitEmpty([]member{
			{"role", mustValue(RoleCompactionSummary)}, {"summary", summary}, {"tokensBefore", tokens}, {"timestamp", jsMillis(e.Timestamp)},
		}))}, true
	}
	return ContextMessage{}, false
}
