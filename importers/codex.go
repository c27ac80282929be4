package importers

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Codex rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): every line is
// {"timestamp","type","payload"}; history is linear, the model is per turn, a
// rollback drops the newest turns on replay and a compaction replaces the
// model's context. See ../../shared/reference/formats/NOTES.md §2.

type cxLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// Very old rollouts start with a bare meta object and then state records.
	ID         string `json:"id"`
	RecordType string `json:"record_type"`
	Cwd        string `json:"cwd"`
}

type cxMeta struct {
	ID            string          `json:"id"`
	Timestamp     string          `json:"timestamp"`
	Cwd           string          `json:"cwd"`
	ForkedFromID  string          `json:"forked_from_id"`
	ParentThread  string          `json:"parent_thread_id"`
	ModelProvider string          `json:"model_provider"`
	Source        json.RawMessage `json:"source"`
}

type cxItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Message   string          `json:"message"` // event_msg user_message / agent_message, compacted
	// event_msg
	NumTurns    int             `json:"num_turns"`
	Info        json.RawMessage `json:"info"`
	Model       string          `json:"model"` // turn_context
	Replacement json.RawMessage `json:"replacement_history"`
	Action      json.RawMessage `json:"action"` // local_shell_call
	Images      []string        `json:"images"`
}

type cxBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

// Codex event_msg records that only drive its interface or repeat history.
var cxSkippedEvents = map[string]bool{
	"task_started": true, "task_complete": true, "turn_started": true, "turn_complete": true, "agent_reasoning": true,
	"agent_reasoning_raw_content": true, "agent_reasoning_section_break": true, "exec_command_begin": true,
	"exec_command_end": true, "exec_command_output_delta": true, "patch_apply_begin": true, "patch_apply_end": true,
	"context_compacted": true, "turn_aborted": true, "undo_started": true, "undo_completed": true, "mcp_tool_call_begin": true,
	"mcp_tool_call_end": true, "web_search_begin": true, "web_search_end": true, "collab_agent_spawn_begin": true,
	"collab_agent_spawn_end": true, "collab_tool_call": true, "turn_diff": true, "plan_update": true, "error": true,
	"stream_error": true, "background_event": true, "view_image_tool_call": true, "entered_review_mode": true,
	"exited_review_mode": true, "item_started": true, "item_completed": true, "shutdown_complete": true,
	"mcp_startup_update": true, "mcp_startup_complete": true, "session_configured": true,
	"agent_message_delta": true, "agent_reasoning_delta": true, "user_message_delta": true,
}

