package session

import (
	"encoding/json"
	"github.com/arborlog/arbor/internal/js"
	"github.com/go-json-experiment/json/jsontext"
)

// Entry types pi 1.6.0 added (SPEC §3).
const (
	// TypeUsage records the cost of a provider call that is not a message
	// (a cache warm-up, a web search): counted in cost, never in the context.
	TypeUsage = "usage"
	// TypeContextEdit hides (replacement null) or replaces the content of an
	// earlier message on the branch; the latest edit of a target on the
	// context's entries wins.
	TypeContextEdit = "context_edit"
)

// RoleSystem is the role of a system message (pi 1.6.0): the first sets the
// system prompt and tools, later ones patch sections and add or remove tools.
const RoleSystem = "system"

// Projected is one entry of a projection with the messages it contributes to
// the context (none for metadata, an omitted message or a compaction that a
// newer one replaced).
type Projected struct {
	Entry    *Entry
	Messages []ContextMessage
	// Edit is the context_edit applied to the entry's messages, or nil.
	Edit *Entry
}

// Projection is pi 1.6.0's buildSessionProjection: the entries that make up a
// branch's context (the latest compaction first, then its kept part without
// system messages, then everything after it), each with its messages after
// context edits, and the settings in force at the leaf.
type Projection struct {
	Entries       []Projected
	ThinkingLevel json.RawMessage
	Model         *Model

	// all holds every entry's messages in order, edits applied: each entry's
	// Messages are a part of it, so Context and Span copy none of them.
	all []ContextMessage
}

// Context flattens the projection into the context the model sees.
func (p Projection) Context() Context {
	return Context{Messages: p.all, ThinkingLevel: p.ThinkingLevel, Model: p.Model}
}

// Span returns the messages of Entries[from:to] in order as one slice that
// shares the projection's memory: a compaction plan of a million messages
// copies none. The slice's capacity ends at its length, so appending to it
// copies.
func (p Projection) Span(from, to int) []ContextMessage {
	start := 0
	for _, e := range p.Entries[:from] {
		start += len(e.Messages)
	}
	end := start
	for _, e := range p.Entries[from:to] {
		end += len(e.Messages)
	}
	return p.all[start:end:end]
}

// Projection builds the active cursor's projection.
func (l *Log) Projection() Projection { return l.Cursor("").Projection() }

// Projection builds this cursor's projection.
func (c *Cursor) Projection() Projection {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	cur, ok := c.l.cursors[c.cid()]
	if !ok {
		return Projection{ThinkingLevel: emptyContext().ThinkingLevel}
	}
	return c.l.project(cur.leaf)
}

// ProjectionAt builds the projection from any entry, with ContextAt's rules
// for a nil leaf and an unknown id.
func (l *Log) ProjectionAt(leaf *string) Projection {
	l.mu.Lock()
	defer l.mu.Unlock()
	if leaf == nil {
		return Projection{ThinkingLevel: emptyContext().ThinkingLevel}
	}
	n, ok := l.byID[*leaf]
	if !ok && len(l.entries) > 0 {
		n = l.byID[l.entries[len(l.entries)-1].ID]
	}
	return l.project(n)
}

// ProjectPath projects a branch given as its entries, root first (pi's
// buildSessionProjection over a path, as its compaction planner calls it).
func ProjectPath(path []*Entry) Projection { return ProjectPathFrom(path, "") }

func (l *Log) project(leaf *node) Projection {
	if leaf == nil {
		return Projection{ThinkingLevel: emptyContext().ThinkingLevel}
	}
	return ProjectPathFrom(entriesOf(l.path(leaf)), "")
}

// ProjectPathFrom is ProjectPath with the latest compaction on the path keeping
// from the entry keepFrom instead of its own firstKeptEntryId ("": its own).
// A compaction planner uses it to take back into the context what an older
// compaction cut off wrongly (a tool call whose result it kept).
// It reads path and never changes it.
func ProjectPathFrom(path []*Entry, keepFrom string) Projection {
	return projectPath(path, keepFrom, true)
}

