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
		agenttest.Reply{Text: "the summary"}, agenttest.Reply{Text: "the split turn"})
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
}
