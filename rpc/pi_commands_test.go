package rpc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/redact"
)

// TestPiSettingsCommands: every setting command of pi's RPC mode with good
// and bad parameters, as a client reads the answers.
func TestPiSettingsCommands(t *testing.T) {
	c := startPi(t, testConfig(t, agenttest.New(t, "openai"), t.TempDir()))
	r, events := c.cmd("set_thinking_level", map[string]any{"level": "high"})
	if r["success"] != true || r["data"] != nil || len(events) != 1 || events[0]["type"] != "thinking_level_changed" || events[0]["level"] != "high" {
		t.Errorf("set_thinking_level: %v after %v", r, events)
	}
	if l := c.ok("cycle_thinking_level", nil)["level"]; l != "xhigh" {
		t.Errorf("cycle_thinking_level %v", l)
	}
	if l := c.ok("cycle_thinking_level", nil)["level"]; l != "off" {
		t.Errorf("cycle_thinking_level wraps to %v", l)
	}
	// pi clamps a level the model does not have (an unknown one to the first).
	c.ok("set_thinking_level", map[string]any{"level": "medium"})
	c.ok("set_thinking_level", map[string]any{"level": "enormous"})
	if st := c.ok("get_state", nil); st["thinkingLevel"] != "off" {
		t.Errorf("unknown level: %v", st["thinkingLevel"])
	}
	c.ok("set_steering_mode", map[string]any{"mode": "all"})
	c.ok("set_follow_up_mode", map[string]any{"mode": "all"})
	c.fails("set_steering_mode", map[string]any{"mode": "some"}, "Invalid mode")
	c.fails("set_follow_up_mode", nil, "Invalid mode")
	c.fails("set_auto_compaction", nil, "enabled")
	c.ok("set_auto_compaction", map[string]any{"enabled": false})
	c.ok("set_auto_retry", map[string]any{"enabled": false})
	c.fails("set_auto_retry", map[string]any{"enabled": "yes"}, "Invalid set_auto_retry command")
	c.ok("abort_retry", nil)
	st := c.ok("get_state", nil)
	if st["steeringMode"] != "all" || st["followUpMode"] != "all" || st["autoCompactionEnabled"] != false {
		t.Errorf("state after the settings %v", st)
	}
	m := c.ok("cycle_model", nil)
	if m["model"].(map[string]any)["id"] != "other" || m["isScoped"] != false || m["thinkingLevel"] != "off" {
		t.Errorf("cycle_model %v", m)
	}
	if id := c.ok("get_state", nil)["model"].(map[string]any)["id"]; id != "other" {
		t.Errorf("model after cycle_model %v", id)
	}
	if cmds, ok := c.ok("get_commands", nil)["commands"].([]any); !ok || len(cmds) != 0 {
		t.Errorf("get_commands %v", cmds)
	}
	q := c.ok("clear_queue", nil)
	if fmt.Sprint(q["steering"], q["followUp"]) != "[] []" {
		t.Errorf("clear_queue %v", q)
	}
	c.ok("steer", map[string]any{"message": "for the next prompt"})
	c.ok("follow_up", map[string]any{"message": "and after it"})
	c.fails("steer", map[string]any{"message": " "}, "empty")
	if q := c.ok("clear_queue", nil); fmt.Sprint(q["steering"], q["followUp"]) != "[for the next prompt] [and after it]" {
		t.Errorf("clear_queue %v", q)
	}
	// What is queued for one session is not sent to another.
	c.ok("steer", map[string]any{"message": "for this session"})
	if _, events := c.cmd("new_session", nil); len(events) != 1 || events[0]["type"] != "queue_update" {
		t.Errorf("new_session events %v", events)
	}
	if st := c.ok("get_state", nil); st["pendingMessageCount"].(float64) != 0 {
		t.Errorf("queued after new_session: %v", st)
	}
}

