package importers

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// rho sessions (~/.rho/sessions/<hash>/<secs>_<id>.jsonl): a Header line, then
// Entry, Resolution and Cursor lines, internally tagged by "type". See
// ../../shared/reference/formats/rho-format.md.

type rhoLine struct {
	Type string `json:"type"`
	// Header
	ID            string  `json:"id"`
	Version       int     `json:"version"`
	CreatedAtSecs int64   `json:"created_at_secs"`
	Cwd           string  `json:"cwd"`
	ParentSession *string `json:"parent_session"`
	// Entry
	ParentID  *string         `json:"parent_id"`
	Timestamp *rhoTime        `json:"timestamp"`
	Payload   json.RawMessage `json:"payload"`
	// Resolution
	Entry string `json:"entry"`
	// Cursor
	Leaf string `json:"leaf"`
	Name string `json:"name"`
}

type rhoTime struct {
	Secs  int64 `json:"secs_since_epoch"`
	Nanos int64 `json:"nanos_since_epoch"`
}

type rhoMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type rhoSummary struct {
	OriginalRequest *string             `json:"original_request"`
	CurrentRequest  *string             `json:"current_request"`
	ToolCalls       map[string][]string `json:"tool_calls"`
	KeyFindings     map[string][]string `json:"key_findings"`
	Phases          []struct {
		Phase        string              `json:"phase"`
		ToolCalls    map[string][]string `json:"tool_calls"`
		KeyFindings  map[string][]string `json:"key_findings"`
		UserMessages []string            `json:"user_messages"`
	} `json:"phases"`
	TokensCompacted float64 `json:"tokens_compacted"`
	EntryCount      int     `json:"entry_count"`
	Notes           *string `json:"notes"`
}

