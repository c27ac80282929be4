package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
	"github.com/arborlog/arbor/window"
)

// testConfig is an engine on a fresh arbor home whose model is the fake provider.
func testConfig(t testing.TB, fake *agenttest.Server, home string) Config {
	t.Helper()
	cwd := t.TempDir()
	dir := filepath.Join(home, "sessions")
	st := store.OpenFiles(home)
	t.Cleanup(func() { _ = st.Close() })
	tools, err := agent.Tools([]string{"read", "ls"})
	if err != nil {
		t.Fatal(err)
	}
	return Config{Store: st, Scope: catalog.Scope{Dir: dir}, Cwd: cwd, Where: dir,
		NewAgent: func(model string) (*agent.Agent, error) {
			if model == "" {
				model = "fake-model"
			}
			if model == "missing" {
				return nil, fmt.Errorf("no model %q in the configuration", model)
			}
			p := agent.NewOpenAI(agent.Options{Name: "openai", BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: -1})
			return &agent.Agent{Provider: p, Model: agent.Model{Provider: "openai", ID: model}, Thinking: "off",
				Tools: tools, Env: &agent.ToolEnv{Cwd: cwd},
				Compaction: compaction.Settings{Enabled: true, ReserveTokens: 100, KeepRecentTokens: 1}}, nil
		},
		Models: func() []string { return []string{"fake-model", "other"} },
		Export: func(l *session.Log, ref, out string) (string, error) {
			if out == "" {
				out = filepath.Join(cwd, "page.html")
			}
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			return out, export.HTML(f, l, export.Options{Source: ref})
		},
		Fork: func(ref string, l *session.Log, leaf string) (store.Session, error) {
			s, err := jsonl.BranchFrom(ref, l, leaf)
			if err != nil {
				return nil, err
			}
			return store.FileSession{Session: s}, nil
		},
	}
}

// client speaks raw JSON lines to a server.
type client struct {
	t     testing.TB
	in    io.WriteCloser
	lines chan map[string]any
	id    int
}

func startServe(t testing.TB, cfg Config) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Serve(cfg, inR, outW)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop at the end of its input")
		}
	})
	return newClient(t, outR, inW)
}

// newClient reads the server's lines from out, writes requests to in, and
// waits for the ready notification.
func newClient(t testing.TB, out io.Reader, in io.WriteCloser) *client {
	t.Helper()
	c := &client{t: t, in: in, lines: make(chan map[string]any, 1000)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			c.lines <- m
		}
		close(c.lines)
	}()
	ready := c.next()
	if ready["method"] != "ready" {
		t.Fatalf("first line %v, want the ready notification", ready)
	}
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server closed its output")
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no line from the server in 10 s")
	}
	return nil
}

// call sends a request and returns its response, collecting the
// notifications that came before it.
func (c *client) call(method string, params any) (map[string]any, []map[string]any) {
	c.t.Helper()
	c.id++
	req := map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, _ := json.Marshal(req)
	c.send(string(b))
	return c.until(c.id)
}

func (c *client) until(id int) (map[string]any, []map[string]any) {
	c.t.Helper()
	var notes []map[string]any
	for {
		m := c.next()
		if _, ok := m["id"]; !ok {
			notes = append(notes, m)
			continue
		}
		if got, _ := m["id"].(float64); int(got) != id {
			c.t.Fatalf("response %v, want id %d", m, id)
		}
		return m, notes
	}
}

func result(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	if resp["error"] != nil {
		t.Fatalf("error %v", resp["error"])
	}
	r, _ := resp["result"].(map[string]any)
	return r
}

func errorOf(t *testing.T, resp map[string]any, code int) map[string]any {
	t.Helper()
	e, _ := resp["error"].(map[string]any)
	if e == nil {
		t.Fatalf("response %v, want error %d", resp, code)
	}
	if got, _ := e["code"].(float64); int(got) != code {
		t.Fatalf("error %v, want code %d", e, code)
	}
	return e
}

func methodsOf(notes []map[string]any) []string {
	var out []string
	for _, n := range notes {
		out = append(out, fmt.Sprint(n["method"]))
	}
	return out
}

