package main

import (
	"bytes"
	"encoding/json"
	"github.com/arborlog/arbor/internal/pitest"
	"os"
	"os/exec"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/google/go-cmp/cmp"
)

// TestAgentSessionsReadByPi has the agent write a session with tool calls,
// thinking, a change of provider and thinking level, and a compaction, and checks that
// pi 1.6.0 builds the same context from it as arbor.
func TestAgentSessionsReadByPi(t *testing.T) {
	script := pi16(t)
	w := newWorld(t)
	w.config(`{"compaction":{"keepRecentTokens":1}}`)
	oa := agenttest.New(t, "openai",
		agenttest.Reply{Thinking: "plan", Text: "Looking.", Calls: []agenttest.Call{{ID: "call_a", Name: "bash", Args: `{"command":"echo hello"}`}}, Input: 50, Output: 10},
		agenttest.Reply{Text: "It printed hello.", Input: 80, Output: 5})
	if r := w.run("", with(oa, "-p", "run echo")...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	an := agenttest.New(t, "anthropic",
		agenttest.Reply{Thinking: "hmm", Text: "Claude here.", Input: 950, Output: 5})
	if r := w.run("", with(an, "-p", "-c", "--thinking", "high", "who are you")...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	oa.Add(agenttest.Reply{Text: "summary of it all"}, agenttest.Reply{Text: "the split turn"}, agenttest.Reply{Text: "after compaction", Input: 10, Output: 1})
	if r := w.run("", with(oa, "-p", "-c", "--context-window", "1000", "--reserve", "100", "--tools", "ls", "--mode", "json", "go on")...); r.code != 0 {
		for _, q := range oa.Requests() {
			t.Logf("request: %+v", oa.Messages(q))
		}
		t.Fatal(r.stderr, r.stdout, roles(t, w.only()))
	}
	path := w.only()
	cmd := exec.Command("node", script, "context", path)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	piOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi: %v: %s", err, stderr.Bytes())
	}
	ours := w.run("", "context", path, "--json")
	if ours.code != 0 {
		t.Fatal(ours.stderr)
	}
	var a, b any
	if err := json.Unmarshal(piOut, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(ours.stdout), &b); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("pi 1.6.0 reads another context (-pi +arbor):\n%s", d)
	}
	var ctx struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		ThinkingLevel string `json:"thinkingLevel"`
		Model         struct {
			Provider string `json:"provider"`
		} `json:"model"`
	}
	json.Unmarshal(piOut, &ctx)
	if len(ctx.Messages) < 2 || ctx.Messages[0].Role != "compactionSummary" || ctx.ThinkingLevel != "off" || ctx.Model.Provider != "openai" {
		t.Errorf("pi's context: %s", piOut)
	}
}

func pi16(t *testing.T) string { return pitest.Script(t, pitest.V16) }