// TestPiBashRedacted: a secret the person's own command prints is redacted
// in what is recorded (and so sent to the model), as a tool's output is.
func TestPiBashRedacted(t *testing.T) {
	fake := agenttest.New(t, "openai")
	cfg := testConfig(t, fake, t.TempDir())
	newAgent := cfg.NewAgent
	cfg.NewAgent = func(model string) (*agent.Agent, error) {
		a, err := newAgent(model)
		if err == nil {
			a.Redactor, err = redact.New(nil)
		}
		return a, err
	}
	c := startPi(t, cfg)
	c.ok("bash", map[string]any{"command": "echo DB_PASSWORD=hunter2hunter2; echo postgres://admin:s3cretpw@db/x"})
	msgs := c.ok("get_messages", nil)["messages"].([]any)
	out := fmt.Sprint(msgs)
	if len(msgs) != 1 || strings.Contains(out, "hunter2hunter2") || strings.Contains(out, "s3cretpw") || !strings.Contains(out, "[REDACTED:") {
		t.Errorf("recorded bash output %v", msgs)
	}
}

// TestPiBash: the person's own command, recorded as pi records it; streamed
// output; abort_bash kills it; a command during a prompt is recorded after it.
func TestPiBash(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "streaming forever", Stall: true})
	c := startPi(t, testConfig(t, fake, t.TempDir()))
	r, events := c.cmd("bash", map[string]any{"command": "echo one; echo two >&2; exit 4"})
	d, _ := r["data"].(map[string]any)
	if r["success"] != true || d["output"] != "one\ntwo\n" || d["exitCode"] != float64(4) || d["cancelled"] != false || d["truncated"] != false {
		t.Errorf("bash %v", r)
	}
	var streamed strings.Builder
	for _, e := range events {
		if e["type"] != "bash_execution_update" || e["id"] != r["id"] {
			t.Errorf("event %v", e)
		}
		streamed.WriteString(fmt.Sprint(e["delta"]))
	}
	if streamed.String() != "one\ntwo\n" {
		t.Errorf("streamed %q", streamed.String())
	}
	msgs := c.ok("get_messages", nil)["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "bashExecution" || msgs[0].(map[string]any)["command"] != "echo one; echo two >&2; exit 4" {
		t.Errorf("messages after bash %v", msgs)
	}
	c.fails("bash", map[string]any{"command": ""}, "empty")

	// abort_bash: the command (and what it started) is killed; its response
	// says cancelled, without an exit code.
	c.sendRaw(`{"id":"long","type":"bash","command":"echo started; sleep 30"}`)
	if e := c.next(); e["type"] != "bash_execution_update" {
		t.Fatalf("before abort_bash: %v", e)
	}
	c.sendRaw(`{"id":"stop","type":"abort_bash"}`)
	got := map[string]map[string]any{}
	for len(got) < 2 {
		l := c.next()
		if l["type"] == "response" {
			got[fmt.Sprint(l["id"])] = l
		}
	}
	if got["stop"]["success"] != true {
		t.Errorf("abort_bash %v", got["stop"])
	}
	d, _ = got["long"]["data"].(map[string]any)
	if _, has := d["exitCode"]; d["cancelled"] != true || has || d["output"] != "started\n" {
		t.Errorf("aborted bash %v", got["long"])
	}

	// During a prompt the command runs at once; its message waits for the run.
	c.ok("prompt", map[string]any{"message": "go"})
	c.waitEvent("message_update")
	if d := c.ok("bash", map[string]any{"command": "echo during"}); d["output"] != "during\n" {
		t.Errorf("bash during a prompt %v", d)
	}
	c.ok("set_steering_mode", map[string]any{"mode": "one-at-a-time"})
	c.ok("abort_retry", nil)
	// As in pi, abort answers once the session is idle.
	if r, events := c.cmd("abort", nil); r["success"] != true || !strings.Contains(strings.Join(types(events), " "), "agent_settled") {
		t.Errorf("abort %v after %v", r, types(events))
	}
	msgs = c.ok("get_messages", nil)["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, fmt.Sprint(m.(map[string]any)["role"]))
	}
	if got := strings.Join(roles, " "); got != "bashExecution bashExecution user assistant bashExecution" {
		t.Errorf("roles after a bash during a prompt: %s", got)
	}
	last, _ := json.Marshal(msgs[len(msgs)-1])
	if !strings.Contains(string(last), `"output":"during\n"`) {
		t.Errorf("last message %s", last)
	}
}

