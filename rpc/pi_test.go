package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session/jsonl"
)

// piClient speaks pi's RPC mode as pi's documentation describes it: commands
// {id, type, …} a line, responses {type:"response", id, command, success}
// and events {type} a line.
type piClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
	n     int
}

func startPi(t *testing.T, cfg Config) *piClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &piClient{t: t, in: inW, lines: make(chan map[string]any, 1000)}
	done := make(chan error, 1)
	go func() {
		err := Pi(cfg, inR, outW)
		outW.Close()
		done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not JSON: %q", sc.Text())
				continue
			}
			c.lines <- m
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Pi: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("rpc mode did not stop at the end of its input")
		}
	})
	return c
}

func (c *piClient) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			c.t.Fatal("output closed")
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no line in 10 s")
	}
	return nil
}

func (c *piClient) sendRaw(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// cmd sends a command with a fresh id and returns its response and the
// events that came before it.
func (c *piClient) cmd(typ string, fields map[string]any) (map[string]any, []map[string]any) {
	c.t.Helper()
	c.n++
	id := fmt.Sprintf("req-%d", c.n)
	m := map[string]any{"id": id, "type": typ}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	c.sendRaw(string(b))
	var events []map[string]any
	for {
		l := c.next()
		if l["type"] != "response" {
			events = append(events, l)
			continue
		}
		if l["id"] != id || l["command"] != typ {
			c.t.Fatalf("response %v, want id %s command %s", l, id, typ)
		}
		return l, events
	}
}

func (c *piClient) ok(typ string, fields map[string]any) map[string]any {
	c.t.Helper()
	r, _ := c.cmd(typ, fields)
	if r["success"] != true {
		c.t.Fatalf("%s: %v", typ, r)
	}
	d, _ := r["data"].(map[string]any)
	return d
}

func (c *piClient) fails(typ string, fields map[string]any, want string) {
	c.t.Helper()
	r, _ := c.cmd(typ, fields)
	if r["success"] != false || !strings.Contains(fmt.Sprint(r["error"]), want) {
		c.t.Errorf("%s %v: got %v, want an error with %q", typ, fields, r, want)
	}
}

// waitEvent reads events until one of type typ.
func (c *piClient) waitEvent(typ string) []map[string]any {
	c.t.Helper()
	var seen []map[string]any
	for {
		l := c.next()
		seen = append(seen, l)
		if l["type"] == typ {
			return seen
		}
		if l["type"] == "response" {
			c.t.Fatalf("unexpected response %v while waiting for %s", l, typ)
		}
	}
}

func types(ls []map[string]any) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprint(l["type"]))
	}
	return out
}

