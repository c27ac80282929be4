package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
)

// arbor -p --mode json must write pi 1.6.0's stream, so that scripts written
// for `pi --mode json` read arbor's unchanged. The shapes below are pi's
// types, member by member: pi-coding-agent's dist/core/agent-session.d.ts
// (AgentSessionEvent) and dist/modes/json-event.d.ts (toJsonEvent: a
// message_update has usage and no partial message; toolcall_start gains id
// and toolName), pi-agent-core's dist/types.d.ts (AgentEvent,
// AgentToolResult) and pi-ai's dist/types.d.ts (AssistantMessageEvent,
// AssistantMessage, Usage, ToolCall), in the pi16 peer's node_modules.

// member is one member of a shape: its JSON type ("string", "number",
// "boolean", "object", "array", "any"), whether pi may leave it out, and the
// shape of an object member when it is checked too.
type member struct {
	typ   string
	opt   bool
	shape string
}

func req(typ string) member       { return member{typ: typ} }
func opt(typ string) member       { return member{typ: typ, opt: true} }
func obj(shape string) member     { return member{typ: "object", shape: shape} }
func optObj(shape string) member  { return member{typ: "object", opt: true, shape: shape} }
func arr(elemShape string) member { return member{typ: "array", shape: elemShape} }

var piShapes = map[string]map[string]member{
	// AgentEvent (pi-agent-core) as AgentSessionEvent carries it.
	"agent_start":   {},
	"agent_end":     {"messages": arr("message"), "willRetry": req("boolean")},
	"agent_settled": {"aborted": req("boolean")},
	"turn_start":    {},
	"turn_end":      {"message": obj("message"), "toolResults": arr("message")},
	"message_start": {"message": obj("message")},
	"message_end":   {"message": obj("message")},
	// JsonMessageUpdateEvent (json-event.d.ts).
	"message_update":        {"usage": obj("Usage"), "assistantMessageEvent": obj("assistantMessageEvent")},
	"tool_execution_start":  {"toolCallId": req("string"), "toolName": req("string"), "args": req("any"), "parentToolCallId": opt("string")},
	"tool_execution_update": {"toolCallId": req("string"), "toolName": req("string"), "args": req("any"), "partialResult": req("any"), "parentToolCallId": opt("string")},
	"tool_execution_end": {"toolCallId": req("string"), "toolName": req("string"), "result": obj("AgentToolResult"), "isError": req("boolean"),
		"durationMs": opt("number"), "parentToolCallId": opt("string")},
	// AgentSessionEvent's own (agent-session.d.ts).
	"queue_update":           {"steering": req("array"), "followUp": req("array")},
	"compaction_start":       {"reason": req("string")},
	"compaction_end":         {"reason": req("string"), "result": optObj("CompactionResult"), "aborted": req("boolean"), "willRetry": req("boolean"), "errorMessage": opt("string")},
	"auto_retry_start":       {"attempt": req("number"), "maxAttempts": req("number"), "delayMs": req("number"), "errorMessage": req("string")},
	"auto_retry_end":         {"success": req("boolean"), "attempt": req("number"), "finalError": opt("string")},
	"thinking_level_changed": {"level": req("string")},
	"session_info_changed":   {"name": opt("string")},
	"entry_appended":         {"entry": req("object")},
	// arbor's own event (documented in docs/print.md), namespaced.
	"arbor_error": {"errorMessage": req("string"), "aborted": req("boolean")},
}

// piAssistantEvents are AssistantMessageEvent's kinds without partial, as
// toJsonEvent writes them. (start, done and error never reach a
// message_update: pi's agent loop turns them into message_start and
// message_end.)
var piAssistantEvents = map[string]map[string]member{
	"text_start":     {"contentIndex": req("number")},
	"text_delta":     {"contentIndex": req("number"), "delta": req("string")},
	"text_end":       {"contentIndex": req("number"), "content": req("string")},
	"thinking_start": {"contentIndex": req("number")},
	"thinking_delta": {"contentIndex": req("number"), "delta": req("string")},
	"thinking_end":   {"contentIndex": req("number"), "content": req("string")},
	"toolcall_start": {"contentIndex": req("number"), "id": req("string"), "toolName": req("string")},
	"toolcall_delta": {"contentIndex": req("number"), "delta": req("string")},
	"toolcall_end":   {"contentIndex": req("number"), "toolCall": obj("ToolCall")},
}