func TestServePromptStreamsAndAnswers(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Thinking: "hmm", Calls: []agenttest.Call{{ID: "c1", Name: "ls", Args: `{}`}}, Input: 10, Output: 5},
		agenttest.Reply{Text: "all done here", Input: 20, Output: 7})
	c := startServe(t, testConfig(t, fake, t.TempDir()))
	resp, notes := c.call("prompt", map[string]any{"message": "list the files"})
	if got := result(t, resp)["reply"]; got != "all done here" {
		t.Errorf("reply %v", got)
	}
	got := strings.Join(methodsOf(notes), " ")
	for _, want := range []string{"agent/start", "reasoning/delta", "tool/call", "tool/result", "message/delta", "usage", "agent/end"} {
		if !strings.Contains(got, want) {
			t.Errorf("notifications %s lack %s", got, want)
		}
	}
	if !strings.HasPrefix(got, "agent/start") || !strings.HasSuffix(got, "agent/end") {
		t.Errorf("notifications %s: want agent/start first and agent/end last", got)
	}
	var text string
	for _, n := range notes {
		if n["method"] == "message/delta" {
			text += n["params"].(map[string]any)["delta"].(string)
		}
	}
	if text != "all done here" {
		t.Errorf("deltas add up to %q", text)
	}
	st := result(t, first(c.call("getState", nil)))
	if st["model"] != "fake-model" || st["messageCount"].(float64) != 4 || st["isStreaming"] != false {
		t.Errorf("getState %v", st)
	}
	msgs := result(t, first(c.call("getMessages", nil)))["messages"].([]any)
	if len(msgs) != 4 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("getMessages %v", msgs)
	}
	stats := result(t, first(c.call("getSessionStats", nil)))
	u := stats["apiUsage"].(map[string]any)
	if u["requestCount"].(float64) != 2 || u["totalInputTokens"].(float64) != 30 {
		t.Errorf("getSessionStats %v", stats)
	}
	// rho's whole ContextStats, the figures arbor stats --json gives for the
	// same window and reserve; clients commonly send {} or [] as params.
	for _, params := range []any{map[string]any{}, []any{}} {
		again := result(t, first(c.call("getSessionStats", params)))
		if fmt.Sprint(again) != fmt.Sprint(stats) {
			t.Errorf("getSessionStats with params %v: %v, without: %v", params, again, stats)
		}
	}
	if r, _ := c.call("getSessionStats", map[string]any{"x": 1}); r["error"] == nil {
		t.Errorf("getSessionStats with a parameter: %v", r)
	}
	path := result(t, first(c.call("getState", nil)))["sessionFile"].(string)
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := window.Measure(l.Cursor(""), window.StatsOptions{Reserve: 100})
	sum := func(m any) (n float64) {
		for _, v := range m.(map[string]any) {
			n += v.(float64)
		}
		return n
	}
	for k, v := range map[string]float64{"contextWindow": float64(want.ContextWindow), "completionReserve": 100, "estimatedUsed": float64(want.EstimatedUsed),
		"pathEntryCount": float64(want.PathEntryCount), "messageCount": float64(want.MessageCount), "compactionTokens": 0, "compactedEntryCount": 0,
		"systemPromptTokens": 0} {
		if stats[k] != v {
			t.Errorf("getSessionStats %s = %v, arbor stats says %v", k, stats[k], v)
		}
	}
	for _, k := range []string{"roleTokens", "resolutionTokens", "phaseTokens"} {
		if got := sum(stats[k]) + stats["beyondMessages"].(float64); got != stats["estimatedUsed"] {
			t.Errorf("getSessionStats %s adds up to %v with beyondMessages, not estimatedUsed %v", k, got, stats["estimatedUsed"])
		}
	}
	if stats["toolSchemaTokens"].(float64) <= 0 {
		t.Errorf("getSessionStats toolSchemaTokens %v: the session's agent has tools", stats["toolSchemaTokens"])
	}
}

func first(resp map[string]any, _ []map[string]any) map[string]any { return resp }