func TestPiSessionPromptForkSwitchCompact(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Text: "first answer", Input: 100, Output: 10},
		agenttest.Reply{Text: "second answer", Input: 200, Output: 20})
	cfg := testConfig(t, fake, t.TempDir())
	c := startPi(t, cfg)

	r, _ := c.cmd("prompt", map[string]any{"message": "one"})
	if r["success"] != true || r["data"].(map[string]any)["disposition"] != "started" {
		t.Fatalf("prompt: %v", r)
	}
	got := strings.Join(types(c.waitEvent("agent_end")), " ")
	for _, want := range []string{"agent_start", "message_start", "message_update", "message_end", "turn_end"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %s lack %s", got, want)
		}
	}
	c.ok("prompt", map[string]any{"message": "two"})
	c.waitEvent("agent_end")

	st := c.ok("get_state", nil)
	first := st["sessionFile"].(string)
	if st["messageCount"].(float64) != 4 || st["isStreaming"] != false || st["model"].(map[string]any)["id"] != "fake-model" {
		t.Errorf("get_state %v", st)
	}
	if txt := c.ok("get_last_assistant_text", nil)["text"]; txt != "second answer" {
		t.Errorf("get_last_assistant_text %v", txt)
	}
	stats := c.ok("get_session_stats", nil)
	if stats["userMessages"].(float64) != 2 || stats["tokens"].(map[string]any)["input"].(float64) != 300 {
		t.Errorf("get_session_stats %v", stats)
	}
	fm := c.ok("get_fork_messages", nil)["messages"].([]any)
	if len(fm) != 2 || fm[1].(map[string]any)["text"] != "two" {
		t.Fatalf("get_fork_messages %v", fm)
	}

	// fork at the second prompt: a new file holding the first exchange.
	second := fm[1].(map[string]any)["entryId"].(string)
	f := c.ok("fork", map[string]any{"entryId": second})
	if f["text"] != "two" || f["cancelled"] != false {
		t.Errorf("fork %v", f)
	}
	st = c.ok("get_state", nil)
	forked := st["sessionFile"].(string)
	if forked == first || st["messageCount"].(float64) != 2 {
		t.Errorf("after fork: %v", st)
	}
	if l, err := jsonl.Read(forked); err != nil || l.Header().ParentSession != first {
		t.Errorf("forked file %s: %v (parent %q)", forked, err, l.Header().ParentSession)
	}

	// switch back, and compact there.
	if d := c.ok("switch_session", map[string]any{"sessionPath": first}); d["cancelled"] != false {
		t.Errorf("switch_session %v", d)
	}
	if n := c.ok("get_messages", nil)["messages"].([]any); len(n) != 4 {
		t.Errorf("messages after switching back: %d", len(n))
	}
	fake.Add(agenttest.Reply{Text: "the summary"}, agenttest.Reply{Text: "the turn prefix"})
	comp, events := c.cmd("compact", nil)
	if comp["success"] != true || !strings.Contains(fmt.Sprint(comp["data"].(map[string]any)["summary"]), "the summary") {
		t.Fatalf("compact %v", comp)
	}
	if got := strings.Join(types(events), " "); got != "compaction_start compaction_end" {
		t.Errorf("compact events %q", got)
	}
	es := c.ok("get_entries", nil)
	entries := es["entries"].([]any)
	last := entries[len(entries)-1].(map[string]any)
	if last["type"] != "compaction" || es["leafId"] != last["id"] {
		t.Errorf("get_entries after compact: last %v leaf %v", last, es["leafId"])
	}
	tree := c.ok("get_tree", nil)
	if len(tree["tree"].([]any)) != 1 {
		t.Errorf("get_tree %v", tree)
	}

	// clone: a copy of the whole branch.
	c.ok("clone", nil)
	if st := c.ok("get_state", nil); st["sessionFile"] == first {
		t.Errorf("clone did not switch: %v", st)
	}
	c.ok("set_session_name", map[string]any{"name": "  cloned "})
	if st := c.ok("get_state", nil); st["sessionName"] != "cloned" {
		t.Errorf("name %v", st["sessionName"])
	}
	if d := c.ok("new_session", nil); d["cancelled"] != false {
		t.Errorf("new_session %v", d)
	}
	if st := c.ok("get_state", nil); st["messageCount"].(float64) != 0 {
		t.Errorf("new session state %v", st)
	}
	if _, err := os.Stat(first); err != nil {
		t.Error(err)
	}
}

func TestPiErrors(t *testing.T) {
	c := startPi(t, testConfig(t, agenttest.New(t, "openai"), t.TempDir()))
	c.sendRaw(`{"id":"x","type":`)
	r := c.next()
	if r["type"] != "response" || r["command"] != "parse" || r["success"] != false || !strings.HasPrefix(fmt.Sprint(r["error"]), "Failed to parse command:") {
		t.Errorf("bad JSON: %v", r)
	}
	c.fails("no_such_command", nil, "Unknown command: no_such_command")
	c.fails("set_session_name", map[string]any{"name": "  "}, "Session name cannot be empty")
	c.fails("get_entries", map[string]any{"since": "deadbeef"}, "Entry not found: deadbeef")
	c.fails("fork", map[string]any{"entryId": "deadbeef"}, "deadbeef")
	c.fails("switch_session", map[string]any{"sessionPath": "/no/such/session.jsonl"}, "no such session")
	c.fails("set_model", map[string]any{"provider": "openai", "modelId": "missing"}, "Model not found: openai/missing")
	c.fails("clone", nil, "Cannot clone session: no current entry selected")
	c.fails("prompt", map[string]any{"message": ""}, "empty")
	if st := c.ok("get_state", nil); st["isStreaming"] != false {
		t.Errorf("state after errors: %v", st)
	}
}

