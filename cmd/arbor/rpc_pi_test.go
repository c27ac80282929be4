package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
)

// TestPiRPCClientDrivesArbor runs pi 1.6.0's own RpcClient (the peer's
// dist/modes/rpc/rpc-client.js) against arbor --mode rpc through a whole
// session: two prompts, fork, switch back, compact, entries and tree.
func TestPiRPCClientDrivesArbor(t *testing.T) {
	script := pi16(t)
	peer := filepath.Dir(script)
	w := newWorld(t)
	w.config(`{"compaction":{"keepRecentTokens":1}}`)
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Text: "first answer", Input: 100, Output: 10},
		agenttest.Reply{Text: "second answer", Input: 200, Output: 20},
		agenttest.Reply{Text: "the summary"}, agenttest.Reply{Text: "the split turn"},
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"sleep 2; echo slept"}`}}},
		agenttest.Reply{Text: "steered"}, agenttest.Reply{Text: "summed up"})
	// RpcClient starts `node <cliPath> --mode rpc …`: the shim runs arbor instead.
	shim := filepath.Join(t.TempDir(), "arbor-shim.mjs")
	src := fmt.Sprintf(`import { spawn } from "node:child_process";
const p = spawn(%q, process.argv.slice(2), { stdio: "inherit" });
p.on("exit", (code, sig) => process.exit(code ?? 1));
`, arborBinary(t))
	if err := os.WriteFile(shim, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "pi_rpc_client.mjs"), peer, shim)
	page := filepath.Join(t.TempDir(), "session.html")
	cmd.Env = append(append([]string{}, w.env...), "FAKE_KIND=openai", "FAKE_URL="+fake.BaseURL(), "EXPORT_PATH="+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Dir, _ = os.Getwd()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi's client: %v\n%s", err, stderr.Bytes())
	}
	var r struct {
		PromptEvents []string
		State1       map[string]any
		ForkMessages []struct{ EntryID, Text string }
		Fork         struct {
			Text      string
			Cancelled bool
		}
		State2   map[string]any
		Switch   struct{ Cancelled bool }
		Messages int
		Compact  struct {
			Summary          string
			FirstKeptEntryID string
		}
		Entries struct {
			Entries []map[string]any
			LeafID  string
		}
		Tree struct {
			Tree   []any
			LeafID string
		}
		Last        string
		Stats       map[string]any
		ForkError   string
		Export      struct{ Path string }
		ExportAgain string
		CycledLevel struct{ Level string }
		CycleModel  any
		Commands    []any
		Bash        struct {
			Output    string
			ExitCode  *int
			Cancelled bool
			Truncated bool
		}
		State3      map[string]any
		Steer       string
		FollowUp    string
		Queued      float64
		SteerEvents []string
		Cleared     struct{ Steering, FollowUp []string }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ev := strings.Join(r.PromptEvents, " ")
	if !strings.HasPrefix(ev, "agent_start") || !strings.HasSuffix(ev, "agent_end agent_settled") || !strings.Contains(ev, "message_update") {
		t.Errorf("prompt events %s", ev)
	}
	if r.State1["messageCount"].(float64) != 4 || r.State1["sessionFile"] == "" {
		t.Errorf("state %v", r.State1)
	}
	if len(r.ForkMessages) != 2 || r.Fork.Text != "second question" || r.Fork.Cancelled {
		t.Errorf("fork messages %v, fork %v", r.ForkMessages, r.Fork)
	}
	if r.State2["sessionFile"] == r.State1["sessionFile"] || r.State2["messageCount"].(float64) != 2 {
		t.Errorf("after fork %v", r.State2)
	}
	if r.Switch.Cancelled || r.Messages != 4 {
		t.Errorf("switch %v, messages %d", r.Switch, r.Messages)
	}
	if !strings.Contains(r.Compact.Summary, "the summary") || r.Compact.FirstKeptEntryID == "" {
		t.Errorf("compact %+v", r.Compact)
	}
	last := r.Entries.Entries[len(r.Entries.Entries)-1]
	if last["type"] != "compaction" || r.Entries.LeafID != last["id"] || r.Tree.LeafID != r.Entries.LeafID || len(r.Tree.Tree) != 1 {
		t.Errorf("entries end with %v (leaf %s), tree leaf %s", last, r.Entries.LeafID, r.Tree.LeafID)
	}
	if r.Last != "second answer" || r.Stats["sessionFile"] != r.State1["sessionFile"] {
		t.Errorf("last text %q, stats %v", r.Last, r.Stats)
	}
	if b, err := os.ReadFile(page); r.Export.Path != page || err != nil || !strings.Contains(string(b), "second answer") {
		t.Errorf("export_html %+v: %v", r.Export, err)
	}
	if !strings.Contains(r.ExportAgain, "already exists") {
		t.Errorf("export_html over the same file: %q", r.ExportAgain)
	}
	if !strings.Contains(r.ForkError, "Entry not found: nosuchid") {
		t.Errorf("fork error %q", r.ForkError)
	}

	// set_thinking_level, cycle_thinking_level, the queue modes, auto
	// compaction, cycle_model (one model: null), get_commands and bash, as
	// pi's client reads them.
	if r.CycledLevel.Level != "xhigh" || r.CycleModel != nil || r.Commands == nil || len(r.Commands) != 0 {
		t.Errorf("cycled level %q, cycle_model %v, commands %v", r.CycledLevel, r.CycleModel, r.Commands)
	}
	if r.Bash.Output != "from bash\n" || r.Bash.ExitCode == nil || *r.Bash.ExitCode != 2 || r.Bash.Cancelled || r.Bash.Truncated {
		t.Errorf("bash %+v", r.Bash)
	}
	st := r.State3
	if st["thinkingLevel"] != "xhigh" || st["steeringMode"] != "all" || st["followUpMode"] != "one-at-a-time" || st["autoCompactionEnabled"] != false {
		t.Errorf("state after the settings %v", st)
	}
	// The steer went in after the command's result, before the next request;
	// the follow-up when the run would have stopped.
	if r.Steer != "queued" || r.FollowUp != "queued" || r.Queued != 2 || len(r.Cleared.Steering)+len(r.Cleared.FollowUp) != 0 {
		t.Errorf("steer %q follow-up %q queued %v cleared %v", r.Steer, r.FollowUp, r.Queued, r.Cleared)
	}
	if ev := strings.Join(r.SteerEvents, " "); !strings.Contains(ev, "queue_update") || !strings.HasSuffix(ev, "agent_end agent_settled") {
		t.Errorf("steered run's events %s", ev)
	}
	reqs := fake.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d requests, want 7", len(reqs))
	}
	msgs := fake.Messages(reqs[5])
	if n := len(msgs); n < 3 || msgs[n-2].Role != "tool" || !strings.Contains(msgs[n-2].Text, "slept") || msgs[n-1].Text != "also check the tests" {
		t.Errorf("the request after the steer ends %+v", msgs[max(0, n-3):])
	}
	msgs = fake.Messages(reqs[6])
	if n := len(msgs); msgs[n-2].Text != "steered" || msgs[n-1].Text != "then sum up" {
		t.Errorf("the request after the follow-up ends %+v", msgs[max(0, n-2):])
	}
	// The bash run is in the session as pi records it, and in the context.
	var found bool
	for _, m := range fake.Messages(reqs[4]) {
		found = found || strings.Contains(m.Text, "echo from bash") && strings.Contains(m.Text, "from bash")
	}
	if !found {
		t.Errorf("the bash run is not in the next request: %+v", fake.Messages(reqs[4]))
	}
}