func readRho(in Input) *Session {
	s := &Session{}
	var head *rhoLine
	type entry struct {
		line int
		l    *rhoLine
		raw  []byte
	}
	var entries []entry
	byID := map[string]int{} // entry id -> index in entries (first position, last content)
	cursors := map[string]Cursor{}
	var cursorOrder []string
	firstCursor := ""
	var overlays []Overlay
	src := lines(in.Data)
	for _, l := range src {
		s.Stats.Lines++
		var r rhoLine
		if err := json.Unmarshal(l.text, &r); err != nil {
			s.Damage = append(s.Damage, LineError{l.n, "not a JSON object: " + err.Error()})
			continue
		}
		switch r.Type {
		case "Header":
			if head == nil {
				head = &r
			}
			s.Stats.Skipped++
		case "Entry":
			if r.ID == "" {
				s.Damage = append(s.Damage, LineError{l.n, "Entry without an id"})
				continue
			}
			if j, ok := byID[r.ID]; ok {
				// rho keeps the first position and the later content.
				entries[j].l, entries[j].raw = &r, l.text
				s.Stats.Skipped++
				continue
			}
			byID[r.ID] = len(entries)
			entries = append(entries, entry{l.n, &r, l.text})
		case "Resolution":
			// Per-cursor context overlays (outlined, summarized, pinned) have no
			// pi form; the full entries are kept and the overlay is counted.
			s.Stats.Skipped++
			var c struct {
				Cursor     *string         `json:"cursor"`
				Resolution json.RawMessage `json:"resolution"`
			}
			_ = json.Unmarshal(l.text, &c)
			if firstCursor == "" && c.Cursor != nil {
				firstCursor = *c.Cursor
			}
			o := Overlay{Line: l.n, Entry: r.Entry, Resolution: c.Resolution}
			if c.Cursor != nil {
				o.Cursor = *c.Cursor
			}
			overlays = append(overlays, o)
		case "Cursor":
			s.Stats.Skipped++
			if _, ok := cursors[r.ID]; !ok {
				cursorOrder = append(cursorOrder, r.ID)
			}
			cursors[r.ID] = Cursor{ID: r.ID, Name: r.Name, Leaf: r.Leaf}
		default:
			s.Stats.Custom++
			entries = append(entries, entry{l.n, &rhoLine{Type: "?"}, l.text})
		}
	}
	stem := strings.TrimSuffix(filepath.Base(in.Path), ".jsonl")
	h := Header{From: Source{Format: string(Rho), Path: in.Path, ID: stem}}
	if head != nil {
		h.From.ID = head.ID
		h.Cwd = head.Cwd
		if head.CreatedAtSecs > 0 {
			h.Timestamp = isoTime(time.Unix(head.CreatedAtSecs, 0))
		}
		if head.ParentSession != nil {
			h.From.Parent = *head.ParentSession
		}
	} else {
		s.Damage = append(s.Damage, LineError{1, "no Header line: rho would not open this file"})
	}
	if h.Timestamp == "" {
		h.Timestamp = isoTime(in.ModTime)
	}
	h.ID = stableUUID(string(Rho) + "\x00" + h.From.ID + "\x00" + stem)
	s.Header = h

	b := newBuilder(h.ID)
	tools := map[string]string{}
	prev := ""
	for _, e := range entries {
		r := e.l
		ts := h.Timestamp
		if r.Timestamp != nil {
			ts = isoTime(time.Unix(r.Timestamp.Secs, r.Timestamp.Nanos))
		}
		if r.Type == "?" {
			// An unknown line kept in place: after the entry before it.
			key := fmt.Sprintf("line:%d", e.line)
			b.add(&node{key: key, parent: prev, typ: "custom", ts: ts, origin: Origin{Line: e.line},
				fields: map[string]any{"customType": "rho.unknown", "data": json.RawMessage(e.raw)}})
			prev = key
			continue
		}
		parent := ""
		if r.ParentID != nil {
			parent = *r.ParentID
		}
		typ, fields := rhoPayload(r.Payload, e.raw, tools, ts, s)
		b.add(&node{key: r.ID, parent: parent, typ: typ, ts: ts, origin: Origin{Line: e.line, ID: r.ID}, fields: fields})
		prev = r.ID
	}
	// The leaf: the cursor the file continues (rho's first_cursor_id_in), else
	// the last Entry line.
	if firstCursor == "" && len(cursorOrder) > 0 {
		firstCursor = cursorOrder[0]
	}
	leaf := ""
	if c, ok := cursors[firstCursor]; ok && b.has(c.Leaf) {
		leaf = c.Leaf
	} else if len(entries) > 0 {
		for i := len(entries) - 1; i >= 0; i-- {
			if entries[i].l.Type == "Entry" {
				leaf = entries[i].l.ID
				break
			}
		}
	}
	var ids map[string]string
	s.Lines, ids = b.finish(leaf)
	s.Stats.Custom += b.orphans
	for _, o := range overlays {
		if id, ok := ids[o.Entry]; ok {
			o.Entry = id
			if len(o.Resolution) == 0 {
				o.Resolution = json.RawMessage("null")
			}
			s.Header.From.Overlays = append(s.Header.From.Overlays, o)
		}
	}
	for _, id := range cursorOrder {
		c := cursors[id]
		c.Leaf = ids[c.Leaf]
		s.Header.From.Cursors = append(s.Header.From.Cursors, c)
	}
	s.Stats.Branches = rhoBranches(b)
	return s
}

// rhoBranches counts extra children over the tree's message-bearing nodes.
func rhoBranches(b *builder) int {
	kids := map[string]int{}
	for _, n := range b.nodes {
		if n.parent != "" {
			kids[n.parent]++
		}
	}
	total := 0
	for _, k := range kids {
		total += k - 1
	}
	return total
}