func TestServeProtocolErrors(t *testing.T) {
	c := startServe(t, testConfig(t, agenttest.New(t, "openai"), t.TempDir()))
	c.send(`{"jsonrpc":"2.0","id":1,"method":`)
	errorOf(t, c.next(), -32700)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"noSuchMethod"}`)
	e := errorOf(t, first(c.until(2)), -32601)
	if !strings.Contains(fmt.Sprint(e["data"]), "noSuchMethod") {
		t.Errorf("unknown method error %v does not name it", e)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"prompt","params":{"message":42}}`)
	errorOf(t, first(c.until(3)), -32602)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"prompt","params":{"message":"  "}}`)
	e = errorOf(t, first(c.until(4)), -32602)
	if e["data"].(map[string]any)["field"] != "message" {
		t.Errorf("empty prompt error %v does not name the field", e)
	}
	c.send(`[]`)
	errorOf(t, c.next(), -32600)
	c.id = 4
	e = errorOf(t, first(c.call("resumeSession", map[string]any{"path": "no-such-session"})), -32602)
	if e["data"].(map[string]any)["field"] != "path" {
		t.Errorf("unknown session error %v", e)
	}
	errorOf(t, first(c.call("setModel", map[string]any{"model": "missing"})), -32602)
	errorOf(t, first(c.call("switchBranch", map[string]any{"cursorId": "nope"})), -32602)
	errorOf(t, first(c.call("branchTo", map[string]any{"entryId": "deadbeef"})), -32602)
	errorOf(t, first(c.call("label", map[string]any{"entryId": "deadbeef", "label": "x"})), -32602)
	errorOf(t, first(c.call("getEntries", map[string]any{"since": "deadbeef"})), -32602)
	errorOf(t, first(c.call("setSessionName", map[string]any{"name": " "})), -32602)
	errorOf(t, first(c.call("prompt", map[string]any{"message": " ", "steer": true})), -32602)
	errorOf(t, first(c.call("approvalResponse", map[string]any{"approved": true})), -32602)
	// The server is still there after every error.
	if result(t, first(c.call("getState", nil)))["cwd"] == "" {
		t.Error("getState after errors")
	}
}

func TestServeAbortAndRequestsDuringAPrompt(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "a long answer that never ends", Stall: true})
	c := startServe(t, testConfig(t, fake, t.TempDir()))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"go"}}`)
	// Wait until the reply streams.
	for {
		m := c.next()
		if m["method"] == "message/delta" {
			break
		}
		if m["id"] != nil {
			t.Fatalf("prompt ended early: %v", m)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"getState"}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"getMessages"}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"prompt","params":{"message":"then this","steer":true}}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"abort"}`)
	got := map[float64]map[string]any{}
	var notes []string
	for len(got) < 5 {
		m := c.next()
		if id, ok := m["id"].(float64); ok {
			got[id] = m
			continue
		}
		notes = append(notes, fmt.Sprint(m["method"]))
	}
	if st := result(t, got[2]); st["isStreaming"] != true {
		t.Errorf("getState during a prompt: %v", st)
	}
	if e := errorOf(t, got[3], -32603); e["data"].(map[string]any)["reason"] != "busy" {
		t.Errorf("getMessages during a prompt: %v", e)
	}
	if r := result(t, got[4]); r["queued"] != true {
		t.Errorf("steer: %v", r)
	}
	result(t, got[5])
	errorOf(t, got[1], -32603)
	if !strings.Contains(strings.Join(notes, " "), "agent/error") {
		t.Errorf("notifications after abort %v lack agent/error", notes)
	}
	// The aborted reply is kept, and the session takes the next prompt.
	fake.Add(agenttest.Reply{Text: "fine"})
	if r := result(t, first(c.call("prompt", map[string]any{"message": "again"}))); r["reply"] != "fine" {
		t.Errorf("prompt after abort: %v", r)
	}
	// The steering message queued before the abort stays queued (as in pi)
	// and goes right after the next prompt.
	msgs := result(t, first(c.call("getMessages", nil)))["messages"].([]any)
	if len(msgs) != 5 || msgs[1].(map[string]any)["stopReason"] != "aborted" || fmt.Sprint(msgs[3].(map[string]any)["content"]) != "[map[text:then this type:text]]" {
		t.Errorf("messages after abort and a new prompt: %v", msgs)
	}
}

// TestServeSteerAndFollowUpMidRun: a steer sent while the model answers goes
// in before the next request; a follow-up when the run would stop; the
// prompt answers with the last reply of the whole run.
func TestServeSteerAndFollowUpMidRun(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Text: "thinking it over", Delay: 500 * time.Millisecond},
		agenttest.Reply{Text: "steered"}, agenttest.Reply{Text: "followed"})
	c := startServe(t, testConfig(t, fake, t.TempDir()))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"start"}}`)
	// Wait until the model has the request (what is queued before it goes
	// with it, right after the prompt).
	for deadline := time.Now().Add(5 * time.Second); len(fake.Requests()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no request")
		}
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"message":"and later","followUp":true}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"prompt","params":{"message":"look here","steer":true}}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"prompt","params":{"message":"x","steer":true,"followUp":true}}`)
	got := map[float64]map[string]any{}
	for len(got) < 4 {
		if m := c.next(); m["id"] != nil {
			got[m["id"].(float64)] = m
		}
	}
	for _, id := range []float64{2, 3} {
		if r := result(t, got[id]); r["queued"] != true {
			t.Errorf("%v: %v", id, r)
		}
	}
	errorOf(t, got[4], -32602)
	if r := result(t, got[1]); r["reply"] != "followed" {
		t.Errorf("the prompt's reply %v", r)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	var seq []string
	for _, m := range fake.Messages(reqs[2]) {
		seq = append(seq, m.Text)
	}
	if got := strings.Join(seq, " | "); got != "start | thinking it over | look here | steered | and later" {
		t.Errorf("the last request: %s", got)
	}
}

// TestServeRhoListsDuringAPrompt: rho's list methods answer while a prompt
// runs (they do not touch the session); approvalResponse is refused then too.
func TestServeRhoListsDuringAPrompt(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "never ends", Stall: true})
	c := startServe(t, testConfig(t, fake, t.TempDir()))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"go"}}`)
	for m := c.next(); m["method"] != "message/delta"; m = c.next() {
	}
	for i, m := range []string{"listModels", "listProviders", "listExtensions", "reloadExtensions", "listTools", "approvalResponse"} {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, i+2, m))
	}
	got := map[float64]map[string]any{}
	for len(got) < 6 {
		if m := c.next(); m["id"] != nil {
			got[m["id"].(float64)] = m
		}
	}
	for id := 2.0; id <= 6; id++ {
		result(t, got[id])
	}
	if p := result(t, got[3])["providers"].([]any); len(p) != 1 {
		t.Errorf("listProviders during a prompt %v", p)
	}
	errorOf(t, got[7], -32602)
	c.send(`{"jsonrpc":"2.0","id":8,"method":"abort"}`)
	for {
		if m := c.next(); m["id"] == 1.0 {
			break
		}
	}
}