// TestPiCompactIsAbortable: compact runs while commands are read, as in pi:
// get_state says isCompacting (not isStreaming), a prompt is refused with
// pi's message, and abort ends it.
func TestPiCompactIsAbortable(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "one"}, agenttest.Reply{Text: "two"},
		agenttest.Reply{Text: "summary never ends", Stall: true}, agenttest.Reply{Text: "nor the prefix", Stall: true})
	c := startPi(t, testConfig(t, fake, t.TempDir()))
	for _, m := range []string{"first", "second"} {
		c.ok("prompt", map[string]any{"message": m})
		c.waitEvent("agent_settled")
	}
	c.sendRaw(`{"id":"comp","type":"compact"}`)
	c.waitEvent("compaction_start")
	for len(fake.Requests()) < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	if st := c.ok("get_state", nil); st["isCompacting"] != true || st["isStreaming"] != false {
		t.Errorf("state while compacting %v", st)
	}
	c.fails("prompt", map[string]any{"message": "now"}, "Cannot submit a prompt while compaction is in progress")
	c.sendRaw(`{"id":"stop","type":"abort"}`)
	got := map[string]map[string]any{}
	for len(got) < 2 {
		if l := c.next(); l["type"] == "response" {
			got[fmt.Sprint(l["id"])] = l
		}
	}
	if got["stop"]["success"] != true || got["comp"]["success"] != false {
		t.Errorf("abort %v, compact %v", got["stop"], got["comp"])
	}
	if st := c.ok("get_state", nil); st["isCompacting"] != false || st["isStreaming"] != false {
		t.Errorf("state after the abort %v", st)
	}
}

// TestPiSettingsDuringAPromptApplyToTheNextTurn: pi's setting commands sent
// while a prompt runs answer at once and the run's next request uses them;
// the model and thinking level changes are recorded before it.
func TestPiSettingsDuringAPromptApplyToTheNextTurn(t *testing.T) {
	gate := make(chan struct{})
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "ls", Args: `{}`}}, Hold: gate},
		agenttest.Reply{Text: "done"})
	c := startPi(t, testConfig(t, fake, t.TempDir()))
	c.ok("prompt", map[string]any{"message": "go"})
	for len(fake.Requests()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	// The first request is in flight: every setting is taken.
	c.ok("set_thinking_level", map[string]any{"level": "medium"})
	if l := c.ok("cycle_thinking_level", nil)["level"]; l != "high" {
		t.Errorf("cycle_thinking_level during a prompt: %v", l)
	}
	if m := c.ok("cycle_model", nil); m["model"].(map[string]any)["id"] != "other" {
		t.Errorf("cycle_model during a prompt: %v", m)
	}
	c.ok("set_auto_compaction", map[string]any{"enabled": false})
	c.ok("set_auto_retry", map[string]any{"enabled": false})
	if st := c.ok("get_state", nil); st["thinkingLevel"] != "high" || st["isStreaming"] != true {
		t.Errorf("get_state during a prompt: %v", st)
	}
	close(gate)
	c.waitEvent("agent_settled")
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].Body["model"] != "fake-model" || reqs[0].Body["reasoning_effort"] != nil {
		t.Errorf("first request: model %v effort %v", reqs[0].Body["model"], reqs[0].Body["reasoning_effort"])
	}
	if reqs[1].Body["model"] != "other" || reqs[1].Body["reasoning_effort"] != "high" {
		t.Errorf("next request: model %v effort %v, want other and high", reqs[1].Body["model"], reqs[1].Body["reasoning_effort"])
	}
	st := c.ok("get_state", nil)
	if st["thinkingLevel"] != "high" || st["autoCompactionEnabled"] != false || st["model"].(map[string]any)["id"] != "other" {
		t.Errorf("get_state after the prompt: %v", st)
	}
	// The session records the change between the two replies.
	var kinds []string
	for _, e := range c.ok("get_entries", nil)["entries"].([]any) {
		en := e.(map[string]any)
		k := fmt.Sprint(en["type"])
		switch k {
		case "model_change":
			k += ":" + fmt.Sprint(en["modelId"])
		case "thinking_level_change":
			k += ":" + fmt.Sprint(en["thinkingLevel"])
		case "message":
			k = fmt.Sprint(en["message"].(map[string]any)["role"])
		}
		kinds = append(kinds, k)
	}
	want := "model_change:fake-model thinking_level_change:off user assistant toolResult model_change:other thinking_level_change:high assistant"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("entries %s\nwant    %s", got, want)
	}
}