func TestPiAbortAndCommandsDuringAPrompt(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "streaming forever", Stall: true})
	c := startPi(t, testConfig(t, fake, t.TempDir()))
	c.ok("prompt", map[string]any{"message": "go"})
	c.waitEvent("message_update")
	if st := c.ok("get_state", nil); st["isStreaming"] != true {
		t.Errorf("get_state during a prompt: %v", st)
	}
	c.fails("prompt", map[string]any{"message": "again"}, "Agent is already processing")
	r, _ := c.cmd("prompt", map[string]any{"message": "later", "streamingBehavior": "followUp"})
	if r["data"].(map[string]any)["disposition"] != "queued" {
		t.Errorf("queued prompt %v", r)
	}
	c.fails("get_messages", nil, "a prompt is running")
	r, events := c.cmd("abort", nil)
	if r["success"] != true || len(events) == 0 || events[len(events)-1]["type"] != "agent_settled" {
		t.Errorf("abort %v after %v: pi answers once the session is idle", r, types(events))
	}
	var stop any
	for _, e := range events {
		if e["type"] == "message_end" {
			stop = e["message"].(map[string]any)["stopReason"]
		}
	}
	if stop != "aborted" {
		t.Errorf("events after abort %v: last message stop %v", types(events), stop)
	}
	// As in pi, abort leaves the queue; clear_queue empties it.
	if st := c.ok("get_state", nil); st["isStreaming"] != false || st["pendingMessageCount"].(float64) != 1 {
		t.Errorf("state after abort %v", st)
	}
	if q := c.ok("clear_queue", nil); fmt.Sprint(q["steering"], q["followUp"]) != "[] [later]" {
		t.Errorf("clear_queue %v", q)
	}
	if st := c.ok("get_state", nil); st["pendingMessageCount"].(float64) != 0 {
		t.Errorf("state after clear_queue %v", st)
	}
}

// A session file may hold bytes that are not UTF-8 (another program wrote
// them): the entries both protocols pass on raw are then still JSON text,
// valid UTF-8, with U+FFFD for each such byte; a client's own id is too.
func TestRawEntriesWithInvalidUTF8StayValidJSON(t *testing.T) {
	fake := agenttest.New(t, "openai")
	home := t.TempDir()
	cfg := testConfig(t, fake, home)
	path := filepath.Join(t.TempDir(), "odd.jsonl")
	file := "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}\n" +
		"{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"h\xffi\xc3\"}],\"timestamp\":1}}\n"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Start = path
	check := func(proto string, out []byte, want int) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(lines) != want {
			t.Errorf("%s: %d lines, want %d:\n%s", proto, len(lines), want, out)
		}
		seen := 0
		for _, l := range lines {
			if !utf8.ValidString(l) {
				t.Errorf("%s: a line that is not UTF-8: %q", proto, l)
			}
			if !json.Valid([]byte(l)) {
				t.Errorf("%s: not JSON: %q", proto, l)
			}
			seen += strings.Count(l, "h\uFFFDi\uFFFD")
		}
		if seen < 3 {
			t.Errorf("%s: the message's text shows as h\\uFFFDi\\uFFFD %d times, want 3 or more:\n%s", proto, seen, out)
		}
	}

	var out bytes.Buffer
	in := "{\"id\":\"\xff\",\"type\":\"get_state\"}\n{\"id\":1,\"type\":\"get_messages\"}\n{\"id\":2,\"type\":\"get_entries\"}\n{\"id\":3,\"type\":\"get_tree\"}\n"
	if err := Pi(cfg, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	check("pi", out.Bytes(), 4)

	out.Reset()
	in = "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"getState\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getMessages\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"getEntries\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"getTree\"}\n"
	if err := Serve(cfg, strings.NewReader(in), nopWriter{&out}); err != nil {
		t.Fatal(err)
	}
	check("serve", out.Bytes(), 5) // ready, then the four answers
}

type nopWriter struct{ io.Writer }

func (nopWriter) Close() error { return nil }