// TestServeNotificationShapesAreRhos checks each notification's fields
// against rho's types.rs: tool/call's arguments is the call's JSON text,
// usage carries the response's tokens and the context, and agent/end lists
// the prompt's tool calls with their outcomes.
func TestServeNotificationShapesAreRhos(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "ls", Args: `{"path":"."}`}, {ID: "c2", Name: "read", Args: `{"path":"nope.txt"}`}}, Input: 10, Output: 5},
		agenttest.Reply{Text: "done", Input: 20, Output: 7})
	c := startServe(t, testConfig(t, fake, t.TempDir()))
	resp, notes := c.call("prompt", map[string]any{"message": "look"})
	result(t, resp)
	keys := func(m map[string]any) string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return strings.Join(k, ",")
	}
	var calls, results, usages []map[string]any
	var end map[string]any
	for _, n := range notes {
		p, _ := n["params"].(map[string]any)
		switch n["method"] {
		case "tool/call":
			calls = append(calls, p)
		case "tool/result":
			results = append(results, p)
		case "usage":
			usages = append(usages, p)
		case "agent/end":
			end = p
		}
	}
	if len(calls) != 2 || calls[0]["arguments"] != `{"path":"."}` || calls[0]["name"] != "ls" {
		t.Fatalf("tool/call %v: want arguments as the JSON text", calls)
	}
	if len(results) != 2 || keys(results[0]) != "id,is_error,name,output" || results[0]["is_error"] != false ||
		results[1]["is_error"] != true || !strings.Contains(results[1]["output"].(string), "nope.txt") {
		t.Fatalf("tool/result %v", results)
	}
	if len(usages) != 2 || usages[1]["iteration"].(float64) != 2 {
		t.Fatalf("usage %v", usages)
	}
	u := usages[0]["usage"].(map[string]any)
	if keys(u) != "cachedTokens,cost,inputTokens,outputTokens,requestCount" || u["inputTokens"].(float64) != 10 || u["outputTokens"].(float64) != 5 {
		t.Errorf("usage.usage %v", u)
	}
	if ctx := usages[0]["context"].(map[string]any); keys(ctx) != "completionReserve,contextWindow,estimatedUsed,utilizationPercent" || ctx["estimatedUsed"].(float64) != 15 {
		t.Errorf("usage.context %v", ctx)
	}
	if end == nil || keys(end) != "durationMs,finishReason,iterations,reply,toolCalls,usage" || end["reply"] != "done" || end["iterations"].(float64) != 2 {
		t.Fatalf("agent/end %v", end)
	}
	eu := end["usage"].(map[string]any)
	if keys(eu) != "inputTokens,outputTokens,requestCount,totalCost,totalTokens" || eu["inputTokens"].(float64) != 30 || eu["outputTokens"].(float64) != 12 || eu["requestCount"].(float64) != 2 {
		t.Errorf("agent/end usage %v", eu)
	}
	tc := end["toolCalls"].([]any)
	if len(tc) != 2 {
		t.Fatalf("agent/end toolCalls %v", tc)
	}
	first, second := tc[0].(map[string]any), tc[1].(map[string]any)
	if first["name"] != "ls" || first["arguments"] != `{"path":"."}` || first["outcome"].(map[string]any)["kind"] != "success" {
		t.Errorf("toolCalls[0] %v", first)
	}
	if o := second["outcome"].(map[string]any); o["kind"] != "error" || !strings.Contains(fmt.Sprint(o["output"]), "nope.txt") {
		t.Errorf("toolCalls[1] %v", second)
	}
}