// projectPath is ProjectPathFrom; with record false the projection's
// Entries are left empty, and only its context is made.
func projectPath(path []*Entry, keepFrom string, record bool) Projection {
	p := Projection{ThinkingLevel: emptyContext().ThinkingLevel}
	// Settings come from the last entry of each kind on the path: scan backwards
	// and decode only those, never every assistant message.
	var haveLevel, haveModel bool
	compaction := -1
	for i := len(path) - 1; i >= 0 && (!haveLevel || !haveModel || compaction < 0); i-- {
		e := path[i]
		switch {
		case e.Type == TypeThinkingLevelChange && !haveLevel:
			haveLevel = true
			p.ThinkingLevel = json.RawMessage(e.rawValue("thinkingLevel"))
		case e.Type == TypeModelChange && !haveModel:
			haveModel = true
			p.Model = &Model{Provider: json.RawMessage(e.rawValue("provider")), ModelID: json.RawMessage(e.rawValue("modelId"))}
		case e.Type == TypeMessage && e.msgRole() == RoleAssistant && !haveModel:
			haveModel = true
			var v struct {
				Provider jsontext.Value `json:"provider"`
				Model    jsontext.Value `json:"model"`
			}
			_ = unmarshal(e.messageRaw(), &v)
			p.Model = &Model{Provider: json.RawMessage(v.Provider), ModelID: json.RawMessage(v.Model)}
		case e.Type == TypeCompaction && compaction < 0:
			compaction = i
		}
	}
	// pi's buildContextEntries.
	var entries []*Entry
	if compaction < 0 {
		entries = path
	} else {
		ce := path[compaction]
		firstKept, _ := jsonString(ce.rawValue("firstKeptEntryId"))
		if keepFrom != "" {
			firstKept = keepFrom
		}
		entries = append(entries, ce)
		kept := false
		for _, e := range path[:compaction] {
			if e.ID == firstKept {
				kept = true
			}
			if kept && !(e.Type == TypeMessage && e.msgRole() == RoleSystem) {
				entries = append(entries, e)
			}
		}
		entries = append(entries, path[compaction+1:]...)
	}
	edits := map[string]*Entry{}
	for _, e := range entries {
		if e.Type != TypeContextEdit {
			continue
		}
		if target, ok := jsonString(e.rawValue("targetId")); ok {
			edits[target] = e
		}
	}
	if record {
		p.Entries = make([]Projected, len(entries))
	}
	// One backing array for every entry's messages, in order and edited in
	// place (an omitted entry's are taken back off its end), so it is the
	// context itself.
	buf := make([]ContextMessage, 0, len(entries)+1)
	for i, e := range entries {
		if record {
			p.Entries[i].Entry = e
		}
		if e.Type == TypeCompaction && i > 0 {
			continue // an older compaction inside the kept part says nothing
		}
		n := len(buf)
		buf = appendEntryMessages(buf, e)
		msgs := buf[n:len(buf):len(buf)]
		if len(msgs) == 0 {
			msgs = nil
		}
		if ed := edits[e.ID]; ed != nil && len(msgs) > 0 {
			if r, ok := editReplacement(ed); ok {
				if record {
					p.Entries[i].Edit = ed
				}
				if edited := applyEdit(msgs, r); edited == nil {
					buf, msgs = buf[:n], nil
				} else {
					copy(msgs, edited)
				}
			}
		}
		if record {
			p.Entries[i].Messages = msgs
		}
	}
	if len(buf) > 0 {
		p.all = buf
	}
	return p
}

// entryMessages is pi 1.6.0's sessionEntryToContextMessages: what one entry
// contributes to a context before context edits.
func entryMessages(e *Entry) []ContextMessage { return appendEntryMessages(nil, e) }

// appendEntryMessages appends what entryMessages returns to dst.
func appendEntryMessages(dst []ContextMessage, e *Entry) []ContextMessage {
	switch e.Type {
	case TypeMessage:
		raw := e.messageRaw()
		if raw == nil {
			return dst
		}
		switch e.msgRole() {
		case RoleUser, RoleAssistant, RoleToolResult, RoleSystem:
			if e.hasContent {
				break // the common case, told by the line scan: no need to look
			}
			// Null or missing content reads as empty, as pi normalises it.
			ms, err := objectMembers(raw)
			if err != nil {
				return dst
			}
			if c, _ := find(ms, "content"); len(c) == 0 || c.Kind() == 'n' {
				empty := jsontext.Value("[]")
				if e.msgRole() == RoleSystem {
					empty = jsontext.Value(`""`)
				}
				raw = buildObject(setMember(ms, "content", empty))
			}
		}
		return append(dst, ContextMessage{Role: e.msgRole(), Entry: e, Raw: raw})
	case TypeCompaction:
		if sm := e.rawValue("systemMessage"); js.Truthy(sm) {
			dst = append(dst, ContextMessage{Role: RoleSystem, Entry: e, Raw: sm})
		}
		m, _ := e.AsMessage()
		return append(dst, m)
	}
	ctx := Context{Messages: dst}
	ctx.add(e)
	return ctx.Messages
}

