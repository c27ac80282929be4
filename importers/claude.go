package importers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Claude Code transcripts (~/.claude/projects/<folder>/<sessionId>.jsonl and
// subagent files): a uuid/parentUuid tree in which one API response is written
// one content block a line, tool results hang off the tool_use line they answer,
// and progress, attachment and system lines sit in the chain. See
// ../../shared/reference/formats/NOTES.md §1 for the shapes.

type ccLine struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID string          `json:"logicalParentUuid"`
	SessionID         string          `json:"sessionId"`
	AgentID           string          `json:"agentId"`
	Timestamp         string          `json:"timestamp"`
	Cwd               string          `json:"cwd"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	RequestID         string          `json:"requestId"`
	Content           json.RawMessage `json:"content"`
	Message           *ccMessage      `json:"message"`
	CustomTitle       string          `json:"customTitle"`
	AITitle           string          `json:"aiTitle"`
	AgentName         string          `json:"agentName"`
	ToolUseResult     json.RawMessage `json:"toolUseResult"`
	CompactMetadata   *struct {
		PreTokens        float64 `json:"preTokens"`
		PreservedSegment *struct {
			HeadUUID string `json:"headUuid"`
		} `json:"preservedSegment"`
		PreservedMessages *struct {
			UUIDs []string `json:"uuids"`
		} `json:"preservedMessages"`
	} `json:"compactMetadata"`
}

type ccMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      *struct {
		Input      float64 `json:"input_tokens"`
		Output     float64 `json:"output_tokens"`
		CacheRead  float64 `json:"cache_read_input_tokens"`
		CacheWrite float64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// Lines that Claude Code writes for its own interface, not the conversation.
var ccSkipped = map[string]bool{
	"summary": true, "file-history-snapshot": true, "queue-operation": true, "permission-mode": true,
	"last-prompt": true, "custom-title": true, "ai-title": true, "agent-name": true, "agent-color": true,
	"agent-setting": true, "pr-link": true, "progress": true, "attachment": true, "system": true,
}

// ccNode is a conversation node of the source tree: a user prompt, an assistant
// response (all its lines merged), a tool-result line, a compaction, or a line
// kept as custom.
type ccNode struct {
	key      string // first uuid (or "line:N")
	line     int
	lastLine int
	parent   string // key of the parent node after re-linking
	kind     string // prompt, meta, assistant, results, compaction, custom
	lines    []*ccLine
	raw      json.RawMessage
	children []*ccNode
	moved    bool
}

func readClaude(in Input) *Session {
	s := &Session{}
	var (
		parsed   []*ccLine
		nums     []int
		raws     [][]byte
		first    *ccLine
		sourceID string
	)
	for _, l := range lines(in.Data) {
		s.Stats.Lines++
		var c ccLine
		if err := json.Unmarshal(l.text, &c); err != nil {
			s.Damage = append(s.Damage, LineError{l.n, "not a JSON object: " + err.Error()})
			continue
		}
		parsed = append(parsed, &c)
		nums = append(nums, l.n)
		raws = append(raws, l.text)
		if first == nil && c.SessionID != "" {
			first = &c
			sourceID = c.SessionID
		}
	}
	stem := strings.TrimSuffix(filepath.Base(in.Path), ".jsonl")
	if sourceID == "" {
		sourceID = stem
	}
	h := Header{From: Source{Format: string(Claude), Path: in.Path, ID: sourceID}}
	if strings.HasPrefix(stem, "agent-") {
		h.From.Sidechain = true
		h.From.ID = sourceID + "/" + stem
		h.From.Parent = sourceID
		h.ParentSession, h.From.ToolCall = ccParent(in.Path, sourceID, strings.TrimPrefix(stem, "agent-"))
	}
	h.ID = stableUUID(string(Claude) + "\x00" + h.From.ID)
	for _, c := range parsed {
		if h.Cwd == "" && c.Cwd != "" {
			h.Cwd = c.Cwd
		}
		if h.Timestamp == "" && c.Timestamp != "" {
			h.Timestamp = normTime(c.Timestamp, "")
		}
	}
	if h.Timestamp == "" {
		h.Timestamp = isoTime(in.ModTime)
	}
	s.Header = h

	// Pass 1: the conversation nodes, with every other chain line mapped to its
	// parent so kept lines re-link to their nearest kept ancestor.
	nodes := map[string]*ccNode{}  // uuid -> node it belongs to
	through := map[string]string{} // uuid of a skipped chain line -> its parent uuid
	byMsg := map[string]*ccNode{}  // assistant message id -> node
	var order []*ccNode
	titleRank := 0
	parentOf := func(c *ccLine) string {
		if c.ParentUUID == nil {
			return ""
		}
		return *c.ParentUUID
	}
	// Lines outside the chain that become entries (a name, a line not
	// understood) wait for the next prompt or response and go in before it, so
	// they never stand between a response and its tool results.
	var pending []*ccNode
	before := func(parent string) string {
		for _, p := range pending {
			p.parent = parent
			parent = p.key
		}
		pending = nil
		return parent
	}
	newNode := func(key string, line int, kind string, c *ccLine, parent string) *ccNode {
		n := &ccNode{key: key, line: line, lastLine: line, kind: kind, parent: parent}
		if c != nil {
			n.lines = []*ccLine{c}
		}
		order = append(order, n)
		nodes[key] = n
		return n
	}
	for i, c := range parsed {
		num := nums[i]
		switch {
		case c.UUID != "" && nodes[c.UUID] != nil:
			// A line repeated (a resumed session copies history): the first one counts.
			s.Stats.Skipped++
			continue
		case c.Type == "assistant" && c.UUID != "" && c.Message != nil:
			if g := byMsg[c.Message.ID]; c.Message.ID != "" && g != nil {
				g.lines = append(g.lines, c)
				g.lastLine = num
				nodes[c.UUID] = g
			} else {
				n := newNode(c.UUID, num, "assistant", c, before(parentOf(c)))
				byMsg[c.Message.ID] = n
			}
		case c.Type == "user" && c.UUID != "" && c.Message != nil:
			kind := "prompt"
			switch {
			case c.IsCompactSummary:
				kind = "summary"
			case ccHasToolResult(c.Message.Content):
				kind = "results"
			case c.IsMeta, ccCommand(c.Message.Content):
				kind = "meta"
			}
			if kind == "summary" {
				// The summary belongs to the compaction it follows.
				if b := nodes[parentOf(c)]; b != nil && b.kind == "compaction" && len(b.lines) == 1 {
					b.lines = append(b.lines, c)
					b.lastLine = num
					nodes[c.UUID] = b
					break
				}
				kind = "meta"
			}
			parent := parentOf(c)
			if kind != "results" {
				parent = before(parent)
			}
			newNode(c.UUID, num, kind, c, parent)
		case c.Type == "system" && c.Subtype == "compact_boundary" && c.UUID != "":
			newNode(c.UUID, num, "compaction", c, c.LogicalParentUUID)
		case c.UUID == "" && (c.CustomTitle != "" || c.AITitle != "" || c.AgentName != ""):
			// The session's name, as a session_info in the chain where it was
			// written (pi appends its own the same way). A name the user gave
			// (agent-name, custom-title) wins over one Claude Code made up
			// (ai-title): a made-up one after a given one is skipped.
			rank := 1
			if c.CustomTitle != "" || c.AgentName != "" {
				rank = 2
			}
			if rank < titleRank {
				s.Stats.Skipped++
				break
			}
			titleRank = rank
			n := newNode(fmt.Sprintf("line:%d", num), num, "title", c, "")
			n.raw = raws[i]
			pending = append(pending, n)
		case ccSkipped[c.Type] || c.Type == "user" || c.Type == "assistant":
			s.Stats.Skipped++
			if c.UUID != "" {
				through[c.UUID] = parentOf(c)
			}
		default:
			// Not understood: kept where it stands in the chain, or, outside
			// it, before the next prompt or response.
			s.Stats.Custom++
			if c.UUID != "" {
				n := newNode(c.UUID, num, "custom", c, parentOf(c))
				n.raw = raws[i]
				break
			}
			n := newNode(fmt.Sprintf("line:%d", num), num, "custom", c, "")
			n.raw = raws[i]
			pending = append(pending, n)
		}
	}
	// Lines still waiting at the end go after the last conversation node.
	if len(pending) > 0 {
		atEnd := pending
		last := ""
		for i := len(order) - 1; i >= 0; i-- {
			if !slices.Contains(atEnd, order[i]) {
				last = order[i].key
				break
			}
		}
		before(last)
	}

	// Resolve each node's parent to a node key: through skipped lines, and from
	// a merged line to its response.
	resolve := func(u string) string {
		for seen := 0; u != "" && seen < len(parsed)+1; seen++ {
			if n := nodes[u]; n != nil {
				return n.key
			}
			p, ok := through[u]
			if !ok {
				return "" // unknown parent: a root
			}
			u = p
		}
		return ""
	}
	byKey := map[string]*ccNode{}
	for _, n := range order {
		byKey[n.key] = n
	}
	for _, n := range order {
		n.parent = resolve(n.parent)
		if n.parent == n.key {
			n.parent = ""
		}
	}
	for _, n := range order {
		if n.kind == "compaction" {
			n.parent = ccCompactionParent(n, byKey, resolve)
		}
	}
	for _, n := range order {
		if p := byKey[n.parent]; p != nil {
			p.children = append(p.children, n)
		}
	}
	// Siblings that are not both prompts are not a fork: parallel tool results,
	// a command's output beside its caveat. Chain each after the previous when
	// that one has nothing under it.
	for _, p := range order {
		kids := p.children
		for i := 1; i < len(kids); i++ {
			prev := kids[i-1]
			if len(prev.children) == 0 && !(prev.kind == "prompt" && kids[i].kind == "prompt") {
				kids[i].parent = prev.key
				kids[i].moved = true
				prev.children = append(prev.children, kids[i])
			}
		}
	}
	for _, n := range order {
		if n.kind == "prompt" {
			s.Stats.Prompts++
		}
	}
	// Branches: prompts beside another prompt or another response under one parent.
	for _, p := range order {
		real := 0
		for _, k := range p.children {
			if !k.moved && k.parent == p.key {
				real++
			}
		}
		if real > 1 {
			s.Stats.Branches += real - 1
		}
	}

	// Pass 2: entries.
	b := newBuilder(h.ID)
	tools := map[string]string{} // tool_use id -> name
	tail := map[string]string{}  // node key -> key of its last entry
	for _, n := range order {
		if n.kind == "assistant" {
			for _, c := range n.lines {
				for _, bl := range ccBlocks(c.Message.Content) {
					if bl.Type == "tool_use" {
						tools[bl.ID] = bl.Name
					}
				}
			}
		}
	}
	var leaf string
	for _, n := range order {
		parent := tail[n.parent]
		if n.parent != "" && parent == "" {
			parent = n.parent // an ancestor emitted nothing of its own
		}
		last := ccEmit(b, n, parent, tools, s)
		if last == "" {
			last = parent
		}
		tail[n.key] = last
		if n.kind != "custom" && n.kind != "title" && last != "" {
			leaf = last
		}
	}
	s.Lines, _ = b.finish(leaf)
	s.Stats.Custom += b.orphans
	return s
}

// ccParent finds the session a subagent file belongs to and the tool call that
// started it: <dir>/<sessionId>/subagents/agent-<id>.jsonl (cc ≥2.1) or
// <dir>/agent-<id>.jsonl beside <dir>/<sessionId>.jsonl (older).
func ccParent(path, sessionID, agentID string) (parent, toolCall string) {
	dir := filepath.Dir(path)
	candidates := []string{}
	if filepath.Base(dir) == "subagents" {
		sess := filepath.Dir(dir)
		candidates = append(candidates, sess+".jsonl")
	} else if strings.Contains(filepath.ToSlash(dir), "/subagents/") {
		i := strings.LastIndex(filepath.ToSlash(dir), "/subagents/")
		candidates = append(candidates, filepath.FromSlash(filepath.ToSlash(dir)[:i])+".jsonl")
	}
	if sessionID != "" && !strings.ContainsAny(sessionID, `/\`) && sessionID != "." && sessionID != ".." {
		candidates = append(candidates, filepath.Join(dir, sessionID+".jsonl"))
	}
	for _, c := range candidates {
		data, err := readSmall(c)
		if err != nil {
			continue
		}
		return c, ccToolCallFor(data, agentID)
	}
	return "", ""
}

// ccToolCallFor finds the Task/Agent tool call whose result names agentID.
func ccToolCallFor(data []byte, agentID string) string {
	needle := []byte(`"` + agentID + `"`)
	for _, l := range lines(data) {
		if !bytes.Contains(l.text, needle) {
			continue
		}
		var c ccLine
		if json.Unmarshal(l.text, &c) != nil || c.Message == nil {
			continue
		}
		var r struct {
			AgentID string `json:"agentId"`
		}
		if json.Unmarshal(c.ToolUseResult, &r) != nil || r.AgentID != agentID {
			continue
		}
		for _, bl := range ccBlocks(c.Message.Content) {
			if bl.Type == "tool_result" {
				return bl.ToolUseID
			}
		}
	}
	return ""
}

// ccCompactionParent attaches a compact_boundary to the entry it compacted
// (logicalParentUuid). When newer Claude Code re-parents the preserved tail under
// the summary, that entry lies below the boundary; the boundary then follows the
// last preserved entry that is still above it.
func ccCompactionParent(n *ccNode, byKey map[string]*ccNode, resolve func(string) string) string {
	below := func(k string) bool {
		for i := 0; k != "" && i <= len(byKey); i++ {
			if k == n.key {
				return true
			}
			p := byKey[k]
			if p == nil {
				return false
			}
			k = p.parent
		}
		return false
	}
	if n.parent != "" && !below(n.parent) {
		return n.parent
	}
	if m := n.lines[0].CompactMetadata; m != nil && m.PreservedMessages != nil {
		for i := len(m.PreservedMessages.UUIDs) - 1; i >= 0; i-- {
			k := resolve(m.PreservedMessages.UUIDs[i])
			if k != "" && !below(k) {
				return k
			}
		}
	}
	return ""
}

// ccCommand tells the lines Claude Code writes for a local command (its name,
// its output) from prompts.
func ccCommand(content json.RawMessage) bool {
	var t string
	if json.Unmarshal(content, &t) != nil {
		for _, b := range ccBlocks(content) {
			if b.Type == "text" {
				t = b.Text
				break
			}
		}
	}
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "<command-") || strings.HasPrefix(t, "<local-command-")
}

func ccHasToolResult(content json.RawMessage) bool {
	for _, b := range ccBlocks(content) {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

func ccBlocks(content json.RawMessage) []ccBlock {
	var bs []ccBlock
	if len(content) == 0 || content[0] != '[' {
		return nil
	}
	if json.Unmarshal(content, &bs) != nil {
		return nil
	}
	return bs
}

// ccContent converts user or tool-result content to pi blocks; blocks pi has no
// form for are returned apart, to be kept on the entry.
func ccContent(content json.RawMessage) (out []any, other []json.RawMessage) {
	if len(content) == 0 {
		return []any{}, nil
	}
	if content[0] == '"' {
		var s string
		_ = json.Unmarshal(content, &s)
		return []any{textBlock(s)}, nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(content, &raws) != nil {
		return []any{}, []json.RawMessage{content}
	}
	out = []any{}
	for _, r := range raws {
		var b ccBlock
		_ = json.Unmarshal(r, &b)
		switch {
		case b.Type == "text":
			out = append(out, textBlock(b.Text))
		case b.Type == "image" && b.Source != nil && b.Source.Type == "base64":
			out = append(out, imageBlock(b.Source.Data, b.Source.MediaType))
		default:
			other = append(other, r)
		}
	}
	return out, other
}

func ccStopReason(s *string, hasCall bool) string {
	switch {
	case s != nil && *s == "max_tokens":
		return "length"
	case s != nil && *s == "tool_use", hasCall:
		return "toolUse"
	}
	return "stop"
}

// ccEmit writes the entries of one node under parent and returns the key of the
// last one.
func ccEmit(b *builder, n *ccNode, parent string, tools map[string]string, s *Session) string {
	c := n.lines[0]
	ts := normTime(c.Timestamp, s.Header.Timestamp)
	origin := Origin{Line: n.line, ID: c.UUID}
	switch n.kind {
	case "title":
		b.add(&node{key: n.key, parent: parent, typ: "session_info", ts: ts, origin: origin,
			fields: map[string]any{"name": firstOf(c.AgentName, c.CustomTitle, c.AITitle)}})
		return n.key
	case "custom":
		b.add(&node{key: n.key, parent: parent, typ: "custom", ts: ts, origin: origin,
			fields: map[string]any{"customType": "claude-code." + ccTypeName(c), "data": n.raw}})
		return n.key
	case "compaction":
		summary := "Conversation compacted"
		if len(n.lines) > 1 && n.lines[1].Message != nil {
			blocks, _ := ccContent(n.lines[1].Message.Content)
			summary = joinText(blocks)
		}
		f := map[string]any{"summary": summary, "tokensBefore": 0.0, "firstKeptEntryId": n.key}
		if m := c.CompactMetadata; m != nil {
			f["tokensBefore"] = m.PreTokens
			if m.PreservedSegment != nil && m.PreservedSegment.HeadUUID != "" {
				f["firstKeptEntryId"] = m.PreservedSegment.HeadUUID
			}
		}
		s.Stats.Compactions++
		b.add(&node{key: n.key, parent: parent, typ: "compaction", ts: ts, origin: origin, fields: f})
		return n.key
	case "assistant":
		var content []any
		var other []json.RawMessage
		seen := map[string]bool{}
		hasCall := false
		last := n.lines[len(n.lines)-1]
		for _, l := range n.lines {
			var raws []json.RawMessage
			if err := json.Unmarshal(l.Message.Content, &raws); err != nil {
				var text string
				if json.Unmarshal(l.Message.Content, &text) == nil && text != "" {
					raws = []json.RawMessage{marshalJSON(textBlock(text))}
				}
			}
			for _, r := range raws {
				if seen[string(r)] { // a block repeated by streaming
					continue
				}
				seen[string(r)] = true
				var bl ccBlock
				_ = json.Unmarshal(r, &bl)
				switch bl.Type {
				case "text":
					content = append(content, textBlock(bl.Text))
				case "thinking":
					content = append(content, map[string]any{"type": "thinking", "thinking": bl.Thinking, "thinkingSignature": bl.Signature})
				case "redacted_thinking":
					content = append(content, map[string]any{"type": "thinking", "thinking": "", "thinkingSignature": bl.Data, "redacted": true})
				case "tool_use":
					args := bl.Input
					if len(args) == 0 || args[0] != '{' {
						args = json.RawMessage("{}")
					}
					hasCall = true
					content = append(content, map[string]any{"type": "toolCall", "id": bl.ID, "name": bl.Name, "arguments": args})
				default:
					other = append(other, r)
				}
			}
		}
		if content == nil {
			content = []any{}
		}
		m := map[string]any{"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
			"model": c.Message.Model, "stopReason": ccStopReason(last.Message.StopReason, hasCall), "timestamp": msTime(c.Timestamp)}
		// Streaming repeats the usage on every line of a response (message id and
		// request id): the last line has the final count; count it once.
		u := usage(0, 0, 0, 0)
		for i := len(n.lines) - 1; i >= 0; i-- {
			if x := n.lines[i].Message.Usage; x != nil {
				u = usage(x.Input, x.Output, x.CacheRead, x.CacheWrite)
				break
			}
		}
		m["usage"] = u
		f := map[string]any{"message": m}
		if len(other) > 0 {
			f["sourceBlocks"] = other
		}
		b.add(&node{key: n.key, parent: parent, typ: "message", ts: ts, origin: origin, fields: f})
		return n.key
	case "results":
		var raws, rest []json.RawMessage
		_ = json.Unmarshal(c.Message.Content, &raws)
		results := raws[:0:0]
		for _, r := range raws {
			var bl ccBlock
			_ = json.Unmarshal(r, &bl)
			if bl.Type == "tool_result" {
				results = append(results, r)
			} else {
				rest = append(rest, r)
			}
		}
		raws = results
		key := parent
		for i, r := range raws {
			var bl ccBlock
			_ = json.Unmarshal(r, &bl)
			content, other := ccContent(bl.Content)
			f := map[string]any{"message": toolResultMessage(bl.ToolUseID, tools[bl.ToolUseID], content, bl.IsError, msTime(c.Timestamp))}
			if len(other) > 0 {
				f["sourceBlocks"] = other
			}
			k := n.key
			if i > 0 {
				k = fmt.Sprintf("%s#%d", n.key, i+1)
			}
			o := origin
			o.Part = i + 1
			if len(raws) == 1 {
				o.Part = 0
			}
			b.add(&node{key: k, parent: key, typ: "message", ts: ts, origin: o, fields: f})
			key = k
		}
		if len(rest) > 0 {
			// Text sent with the results (an interruption note, a steering prompt).
			content, other := ccContent(marshalJSON(rest))
			f := map[string]any{"message": userMessage(content, msTime(c.Timestamp))}
			if len(other) > 0 {
				f["sourceBlocks"] = other
			}
			k := n.key + "#text"
			b.add(&node{key: k, parent: key, typ: "message", ts: ts, origin: Origin{Line: n.line, ID: c.UUID, Part: len(raws) + 1}, fields: f})
			s.Stats.Prompts++
			key = k
		}
		return key
	default: // prompt, meta
		content, other := ccContent(c.Message.Content)
		f := map[string]any{}
		if n.kind == "meta" {
			// Text Claude Code put in the conversation itself (caveats, command
			// wrappers, hook context): in the context, marked, not shown as a prompt.
			f["customType"] = "claude-code.meta"
			f["content"] = content
			f["display"] = false
			if len(other) > 0 {
				f["sourceBlocks"] = other
			}
			b.add(&node{key: n.key, parent: parent, typ: "custom_message", ts: ts, origin: origin, fields: f})
			return n.key
		}
		f["message"] = userMessage(content, msTime(c.Timestamp))
		if len(other) > 0 {
			f["sourceBlocks"] = other
		}
		b.add(&node{key: n.key, parent: parent, typ: "message", ts: ts, origin: origin, fields: f})
		return n.key
	}
}

func ccTypeName(c *ccLine) string {
	if c.Type == "" {
		return "unknown"
	}
	return c.Type
}

func joinText(blocks []any) string {
	var parts []string
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && m["type"] == "text" {
			parts = append(parts, m["text"].(string))
		}
	}
	return strings.Join(parts, "\n")
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