// TestServeSetModelDuringAPrompt: setModel while a prompt runs answers at
// once; the prompt's next request goes to the new model.
func TestServeSetModelDuringAPrompt(t *testing.T) {
	gate := make(chan struct{})
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "ls", Args: `{}`}}, Hold: gate},
		agenttest.Reply{Text: "done"})
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	c := startServe(t, testConfig(t, fake, t.TempDir()))
	c.send(`{"jsonrpc":"2.0","id":101,"method":"prompt","params":{"message":"go"}}`)
	for len(fake.Requests()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	c.send(`{"jsonrpc":"2.0","id":102,"method":"setModel","params":{"model":"other"}}`)
	c.send(`{"jsonrpc":"2.0","id":103,"method":"setModel","params":{"model":"missing"}}`)
	got := map[float64]map[string]any{}
	for len(got) < 3 {
		if m := c.next(); m["id"] != nil {
			got[m["id"].(float64)] = m
		}
		if len(got) == 2 && got[104] == nil {
			c.send(`{"jsonrpc":"2.0","id":104,"method":"getState"}`)
		}
	}
	if r := result(t, got[102]); r["model"] != "other" || r["provider"] != "openai" {
		t.Errorf("setModel during a prompt: %v", r)
	}
	errorOf(t, got[103], -32602)
	if st := result(t, got[104]); st["model"] != "other" || st["isStreaming"] != true {
		t.Errorf("getState after setModel during a prompt: %v", st)
	}
	release()
	for {
		m := c.next()
		if m["id"] == float64(101) {
			if r := result(t, m); r["reply"] != "done" {
				t.Errorf("prompt %v", r)
			}
			break
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Body["model"] != "fake-model" || reqs[1].Body["model"] != "other" {
		t.Errorf("requests went to %v then %v, want fake-model then other", reqs[0].Body["model"], reqs[len(reqs)-1].Body["model"])
	}
}

// getMessages' answer is written a message at a time (a million messages do
// not fit in memory twice over); what is written must be what the library
// itself sends for the same answer, for one request, a batch and an id of
// characters JSON escapes, and nothing for a notification.
func TestServeGetMessagesStreamedIsWhatTheLibraryWrites(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data, err := os.ReadFile("../testdata/pi16/sessions/n-s5-2.jsonl") // tool calls and results, text with < and &
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Start = path
	got, want := servedAndLibrarys(t, cfg, "getMessages")
	if len(want) != 3 || !strings.Contains(want[0], `"toolCall"`) || !strings.Contains(want[0], `\u003c`) {
		t.Fatalf("the library's answers are not what the test needs: %d lines, %.300s", len(want), want)
	}
	sameAnswers(t, got, want)
}

// getEntries' answer is written an entry at a time, as getMessages' is: on a
// session with white space inside a line, HTML characters, line separators,
// escapes and text that is not ASCII, it must be what the library sends.
func TestServeGetEntriesStreamedIsWhatTheLibraryWrites(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data, err := os.ReadFile("../testdata/pi16/sessions/n-s5-2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "{ \"type\" : \"message\", \"id\":\"odd1\", \"parentId\":\"59876d9f\",\"timestamp\":\"2026-12-01T02:15:24.000Z\","+
		" \"message\":{\"role\":\"user\",\"content\":\"a <b> & c \u2028 d \u2029 \\\"q\\\" \\\\ \\t \\u00e9 \u00fcn\u00efc\u00f6d\u00e9 \u30c6\u30b9\u30c8 \U0001F600 \\ud83d\\ude00\",\"timestamp\":2}}\n"...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Start = path
	got, want := servedAndLibrarys(t, cfg, "getEntries")
	if len(want) != 3 || !strings.Contains(want[0], `"id":"odd1"`) || !strings.Contains(want[0], `\u2028`) || !strings.Contains(want[0], `\u003c`) {
		t.Fatalf("the library's answers are not what the test needs: %d lines, %.300s", len(want), want)
	}
	sameAnswers(t, got, want)
}

func sameAnswers(t *testing.T, got, want []string) {
	t.Helper()
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			g := ""
			if i < len(got) {
				g = got[i]
			}
			t.Errorf("answer %d differs from the library's:\n got %.400s\nwant %.400s", i, g, want[i])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d answers, the library sends %d", len(got), len(want))
	}
}

// servedAndLibrarys serves method three times (once alone, twice in a batch,
// once with an id of characters JSON escapes) and a notification of it on
// cfg's session, and returns the answers Serve writes and those the library
// writes for the same methods on a channel of its own, each sorted.
func servedAndLibrarys(t *testing.T, cfg Config, method string) (got, want []string) {
	t.Helper()
	in := strings.ReplaceAll(`{"jsonrpc":"2.0","id":1,"method":"M"}
[{"jsonrpc":"2.0","id":2,"method":"M"},{"jsonrpc":"2.0","id":3,"method":"M"}]
{"jsonrpc":"2.0","method":"M"}
{"jsonrpc":"2.0","id":"<a&b>","method":"M"}
`, `"M"`, `"`+method+`"`)
	var out bytes.Buffer
	if err := Serve(cfg, strings.NewReader(in), nopWriter{&out}); err != nil {
		t.Fatal(err)
	}
	// The library's own answers: the same methods on a channel of its own.
	s := &server{}
	e, err := New(cfg, s.event)
	if err != nil {
		t.Fatal(err)
	}
	s.e = e
	// It cancels what runs when its input ends, so the input stays open
	// until the three answers are in.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := jrpc2.NewServer(s.methods(), nil)
	srv.Start(channel.Line(inR, outW))
	go io.WriteString(inW, in)
	var lib bytes.Buffer
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<24)
	for n := 0; n < 3 && sc.Scan(); n++ {
		lib.Write(sc.Bytes())
		lib.WriteByte('\n')
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := srv.Wait(); err != nil && !errors.Is(err, jrpc2.ErrConnClosed) {
		t.Fatal(err)
	}
	e.Close()

	lines := func(b []byte) []string {
		l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		sort.Strings(l)
		return l
	}
	got, want = lines(out.Bytes()), lines(lib.Bytes())
	if len(got) == 0 || !strings.Contains(got[len(got)-1], `"method":"ready"`) {
		t.Fatalf("no ready line: %q", got)
	}
	got = got[:len(got)-1]
	return got, want
}

// Config.Opening hears of every session file before it is read (the command
// bounds its heap there): the one to start on, and each resumeSession's,
// followed or written.
func TestOpeningNamesEverySessionRead(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	dir := t.TempDir()
	cfg.Allow = []string{dir} // as --allow-path: the files are outside the project and the sessions folders
	var paths []string
	for _, n := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, n+".jsonl")
		data := "{\"type\":\"session\",\"version\":3,\"id\":\"" + n + "\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}\n"
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var mu sync.Mutex
	var opened []string
	cfg.Opening = func(ref string) {
		mu.Lock()
		opened = append(opened, ref)
		mu.Unlock()
	}
	cfg.Start = paths[0]
	in := `{"jsonrpc":"2.0","id":1,"method":"resumeSession","params":{"path":"` + paths[1] + `"}}` + "\n"
	var out bytes.Buffer
	if err := Serve(cfg, strings.NewReader(in), nopWriter{&out}); err != nil {
		t.Fatal(err)
	}
	in = `{"jsonrpc":"2.0","id":1,"method":"resumeSession","params":{"path":"` + paths[2] + `","readOnly":true}}` + "\n"
	cfg.Start = ""
	if err := Serve(cfg, strings.NewReader(in), nopWriter{&out}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(opened) != fmt.Sprint(paths) {
		t.Errorf("Opening heard %q, want %q\n%s", opened, paths, out.String())
	}
}