var piObjects = map[string]map[string]member{
	"Usage": {"input": req("number"), "output": req("number"), "cacheRead": req("number"), "cacheWrite": req("number"),
		"cacheWrite1h": opt("number"), "reasoning": opt("number"), "totalTokens": req("number"), "cost": obj("Cost")},
	"Cost": {"input": req("number"), "output": req("number"), "cacheRead": req("number"), "cacheWrite": req("number"), "total": req("number")},
	"ToolCall": {"type": req("string"), "id": req("string"), "name": req("string"), "arguments": req("object"),
		"thoughtSignature": opt("string"), "namespace": opt("string"), "argumentsError": opt("string")},
	"AssistantMessage": {"role": req("string"), "content": req("array"), "api": req("string"), "provider": req("string"), "model": req("string"),
		"responseModel": opt("string"), "responseId": opt("string"), "providerThinkingLevel": opt("string"), "thinkingLevel": opt("string"),
		"diagnostics": opt("array"), "usage": obj("Usage"), "stopReason": req("string"), "deferred": opt("object"), "errorMessage": opt("string"),
		"rawStopReason": opt("string"), "endTurn": opt("boolean"), "timestamp": req("number"), "durationMs": opt("number")},
	"UserMessage": {"role": req("string"), "content": req("any"), "timestamp": req("number")},
	"ToolResultMessage": {"role": req("string"), "toolCallId": req("string"), "toolName": req("string"), "content": req("array"),
		"details": opt("any"), "isError": req("boolean"), "timestamp": req("number"), "durationMs": opt("number"),
		"usage": optObj("Usage"), "nestedCalls": opt("array")},
	"AgentToolResult":  {"content": req("array"), "details": req("any"), "structuredContent": opt("any"), "usage": optObj("Usage"), "terminate": opt("boolean")},
	"CompactionResult": {"summary": req("string"), "firstKeptEntryId": req("string"), "tokensBefore": req("number"), "estimatedTokensAfter": opt("number"), "usage": optObj("Usage"), "details": opt("any")},
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "?"
}

// checkShape reports every member of v that pi's shape does not have, every
// required one missing and every one of another JSON type.
func checkShape(where string, v map[string]any, shape map[string]member) []string {
	var bad []string
	for name, m := range shape {
		x, ok := v[name]
		if !ok {
			if !m.opt {
				bad = append(bad, fmt.Sprintf("%s: no %s", where, name))
			}
			continue
		}
		if m.typ != "any" && jsonType(x) != m.typ {
			bad = append(bad, fmt.Sprintf("%s.%s is %s, want %s", where, name, jsonType(x), m.typ))
			continue
		}
		switch {
		case m.shape == "":
		case m.typ == "array":
			for i, e := range x.([]any) {
				bad = append(bad, checkNamed(fmt.Sprintf("%s.%s[%d]", where, name, i), e, m.shape)...)
			}
		default:
			bad = append(bad, checkNamed(where+"."+name, x, m.shape)...)
		}
	}
	for name := range v {
		if _, ok := shape[name]; !ok && name != "type" {
			bad = append(bad, fmt.Sprintf("%s: %s is not pi's", where, name))
		}
	}
	return bad
}

// checkNamed checks v against a named shape; "message" is the message of
// its role, "assistantMessageEvent" the shape of its kind.
func checkNamed(where string, x any, name string) []string {
	v, ok := x.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s is %s, want object", where, jsonType(x))}
	}
	switch name {
	case "message":
		switch v["role"] {
		case "assistant":
			name = "AssistantMessage"
		case "user":
			name = "UserMessage"
		case "toolResult":
			name = "ToolResultMessage"
		default:
			return []string{fmt.Sprintf("%s: role %v", where, v["role"])}
		}
	case "assistantMessageEvent":
		kind, _ := v["type"].(string)
		shape, ok := piAssistantEvents[kind]
		if !ok {
			return []string{fmt.Sprintf("%s: assistantMessageEvent %q is not on pi's stream", where, kind)}
		}
		return checkShape(where+"("+kind+")", v, shape)
	}
	return checkShape(where+"("+name+")", v, piObjects[name])
}

// piStream checks every line of a --mode json stdout against pi's shapes and
// returns the events (the header aside).
func piStream(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var header map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &header); err != nil || header["type"] != "session" ||
		jsonType(header["id"]) != "string" || jsonType(header["cwd"]) != "string" || jsonType(header["timestamp"]) != "string" || header["version"] != 3.0 {
		t.Fatalf("the first line is not the session's header: %s", lines[0])
	}
	var events []map[string]any
	for i, line := range lines[1:] {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d is not a JSON object: %s", i+2, line)
		}
		kind, _ := e["type"].(string)
		shape, ok := piShapes[kind]
		if !ok {
			t.Errorf("line %d: %q is no AgentSessionEvent: %s", i+2, kind, line)
			continue
		}
		for _, b := range checkShape(kind, e, shape) {
			t.Errorf("line %d: %s\n  %s", i+2, b, line)
		}
		events = append(events, e)
	}
	return events
}