// Response item types, for rollouts that wrote them bare.
var cxItemTypes = map[string]bool{"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true, "local_shell_call_output": true}

// Top-level record types that carry no conversation.
var cxSkippedTypes = map[string]bool{"inter_agent_communication_metadata": true, "world_state": true}

// cxInjected tells context Codex injects into the history as user messages from
// a prompt the user typed.
func cxInjected(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
		"<permissions instructions>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>", "<skill>", "<collaboration_mode>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

type cxReader struct {
	s        *Session
	b        *builder
	cur      string // key of the entry new ones hang under
	turns    []string
	prompts  []string // the user's messages since the last replacement of the context
	model    string
	provider string
	tools    map[string]string
	asst     map[string]any // the assistant message being built
	asstKey  string
	asstLine int
	asstTs   string
	// A message is written twice, as a response item and as an event_msg, in
	// either order: the first is imported and the second, matched by text, is
	// skipped. Matching without looking ahead keeps a re-import of a grown file
	// the same.
	unpaired map[string]int // "kind\x00role\x00text" -> copies imported and not yet matched
}

func readCodex(in Input) *Session {
	s := &Session{}
	r := &cxReader{s: s, tools: map[string]string{}, unpaired: map[string]int{}, provider: "openai"}
	var recs []cxLine
	var nums []int
	var raws [][]byte
	for _, l := range lines(in.Data) {
		s.Stats.Lines++
		var c cxLine
		if err := json.Unmarshal(l.text, &c); err != nil {
			s.Damage = append(s.Damage, LineError{l.n, "not a JSON object: " + err.Error()})
			continue
		}
		recs = append(recs, c)
		nums = append(nums, l.n)
		raws = append(raws, l.text)
	}
	// The first session_meta is the file's identity; a fork or sub-agent replays
	// its parent's, which come later.
	var meta cxMeta
	for _, c := range recs {
		switch {
		case c.Type == "session_meta":
			_ = json.Unmarshal(c.Payload, &meta)
			if meta.Timestamp == "" {
				meta.Timestamp = c.Timestamp
			}
		case c.Type == "" && c.ID != "" && c.RecordType == "":
			_ = json.Unmarshal(rawOf(c), &meta)
		default:
			continue
		}
		break
	}
	sourceID := meta.ID
	stem := strings.TrimSuffix(filepath.Base(in.Path), ".jsonl")
	if sourceID == "" {
		sourceID = stem
	}
	h := Header{ID: stableUUID(string(Codex) + "\x00" + sourceID), Cwd: meta.Cwd, Timestamp: normTime(meta.Timestamp, ""),
		From: Source{Format: string(Codex), Path: in.Path, ID: sourceID}}
	if meta.ModelProvider != "" {
		r.provider = meta.ModelProvider
	}
	h.From.Parent = meta.ForkedFromID
	var src struct {
		Subagent struct {
			ThreadSpawn struct {
				Parent string `json:"parent_thread_id"`
				Call   string `json:"spawn_call_id"`
			} `json:"thread_spawn"`
		} `json:"subagent"`
	}
	if len(meta.Source) > 0 && meta.Source[0] == '{' && json.Unmarshal(meta.Source, &src) == nil && src.Subagent.ThreadSpawn.Parent != "" {
		h.From.Parent = src.Subagent.ThreadSpawn.Parent
		h.From.ToolCall = src.Subagent.ThreadSpawn.Call
		h.From.Sidechain = true
	}
	if h.From.Parent == "" {
		h.From.Parent = meta.ParentThread
	}
	if h.From.Parent != "" {
		h.ParentSession = cxFindRollout(in.Path, h.From.Parent)
	}
	if h.Timestamp == "" && len(recs) > 0 {
		h.Timestamp = normTime(recs[0].Timestamp, "")
	}
	if h.Timestamp == "" {
		h.Timestamp = isoTime(in.ModTime)
	}
	s.Header = h
	r.b = newBuilder(h.ID)
	for i, c := range recs {
		r.record(c, nums[i], raws[i])
	}
	r.flush()
	s.Lines, _ = r.b.finish(r.cur)
	s.Stats.Custom += r.b.orphans
	return s
}

func rawOf(c cxLine) []byte {
	b, _ := json.Marshal(map[string]any{"id": c.ID, "cwd": c.Cwd})
	return b
}

// cxFindRollout looks for the rollout of thread id under the sessions folder
// that holds path (…/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl).
func cxFindRollout(path, id string) string {
	if id == "" || strings.ContainsAny(id, `/\*?[`) {
		return ""
	}
	dir := filepath.Dir(path)
	for range 4 {
		m, _ := filepath.Glob(filepath.Join(dir, "rollout-*"+id+".jsonl"))
		if len(m) == 0 {
			m, _ = filepath.Glob(filepath.Join(dir, "*", "*", "*", "rollout-*"+id+".jsonl"))
		}
		if len(m) > 0 {
			return m[0]
		}
		if filepath.Base(dir) == "sessions" {
			break
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

func (r *cxReader) add(key, typ, ts string, line int, fields map[string]any) {
	r.b.add(&node{key: key, parent: r.cur, typ: typ, ts: ts, origin: Origin{Line: line}, fields: fields})
	r.cur = key
}

func (r *cxReader) custom(kind string, line int, ts string, raw []byte) {
	r.flush()
	r.s.Stats.Custom++
	r.add(fmt.Sprintf("L%d", line), "custom", ts, line, map[string]any{"customType": "codex." + kind, "data": json.RawMessage(raw)})
}

// assistant returns the message being built, starting one when none is.
func (r *cxReader) assistant(line int, ts string) map[string]any {
	if r.asst == nil {
		r.asst = map[string]any{"role": "assistant", "content": []any{}, "api": "openai-responses", "provider": r.provider,
			"model": r.model, "stopReason": "stop", "timestamp": msTime(ts), "usage": usage(0, 0, 0, 0)}
		r.asstKey = fmt.Sprintf("L%d", line)
		r.asstLine = line
		r.asstTs = ts
	}
	return r.asst
}

func (r *cxReader) appendBlock(line int, ts string, block map[string]any) {
	// A new response starts with reasoning: close the one before it.
	if block["type"] == "thinking" && r.asst != nil && len(r.asst["content"].([]any)) > 0 {
		r.flush()
	}
	m := r.assistant(line, ts)
	m["content"] = append(m["content"].([]any), block)
	if block["type"] == "toolCall" {
		m["stopReason"] = "toolUse"
	}
}

func (r *cxReader) flush() {
	if r.asst == nil {
		return
	}
	r.add(r.asstKey, "message", normTime(r.asstTs, r.s.Header.Timestamp), r.asstLine, map[string]any{"message": r.asst})
	r.asst = nil
}

func (r *cxReader) record(c cxLine, line int, raw []byte) {
	ts := normTime(c.Timestamp, r.s.Header.Timestamp)
	if c.Type == "" {
		// The bare meta line and state records of the oldest rollouts.
		if c.ID != "" || c.RecordType != "" {
			r.s.Stats.Skipped++
			return
		}
		r.custom("unknown", line, ts, raw)
		return
	}
	var it cxItem
	if len(c.Payload) > 0 && c.Payload[0] == '{' {
		_ = json.Unmarshal(c.Payload, &it)
	} else if len(c.Payload) == 0 && cxItemTypes[c.Type] {
		// The oldest rollouts write response items without the envelope.
		_ = json.Unmarshal(raw, &it)
		r.item(it, line, ts, raw)
		return
	}
	switch c.Type {
	case "session_meta":
		r.s.Stats.Skipped++ // identity is in the header; later ones are a parent's replayed
	case "turn_context":
		r.s.Stats.Skipped++
		if it.Model != "" && it.Model != r.model {
			r.flush()
			r.model = it.Model
			r.add(fmt.Sprintf("L%d", line), "model_change", ts, line, map[string]any{"provider": r.provider, "modelId": it.Model})
			r.s.Stats.Skipped--
		}
	case "response_item":
		r.item(it, line, ts, raw)
	case "event_msg":
		r.event(it, line, ts, raw)
	case "compacted":
		r.flush()
		summary := it.Message
		if len(it.Replacement) > 0 && it.Replacement[0] == '[' {
			summary = cxRenderHistory(summary, it.Replacement)
			r.prompts = nil
		} else if len(r.prompts) > 0 {
			// Codex rebuilds a legacy compaction's context from the user's
			// messages and the summary (compact::build_compacted_history).
			var b strings.Builder
			b.WriteString("The user's messages so far:\n")
			for _, p := range r.prompts {
				fmt.Fprintf(&b, "\n[user]\n%s\n", p)
			}
			summary = b.String() + "\n" + summary
		}
		key := fmt.Sprintf("L%d", line)
		r.add(key, "compaction", ts, line, map[string]any{"summary": summary, "firstKeptEntryId": key, "tokensBefore": 0.0})
		r.s.Stats.Compactions++
		r.turns = nil
	default:
		if cxSkippedTypes[c.Type] {
			r.s.Stats.Skipped++
			return
		}
		r.custom(c.Type, line, ts, raw)
	}
}

// duplicate records a copy of a message seen as an item or an event; it reports
// (and counts as skipped) one that matches a copy of the other kind already
// imported.
func (r *cxReader) duplicate(kind, role, text string) bool {
	t := strings.TrimSpace(text)
	other := "event"
	if kind == "event" {
		other = "item"
	}
	if k := other + "\x00" + role + "\x00" + t; r.unpaired[k] > 0 {
		r.unpaired[k]--
		r.s.Stats.Skipped++
		return true
	}
	r.unpaired[kind+"\x00"+role+"\x00"+t]++
	return false
}

func (r *cxReader) userTurn(key, text string) {
	r.turns = append(r.turns, key)
	r.prompts = append(r.prompts, text)
	r.s.Stats.Prompts++
}

func (r *cxReader) item(it cxItem, line int, ts string, raw []byte) {
	key := fmt.Sprintf("L%d", line)
	switch it.Type {
	case "message":
		text := cxText(it.Content)
		switch it.Role {
		case "assistant":
			if r.duplicate("item", "assistant", text) {
				return
			}
			r.appendBlock(line, ts, textBlock(text))
		case "user":
			if cxInjected(text) {
				r.flush()
				r.add(key, "custom_message", ts, line, map[string]any{"customType": "codex.context", "content": cxContent(it.Content), "display": false})
				return
			}
			if r.duplicate("item", "user", text) {
				return
			}
			r.flush()
			r.add(key, "message", ts, line, map[string]any{"message": userMessage(cxContent(it.Content), msTime(ts))})
			r.userTurn(key, text)
		default: // developer, system: instructions Codex sends, not typed
			r.flush()
			r.add(key, "custom_message", ts, line, map[string]any{"customType": "codex." + cxSafeName(it.Role), "content": cxContent(it.Content), "display": false})
		}
	case "reasoning":
		var parts []cxBlock
		_ = json.Unmarshal(it.Summary, &parts)
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		r.appendBlock(line, ts, map[string]any{"type": "thinking", "thinking": strings.Join(texts, "\n\n")})
	case "function_call", "custom_tool_call", "local_shell_call":
		args := json.RawMessage("{}")
		switch {
		case it.Type == "custom_tool_call":
			args = marshalJSON(map[string]any{"input": it.Input})
		case it.Type == "local_shell_call" && len(it.Action) > 0 && it.Action[0] == '{':
			args = it.Action
		case json.Valid([]byte(it.Arguments)) && strings.HasPrefix(strings.TrimSpace(it.Arguments), "{"):
			args = json.RawMessage(it.Arguments)
		case it.Arguments != "":
			args = marshalJSON(map[string]any{"arguments": it.Arguments})
		}
		name := it.Name
		if name == "" {
			name = it.Type
		}
		r.tools[it.CallID] = name
		r.appendBlock(line, ts, map[string]any{"type": "toolCall", "id": it.CallID, "name": name, "arguments": args})
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		name, ok := r.tools[it.CallID]
		if !ok {
			// An output whose call is not in this file (it was compacted away).
			r.custom("orphan_output", line, ts, raw)
			return
		}
		r.flush()
		content, isError := cxOutput(it.Output)
		r.add(key, "message", ts, line, map[string]any{"message": toolResultMessage(it.CallID, name, content, isError, msTime(ts))})
	case "ghost_snapshot":
		r.s.Stats.Skipped++ // a file-undo checkpoint
	default:
		r.custom(cxSafeName(it.Type), line, ts, raw)
	}
}

func (r *cxReader) event(it cxItem, line int, ts string, raw []byte) {
	key := fmt.Sprintf("L%d", line)
	switch it.Type {
	case "user_message":
		if r.duplicate("event", "user", it.Message) {
			return
		}
		r.flush()
		content := []any{textBlock(it.Message)}
		for _, img := range it.Images {
			if b := cxImage(img); b != nil {
				content = append(content, b)
			}
		}
		r.add(key, "message", ts, line, map[string]any{"message": userMessage(content, msTime(ts))})
		r.userTurn(key, it.Message)
	case "agent_message":
		if r.duplicate("event", "assistant", it.Message) {
			return
		}
		r.appendBlock(line, ts, textBlock(it.Message))
	case "token_count":
		r.s.Stats.Skipped++
		var info struct {
			Last *struct {
				Input     float64 `json:"input_tokens"`
				Cached    float64 `json:"cached_input_tokens"`
				Output    float64 `json:"output_tokens"`
				Reasoning float64 `json:"reasoning_output_tokens"`
			} `json:"last_token_usage"`
		}
		if json.Unmarshal(it.Info, &info) == nil && info.Last != nil && r.asst != nil {
			r.asst["usage"] = usage(info.Last.Input-info.Last.Cached, info.Last.Output, info.Last.Cached, 0)
		}
	case "thread_rolled_back":
		// The newest turns are dropped from the model's history but stay in the
		// file: new turns continue from before them, and what was dropped stays
		// as an abandoned branch. The marker keeps the event in the tree.
		r.flush()
		n := it.NumTurns
		if n <= 0 || len(r.turns) == 0 {
			r.custom("thread_rolled_back", line, ts, raw)
			return
		}
		if n > len(r.turns) {
			n = len(r.turns)
		}
		start := r.turns[len(r.turns)-n]
		r.turns = r.turns[:len(r.turns)-n]
		r.prompts = r.prompts[:max(0, len(r.prompts)-n)]
		r.cur = r.b.byKey[start].parent
		r.s.Stats.Branches++
		r.s.Stats.Custom++
		r.add(key, "custom", ts, line, map[string]any{"customType": "codex.thread_rolled_back", "data": json.RawMessage(raw)})
	case "task_complete", "turn_complete":
		r.s.Stats.Skipped++
	default:
		if cxSkippedEvents[it.Type] {
			r.s.Stats.Skipped++
			return
		}
		r.custom("event."+cxSafeName(it.Type), line, ts, raw)
	}
}

// cxSafeName keeps a source-given type name to letters, digits, _ - and .
func cxSafeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	if s == "" || len(s) > 64 {
		return "unknown"
	}
	return s
}

func cxText(content json.RawMessage) string {
	var bs []cxBlock
	if json.Unmarshal(content, &bs) != nil {
		var s string
		_ = json.Unmarshal(content, &s)
		return s
	}
	var parts []string
	for _, b := range bs {
		if b.Type == "input_text" || b.Type == "output_text" || b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func cxContent(content json.RawMessage) []any {
	out := []any{}
	var bs []cxBlock
	if json.Unmarshal(content, &bs) != nil {
		var s string
		if json.Unmarshal(content, &s) == nil {
			out = append(out, textBlock(s))
		}
		return out
	}
	for _, b := range bs {
		switch b.Type {
		case "input_text", "output_text", "text":
			out = append(out, textBlock(b.Text))
		case "input_image":
			if img := cxImage(b.ImageURL); img != nil {
				out = append(out, img)
			}
		}
	}
	return out
}

// cxImage reads a data: URL image; other URLs are not fetched.
func cxImage(url string) map[string]any {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return nil
	}
	mime, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return nil
	}
	return imageBlock(data, mime)
}

// cxOutput reads a tool output: a string, a list of content items, or an object
// with content and success.
func cxOutput(out json.RawMessage) (content []any, isError bool) {
	if len(out) == 0 {
		return []any{}, false
	}
	switch out[0] {
	case '"':
		var s string
		_ = json.Unmarshal(out, &s)
		return []any{textBlock(s)}, false
	case '[':
		return cxContent(out), false
	case '{':
		var o struct {
			Content json.RawMessage `json:"content"`
			Success *bool           `json:"success"`
		}
		if json.Unmarshal(out, &o) == nil && len(o.Content) > 0 {
			c, _ := cxOutput(o.Content)
			return c, o.Success != nil && !*o.Success
		}
	}
	return []any{textBlock(string(out))}, false
}

// cxRenderHistory writes a compaction's replacement history as the summary text:
// the model's whole new context, in order.
func cxRenderHistory(message string, hist json.RawMessage) string {
	var items []cxItem
	_ = json.Unmarshal(hist, &items)
	var b strings.Builder
	if message != "" {
		b.WriteString(message)
		b.WriteString("\n\n")
	}
	b.WriteString("The conversation so far, as Codex kept it when compacting:\n")
	for _, it := range items {
		switch it.Type {
		case "message":
			fmt.Fprintf(&b, "\n[%s]\n%s\n", it.Role, cxText(it.Content))
		case "compaction":
			b.WriteString("\n[compaction: encrypted summary not readable]\n")
		case "function_call", "custom_tool_call":
			fmt.Fprintf(&b, "\n[tool call %s]\n%s%s\n", it.Name, it.Arguments, it.Input)
		case "function_call_output", "custom_tool_call_output":
			c, _ := cxOutput(it.Output)
			fmt.Fprintf(&b, "\n[tool result]\n%s\n", joinText(c))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