// TestPiRetryEvents: a request the provider's client retries streams pi's
// auto_retry_start and auto_retry_end to the client, in pi's shapes.
func TestPiRetryEvents(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Status: 429, RetryAfter: "0"}, agenttest.Reply{Text: "ok"})
	cfg := testConfig(t, fake, t.TempDir())
	mk := cfg.NewAgent
	cfg.NewAgent = func(model string) (*agent.Agent, error) {
		a, err := mk(model)
		if err == nil {
			a.Provider = agent.NewOpenAI(agent.Options{Name: "openai", BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: 3})
		}
		return a, err
	}
	c := startPi(t, cfg)
	c.ok("prompt", map[string]any{"message": "hi"})
	var got []string
	for _, e := range c.waitEvent("agent_settled") {
		if strings.HasPrefix(fmt.Sprint(e["type"]), "auto_retry") {
			b, _ := json.Marshal(e)
			got = append(got, string(b))
		}
	}
	want := `{"attempt":1,"delayMs":0,"errorMessage":"429 Too Many Requests","maxAttempts":3,"type":"auto_retry_start"}` + "\n" +
		`{"attempt":1,"success":true,"type":"auto_retry_end"}`
	if strings.Join(got, "\n") != want {
		t.Errorf("retry events\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

// TestPiReplacedSessionFileIsReported: the session file renamed over while a
// prompt runs (sed -i): the reply is not kept, and the client is told so
// with the path, not left with an agent_end that looks like a quiet end.
func TestPiReplacedSessionFileIsReported(t *testing.T) {
	gate := make(chan struct{})
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "kept nowhere", Hold: gate})
	c := startPi(t, testConfig(t, fake, t.TempDir()))
	c.ok("prompt", map[string]any{"message": "go"})
	for len(fake.Requests()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	path := c.ok("get_state", nil)["sessionFile"].(string)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	close(gate)
	var failure map[string]any
	events := c.waitEvent("agent_settled")
	for _, e := range events {
		if e["type"] == agent.ArborError {
			failure = e
		}
	}
	if failure == nil || !strings.Contains(fmt.Sprint(failure["errorMessage"]), path) || failure["aborted"] != false {
		t.Errorf("no error event naming %s before agent_settled: %v", path, types(events))
	}
	if events[len(events)-1]["aborted"] != false {
		t.Errorf("agent_settled %v", events[len(events)-1])
	}
	if now, _ := os.ReadFile(path); strings.Contains(string(now), "kept nowhere") {
		t.Errorf("the reply is in the file that replaced the session:\n%s", now)
	}
	// A provider's error is the run's last message, as pi reports it: no
	// second report.
	fake.Add(agenttest.Reply{Status: 400, Body: `{"error":{"message":"no such model"}}`})
	c.ok("new_session", nil)
	c.ok("prompt", map[string]any{"message": "again"})
	for _, e := range c.waitEvent("agent_settled") {
		if e["type"] == agent.ArborError {
			t.Errorf("a provider's error reported twice: %v", e)
		}
	}
}

// TestPiSwitchToTheSessionServed: switch_session to the session already open
// reads it again (what another program appended included), as pi's does; it
// was refused as held by the server itself ("close it there first").
func TestPiSwitchToTheSessionServed(t *testing.T) {
	fake := agenttest.New(t, "openai", agenttest.Reply{Text: "one"}, agenttest.Reply{Text: "two"})
	c := startPi(t, testConfig(t, fake, t.TempDir()))
	c.ok("prompt", map[string]any{"message": "hi"})
	c.waitEvent("agent_settled")
	path := c.ok("get_state", nil)["sessionFile"].(string)
	es := c.ok("get_entries", nil)["entries"].([]any)
	leaf := es[len(es)-1].(map[string]any)["id"].(string)
	foreign := `{"type":"message","id":"f0000001","parentId":"` + leaf + `","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"from pi","timestamp":1}}` + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(foreign); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dir, base := filepath.Split(path)
	for _, p := range []string{path, filepath.Join(dir, ".", base)} {
		r, _ := c.cmd("switch_session", map[string]any{"sessionPath": p})
		if r["success"] != true {
			t.Fatalf("switch_session to the session served (%s): %v", p, r)
		}
	}
	if n := len(c.ok("get_messages", nil)["messages"].([]any)); n != 3 {
		t.Errorf("%d messages after switching, want 3 (the foreign one read)", n)
	}
	c.ok("prompt", map[string]any{"message": "more"})
	c.waitEvent("agent_settled")
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"two"`) || strings.Count(string(data), "f0000001") != 2 {
		t.Errorf("the next reply is not in the file after the foreign line:\n%s", data)
	}
}
