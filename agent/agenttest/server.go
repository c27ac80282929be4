// Package agenttest is a scripted model provider for tests: an HTTP server
// that speaks the OpenAI chat-completions and Anthropic Messages wire formats
// (server-sent events with deltas), answers each request with the next
// scripted reply and records what it received.
package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call is a tool call in a scripted reply.
type Call struct {
	ID, Name, Args string
}

// Reply is one scripted answer.
type Reply struct {
	// An error reply: Status (429, 500, 400, …) with Body (JSON) and RetryAfter.
	Status     int
	RetryAfter string
	Body       string
	// Overflow answers with the provider's own context-overflow error.
	Overflow bool

	Thinking  string
	Text      string
	Calls     []Call
	Chunk     int  // split text and tool arguments into pieces of this many bytes (default 3)
	Stall     bool // send the thinking and text, then nothing until the client goes away
	Truncated bool // end the stream without a finish reason
	Input     int  // usage reported in the last chunk
	Output    int
	Stop      string // the finish reason (default from Calls)
	Delay     time.Duration
	// Hold, when not nil, keeps the answer back until it is closed (the
	// request is recorded at once): a test acts while a request is in flight.
	Hold <-chan struct{}
}

// Request is one request the server received.
type Request struct {
	Time   time.Time
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is the fake provider.
type Server struct {
	*httptest.Server
	Kind string // openai or anthropic

	mu       sync.Mutex
	script   []Reply
	requests []Request
}

// New starts a server of kind "openai" or "anthropic" answering with replies in order.
func New(t testing.TB, kind string, replies ...Reply) *Server {
	s := &Server{Kind: kind, script: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is what to give --base-url.
func (s *Server) BaseURL() string {
	if s.Kind == "openai" {
		return s.URL + "/v1"
	}
	return s.URL
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Time: time.Now(), Header: r.Header.Clone(), Body: body, Raw: raw})
	var rep Reply
	ok := len(s.script) > 0
	if ok {
		rep, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":{"message":"fake provider: no reply scripted for this request"}}`, http.StatusBadRequest)
		return
	}
	if rep.Delay > 0 {
		time.Sleep(rep.Delay)
	}
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
			return
		}
	}
	if rep.Overflow {
		rep.Status = 400
		if s.Kind == "openai" {
			rep.Body = `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
		} else {
			rep.Body = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`
		}
	}
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		w.WriteHeader(rep.Status)
		body := rep.Body
		if body == "" {
			body = fmt.Sprintf(`{"error":{"message":"scripted status %d","type":"server_error"}}`, rep.Status)
			if s.Kind == "anthropic" {
				body = fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":"scripted status %d"}}`, rep.Status)
			}
		}
		io.WriteString(w, body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	send := func(event, data string) {
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
		fl.Flush()
	}
	if s.Kind == "openai" {
		s.openai(r, rep, send)
	} else {
		s.anthropic(r, rep, send)
	}
}