// rhoPayload converts an entry payload to a pi entry type and fields.
func rhoPayload(p json.RawMessage, raw []byte, tools map[string]string, ts string, s *Session) (string, map[string]any) {
	var tagged map[string]json.RawMessage
	if json.Unmarshal(p, &tagged) != nil || len(tagged) != 1 {
		s.Stats.Custom++
		return "custom", map[string]any{"customType": "rho.unknown", "data": json.RawMessage(raw)}
	}
	var kind string
	var body json.RawMessage
	for k, v := range tagged {
		kind, body = k, v
	}
	ms := msTime(ts)
	switch kind {
	case "Message":
		var m rhoMessage
		if json.Unmarshal(body, &m) != nil {
			break
		}
		text := rhoText(m.Content)
		switch m.Role {
		case "user":
			s.Stats.Prompts++
			return "message", map[string]any{"message": userMessage([]any{textBlock(text)}, ms)}
		case "assistant":
			content := []any{}
			if text != "" {
				content = append(content, textBlock(text))
			}
			for _, c := range m.ToolCalls {
				args := json.RawMessage(c.Function.Arguments)
				if !json.Valid(args) || !strings.HasPrefix(strings.TrimSpace(c.Function.Arguments), "{") {
					args = marshalJSON(map[string]any{"arguments": c.Function.Arguments})
				}
				tools[c.ID] = c.Function.Name
				content = append(content, map[string]any{"type": "toolCall", "id": c.ID, "name": c.Function.Name, "arguments": args})
			}
			stop := "stop"
			if len(m.ToolCalls) > 0 {
				stop = "toolUse"
			}
			return "message", map[string]any{"message": map[string]any{"role": "assistant", "content": content, "api": "openai-completions",
				"provider": "", "model": "", "usage": usage(0, 0, 0, 0), "stopReason": stop, "timestamp": ms}}
		case "tool":
			return "message", map[string]any{"message": toolResultMessage(m.ToolCallID, tools[m.ToolCallID], []any{textBlock(text)}, false, ms)}
		case "system":
			// pi has no system-prompt entry that 0.73 and 1.6 read alike; kept.
			return "custom", map[string]any{"customType": "rho.system", "data": map[string]any{"content": text}}
		}
	case "Compaction":
		var c struct {
			Summary      rhoSummary `json:"summary"`
			FirstKept    string     `json:"first_kept"`
			TokensBefore float64    `json:"tokens_before"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		s.Stats.Compactions++
		return "compaction", map[string]any{"summary": renderRhoSummary(c.Summary), "firstKeptEntryId": c.FirstKept, "tokensBefore": c.TokensBefore}
	case "BranchSummary":
		var c struct {
			Summary rhoSummary `json:"summary"`
			FromID  string     `json:"from_id"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		return "branch_summary", map[string]any{"summary": renderRhoSummary(c.Summary), "fromId": c.FromID}
	case "ModelChange":
		var c struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		return "model_change", map[string]any{"provider": "", "modelId": c.Model}
	case "Label":
		var c struct {
			TargetID string  `json:"target_id"`
			Label    *string `json:"label"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		f := map[string]any{"targetId": c.TargetID}
		if c.Label != nil {
			f["label"] = *c.Label
		}
		return "label", f
	case "SessionInfo":
		var c struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		return "session_info", map[string]any{"name": c.Name}
	case "CustomMessage":
		var c struct {
			Kind    string `json:"kind"`
			Content []struct {
				Text *struct {
					Text string `json:"text"`
				} `json:"Text"`
			} `json:"content"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		content := []any{}
		for _, b := range c.Content {
			if b.Text != nil {
				content = append(content, textBlock(b.Text.Text))
			}
		}
		return "custom_message", map[string]any{"customType": c.Kind, "content": content, "display": true}
	case "Custom":
		var c struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(body, &c) != nil {
			break
		}
		f := map[string]any{"customType": c.Kind}
		if len(c.Data) > 0 {
			f["data"] = c.Data
		}
		return "custom", f
	case "LeafMoved", "SessionEnded":
		// In the chain (new turns hang under a LeafMoved), not in the context.
		return "custom", map[string]any{"customType": "rho." + kind, "data": body}
	}
	s.Stats.Custom++
	return "custom", map[string]any{"customType": "rho.unknown", "data": json.RawMessage(raw)}
}

// rhoText reads ChatMessage content: a bare string or [{type:text,text}].
func rhoText(c json.RawMessage) string {
	if len(c) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var bs []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c, &bs)
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// renderRhoSummary writes rho's structured compaction summary as text.
func renderRhoSummary(s rhoSummary) string {
	var b strings.Builder
	if s.OriginalRequest != nil {
		fmt.Fprintf(&b, "Original request: %s\n", *s.OriginalRequest)
	}
	if s.CurrentRequest != nil {
		fmt.Fprintf(&b, "Current request: %s\n", *s.CurrentRequest)
	}
	writeMap := func(title string, m map[string][]string) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, v := range m[k] {
				fmt.Fprintf(&b, "- %s: %s\n", k, v)
			}
		}
	}
	for _, p := range s.Phases {
		fmt.Fprintf(&b, "Phase: %s\n", p.Phase)
		for _, u := range p.UserMessages {
			fmt.Fprintf(&b, "- user: %s\n", u)
		}
		writeMap("Tool calls", p.ToolCalls)
		writeMap("Key findings", p.KeyFindings)
	}
	writeMap("Tool calls", s.ToolCalls)
	writeMap("Key findings", s.KeyFindings)
	if s.Notes != nil {
		fmt.Fprintf(&b, "Notes: %s\n", *s.Notes)
	}
	fmt.Fprintf(&b, "(%d entries, %.0f tokens compacted)", s.EntryCount, s.TokensCompacted)
	return b.String()
}