// sequence is the events' types, each message_update as its
// assistantMessageEvent's kind, runs of one *_delta as one.
func sequence(events []map[string]any) string {
	var out []string
	for _, e := range events {
		kind := e["type"].(string)
		if kind == "message_update" {
			kind = e["assistantMessageEvent"].(map[string]any)["type"].(string)
			if strings.HasSuffix(kind, "_delta") && len(out) > 0 && out[len(out)-1] == kind {
				continue
			}
		}
		out = append(out, kind)
	}
	return strings.Join(out, " ")
}

func find(events []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["type"] == kind || e["type"] == "message_update" && e["assistantMessageEvent"].(map[string]any)["type"] == kind {
			out = append(out, e)
		}
	}
	return out
}

func ame(e map[string]any) map[string]any { return e["assistantMessageEvent"].(map[string]any) }

func TestPrintJSONIsPisStream(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind,
				agenttest.Reply{Thinking: "Two folders to look at.", Text: "Listing both.", Input: 40, Output: 12, Calls: []agenttest.Call{
					{ID: "call_a", Name: "ls", Args: `{"path":"."}`},
					{ID: "call_b", Name: "ls", Args: `{"path":"..","limit":5}`},
				}},
				agenttest.Reply{Text: "Both listed.", Input: 60, Output: 3})
			r := w.run("", with(s, "-p", "--mode", "json", "--tools", "ls", "look around")...)
			if r.code != 0 {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			events := piStream(t, r.stdout)
			want := "agent_start turn_start message_start message_end " +
				"message_start thinking_start thinking_delta thinking_end text_start text_delta text_end " +
				"toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_delta toolcall_end message_end " +
				"tool_execution_start tool_execution_end tool_execution_start tool_execution_end turn_end " +
				"turn_start message_start text_start text_delta text_end message_end turn_end agent_end agent_settled"
			if got := sequence(events); got != want {
				t.Errorf("events\n got %s\nwant %s", got, want)
			}
			if ends := find(events, "thinking_end"); len(ends) != 1 || ame(ends[0])["content"] != "Two folders to look at." {
				t.Errorf("thinking_end: %v", ends)
			}
			if ends := find(events, "text_end"); len(ends) != 2 || ame(ends[0])["content"] != "Listing both." || ame(ends[1])["content"] != "Both listed." {
				t.Errorf("text_end: %v", ends)
			}
			starts, ends := find(events, "toolcall_start"), find(events, "toolcall_end")
			wantArgs := []string{`{"path":"."}`, `{"limit":5,"path":".."}`}
			for i, id := range []string{"call_a", "call_b"} {
				if len(starts) != 2 || ame(starts[i])["id"] != id || ame(starts[i])["toolName"] != "ls" {
					t.Errorf("toolcall_start %d: %v", i, starts)
				}
				if len(ends) != 2 {
					t.Fatalf("toolcall_end: %v", ends)
				}
				call := ame(ends[i])["toolCall"].(map[string]any)
				args, _ := json.Marshal(call["arguments"])
				if call["type"] != "toolCall" || call["id"] != id || call["name"] != "ls" || string(args) != wantArgs[i] {
					t.Errorf("toolcall_end %d: %v", i, call)
				}
			}
			// The usage rides on every message_update; the last one of a
			// reply has what the provider reported by then.
			updates := find(events, "message_update")
			last := updates[len(updates)-1]["usage"].(map[string]any)
			if kind == "anthropic" && last["input"] != 60.0 {
				t.Errorf("usage of the last message_update: %v", last)
			}
			for _, e := range find(events, "tool_execution_end") {
				res := e["result"].(map[string]any)
				if c, _ := res["content"].([]any); len(c) != 1 || e["isError"] != false || jsonType(e["durationMs"]) != "number" {
					t.Errorf("tool_execution_end: %v", e)
				}
			}
			ae := find(events, "agent_end")[0]
			if msgs := ae["messages"].([]any); len(msgs) != 5 || ae["willRetry"] != false {
				t.Errorf("agent_end: %d messages, willRetry %v", len(msgs), ae["willRetry"])
			}
			if settled := events[len(events)-1]; settled["aborted"] != false {
				t.Errorf("agent_settled: %v", settled)
			}
		})
	}
}