// editReplacement returns a context edit's replacement (JSON null: omit). It
// reports false for an edit without one, which pi cannot apply (it throws) and
// arbor ignores.
func editReplacement(ed *Entry) (jsontext.Value, bool) {
	r := ed.rawValue("replacement")
	return r, len(r) > 0
}

// applyEdit is pi 1.6.0's projectContextEntry: a null replacement omits the
// entry's messages; otherwise user, assistant, toolResult and custom messages
// take the replacement's content (a string becomes one text block for
// assistant and tool results), and other messages stay as they are.
func applyEdit(msgs []ContextMessage, r jsontext.Value) []ContextMessage {
	if r.Kind() == 'n' {
		return nil
	}
	var content jsontext.Value // nil: the replacement has none, and the message then has none either
	if r.Kind() == '{' {
		if ms, err := objectMembers(r); err == nil {
			content, _ = find(ms, "content")
		}
	}
	out := make([]ContextMessage, len(msgs))
	for i, m := range msgs {
		out[i] = m
		switch m.Role {
		case RoleUser, RoleAssistant, RoleToolResult, RoleCustom:
		default:
			continue
		}
		ms, err := objectMembers(m.Raw)
		if err != nil {
			continue
		}
		c := content
		if (m.Role == RoleAssistant || m.Role == RoleToolResult) && c.Kind() == '"' {
			c = mustValue([]textBlock{{Type: "text", Text: jsonStr(c)}})
		}
		if c == nil {
			ms = without(ms, "content")
		} else {
			ms = setMember(ms, "content", c)
		}
		out[i].Raw = buildObject(ms)
	}
	return out
}

// setMember is JavaScript's {...o, name: v}: the value replaces the member
// where it first appears (later duplicates go), or is added at the end.
func setMember(ms []member, name string, v jsontext.Value) []member {
	out := make([]member, 0, len(ms)+1)
	set := false
	for _, m := range ms {
		if m.name != name {
			out = append(out, m)
		} else if !set {
			out = append(out, member{name, v})
			set = true
		}
	}
	if !set {
		out = append(out, member{name, v})
	}
	return out
}

// UsageRecord is what an entry adds to a session's cost in pi 1.6.0
// (getUsageCostBreakdown): an assistant message's usage under
// "<provider>/<responseModel or model>", a usage entry's under
// "<provider>/<model>", and the usage of a tool result, a branch summary or a
// compaction under "Tools/summaries". ok is false for entries that cost nothing.
func (e *Entry) UsageRecord() (key string, u Usage, ok bool) {
	var raw []byte
	switch {
	case e.Type == TypeMessage && (e.msgRole() == RoleAssistant || e.msgRole() == RoleToolResult):
		raw = e.messageRaw()
	case e.Type == TypeUsage || e.Type == TypeBranchSummary || e.Type == TypeCompaction:
		raw = e.raw
	default:
		return "", Usage{}, false
	}
	if e.Type == TypeMessage && e.msgRole() == RoleAssistant {
		// Most entries that cost are replies: walked, not decoded.
		if key, u, ok, done := scanUsageRecord(raw); done {
			return key, u, ok
		}
	}
	return e.decodeUsageRecord(raw)
}

// decodeUsageRecord is UsageRecord of the entry's object or message raw, through the decoder.
func (e *Entry) decodeUsageRecord(raw []byte) (key string, u Usage, ok bool) {
	ms, err := objectMembers(raw)
	if err != nil {
		return "", Usage{}, false
	}
	field := func(name string) jsontext.Value { v, _ := find(ms, name); return v }
	uv := field("usage")
	if !js.Truthy(uv) || uv.Kind() != '{' {
		return "", Usage{}, false
	}
	switch {
	case e.Type == TypeMessage && e.msgRole() == RoleAssistant:
		model := field("responseModel")
		if len(model) == 0 || model.Kind() == 'n' {
			model = field("model")
		}
		key = jsTemplate(field("provider")) + "/" + jsTemplate(model)
	case e.Type == TypeUsage:
		key = jsTemplate(field("provider")) + "/" + jsTemplate(field("model"))
	default:
		key = "Tools/summaries"
	}
	d, _ := Message{raw: buildObject([]member{{"usage", uv}})}.Data()
	if d.Usage == nil {
		return "", Usage{}, false
	}
	return key, *d.Usage, true
}

// ContextMessages is what the entry contributes to a context before context
// edits (pi 1.6.0's sessionEntryToContextMessages): a message as stored (null
// content read as empty), a custom message, a branch summary with a summary,
// a compaction's system checkpoint and summary. Other entries contribute nothing.
func (e *Entry) ContextMessages() []ContextMessage { return entryMessages(e) }