func pieces(s string, n int) []string {
	if n <= 0 {
		n = 3
	}
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func stall(r *http.Request) {
	<-r.Context().Done()
}

func (s *Server) openai(r *http.Request, rep Reply, send func(string, string)) {
	chunk := func(delta map[string]any, finish any) string {
		return js(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces(rep.Thinking, rep.Chunk) {
		send("", chunk(map[string]any{"reasoning_content": p}, nil))
	}
	for _, p := range pieces(rep.Text, rep.Chunk) {
		send("", chunk(map[string]any{"content": p}, nil))
	}
	if rep.Stall {
		stall(r)
		return
	}
	for i, c := range rep.Calls {
		send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range pieces(c.Args, rep.Chunk) {
			send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	if rep.Truncated {
		return
	}
	stop := rep.Stop
	if stop == "" {
		stop = "stop"
		if len(rep.Calls) > 0 {
			stop = "tool_calls"
		}
	}
	send("", chunk(map[string]any{}, stop))
	send("", js(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": rep.Input, "completion_tokens": rep.Output, "total_tokens": rep.Input + rep.Output}}))
	send("", "[DONE]")
}

func (s *Server) anthropic(r *http.Request, rep Reply, send func(string, string)) {
	send("message_start", js(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"content": []any{}, "model": "fake", "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": rep.Input, "output_tokens": 1}}}))
	idx := 0
	block := func(start map[string]any, deltas []map[string]any) {
		send("content_block_start", js(map[string]any{"type": "content_block_start", "index": idx, "content_block": start}))
		for _, d := range deltas {
			send("content_block_delta", js(map[string]any{"type": "content_block_delta", "index": idx, "delta": d}))
		}
		send("content_block_stop", js(map[string]any{"type": "content_block_stop", "index": idx}))
		idx++
	}
	if rep.Thinking != "" {
		var ds []map[string]any
		for _, p := range pieces(rep.Thinking, rep.Chunk) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": p})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": "sig-" + fmt.Sprint(len(rep.Thinking))})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
	}
	if rep.Text != "" {
		var ds []map[string]any
		for _, p := range pieces(rep.Text, rep.Chunk) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": p})
		}
		block(map[string]any{"type": "text", "text": ""}, ds)
	}
	if rep.Stall {
		stall(r)
		return
	}
	for _, c := range rep.Calls {
		var ds []map[string]any
		for _, p := range pieces(c.Args, rep.Chunk) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		block(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}, ds)
	}
	if rep.Truncated {
		return
	}
	stop := rep.Stop
	if stop == "" {
		stop = "end_turn"
		if len(rep.Calls) > 0 {
			stop = "tool_use"
		}
	}
	send("message_delta", js(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": rep.Output}}))
	send("message_stop", `{"type":"message_stop"}`)
}

// Messages returns the conversation of a request in one shape for both
// formats: role and text, with tool calls as "call <name> <args>" and tool
// results as "result <id>: <text>" (Anthropic's tool results, sent in user
// messages, are listed each as role "tool").
func (s *Server) Messages(req Request) []Msg {
	var out []Msg
	msgs, _ := req.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		if s.Kind == "openai" {
			msg := Msg{Role: role, Text: textOf(mm["content"])}
			if id, ok := mm["tool_call_id"].(string); ok {
				msg.ID = id
			}
			calls, _ := mm["tool_calls"].([]any)
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				fn, _ := cm["function"].(map[string]any)
				msg.Calls = append(msg.Calls, Call{ID: fmt.Sprint(cm["id"]), Name: fmt.Sprint(fn["name"]), Args: fmt.Sprint(fn["arguments"])})
			}
			out = append(out, msg)
			continue
		}
		blocks, isList := mm["content"].([]any)
		if !isList {
			out = append(out, Msg{Role: role, Text: textOf(mm["content"])})
			continue
		}
		msg := Msg{Role: role}
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "text":
				msg.Text += fmt.Sprint(bm["text"])
			case "thinking":
				msg.Thinking += fmt.Sprint(bm["thinking"])
			case "tool_use":
				args, _ := json.Marshal(bm["input"])
				msg.Calls = append(msg.Calls, Call{ID: fmt.Sprint(bm["id"]), Name: fmt.Sprint(bm["name"]), Args: string(args)})
			case "tool_result":
				out = append(out, Msg{Role: "tool", ID: fmt.Sprint(bm["tool_use_id"]), Text: textOf(bm["content"])})
			}
		}
		if msg.Text != "" || len(msg.Calls) > 0 || msg.Thinking != "" {
			out = append(out, msg)
		}
	}
	return out
}

// Msg is one message of a request (see Messages).
type Msg struct {
	Role     string
	Text     string
	Thinking string
	ID       string // the call a tool result answers
	Calls    []Call
}

func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if bm, ok := b.(map[string]any); ok && bm["type"] == "text" {
				parts = append(parts, fmt.Sprint(bm["text"]))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