func TestPrintJSONRetryErrorOverflow(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			w.config(`{"compaction":{"keepRecentTokens":1}}`)
			s := agenttest.New(t, kind, agenttest.Reply{Status: 429, RetryAfter: "0"}, agenttest.Reply{Text: "A1"})
			r := w.run("", with(s, "-p", "--mode", "json", "Q1")...)
			if r.code != 0 {
				t.Fatalf("retry: exit %d stderr %q", r.code, r.stderr)
			}
			events := piStream(t, r.stdout)
			starts, ends := find(events, "auto_retry_start"), find(events, "auto_retry_end")
			if len(starts) != 1 || starts[0]["attempt"] != 1.0 || starts[0]["maxAttempts"] != 3.0 ||
				!strings.Contains(starts[0]["errorMessage"].(string), "429") {
				t.Errorf("auto_retry_start: %v", starts)
			}
			if len(ends) != 1 || ends[0]["success"] != true || ends[0]["attempt"] != 1.0 {
				t.Errorf("auto_retry_end: %v", ends)
			}
			if got := sequence(events); !strings.Contains(got, "agent_start turn_start message_start message_end auto_retry_start message_start text_start") {
				t.Errorf("the retry is not announced before the reply: %s", got)
			}

			s.Add(agenttest.Reply{Overflow: true}, agenttest.Reply{Text: "the summary"}, agenttest.Reply{Text: "A2"})
			r = w.run("", with(s, "-p", "-c", "--mode", "json", "Q2")...)
			if r.code != 0 {
				t.Fatalf("overflow: exit %d stderr %q", r.code, r.stderr)
			}
			events = piStream(t, r.stdout)
			cs, ce := find(events, "compaction_start"), find(events, "compaction_end")
			if len(cs) != 1 || cs[0]["reason"] != "overflow" {
				t.Errorf("compaction_start: %v", cs)
			}
			if len(ce) != 1 || ce[0]["reason"] != "overflow" || ce[0]["willRetry"] != true || ce[0]["aborted"] != false {
				t.Fatalf("compaction_end: %v", ce)
			}
			if res := ce[0]["result"].(map[string]any); res["summary"] != "the summary" || res["tokensBefore"].(float64) <= 0 {
				t.Errorf("compaction_end's result: %v", res)
			}

			body := `{"error":{"message":"no such model","type":"invalid_request_error"}}`
			if kind == "anthropic" {
				body = `{"type":"error","error":{"type":"not_found_error","message":"no such model"}}`
			}
			s.Add(agenttest.Reply{Status: 404, Body: body})
			r = w.run("", with(s, "-p", "-c", "--mode", "json", "Q3")...)
			if r.code != 1 {
				t.Fatalf("error: exit %d stderr %q", r.code, r.stderr)
			}
			events = piStream(t, r.stdout)
			if got := sequence(events); got != "agent_start turn_start message_start message_end message_start message_end turn_end agent_end arbor_error agent_settled" {
				t.Errorf("events of a failed request: %s", got)
			}
			m := find(events, "turn_end")[0]["message"].(map[string]any)
			if m["stopReason"] != "error" || !strings.Contains(m["errorMessage"].(string), "no such model") {
				t.Errorf("the failed reply: %v", m)
			}
		})
	}
}

func TestPrintJSONAbort(t *testing.T) {
	w := newWorld(t)
	s := agenttest.New(t, "anthropic", agenttest.Reply{Thinking: "hmm", Text: "a partial ans", Stall: true})
	c := w.cmd("", with(s, "-p", "--mode", "json", "Q")...)
	var out, errb lockedBuffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out.String(), `"text_delta"`) })
	c.Process.Signal(syscall.SIGINT)
	c.Wait()
	if c.ProcessState.ExitCode() != 1 {
		t.Fatalf("exit %d stderr %q", c.ProcessState.ExitCode(), errb.String())
	}
	events := piStream(t, out.String())
	got := sequence(events)
	// No text_end: pi's providers close no block of a reply that was aborted.
	if !strings.HasSuffix(got, "text_start text_delta message_end turn_end agent_end arbor_error agent_settled") {
		t.Errorf("events of an abort: %s", got)
	}
	m := find(events, "message_end")[1]["message"].(map[string]any)
	if m["stopReason"] != "aborted" || !slices.ContainsFunc(m["content"].([]any), func(b any) bool { return b.(map[string]any)["text"] == "a partial ans" }) {
		t.Errorf("the aborted reply: %v", m)
	}
	if e := events[len(events)-1]; e["aborted"] != true {
		t.Errorf("agent_settled: %v", e)
	}
}

// lockedBuffer is a buffer a running command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
