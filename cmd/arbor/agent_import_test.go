package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
)

// TestAgentContinuesAnImport: a Codex rollout imported with arbor import is a
// session the agent continues with --session; its history goes to the model.
func TestAgentContinuesAnImport(t *testing.T) {
	w := newWorld(t)
	src, err := filepath.Abs("../../importers/testdata/codex/synthetic/2026/03/01/rollout-2026-03-01T10-00-00-aaaaaaaa-0000-4000-8000-000000000001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(w.home, "imported")
	r := w.run("", "import", src, "--session-dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("import: %d %s %s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("imported files: %v (%s)", files, r.stdout)
	}
	var before struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(w.run("", "context", files[0], "--json").stdout), &before); err != nil || len(before.Messages) == 0 {
		t.Fatalf("context of the import: %v", err)
	}
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "carried on"})
	r = w.run("", with(s, "--session", files[0], "-p", "and now?")...)
	if r.code != 0 || r.stdout != "carried on\n" {
		t.Fatalf("continue: %d %q %q", r.code, r.stdout, r.stderr)
	}
	sent := s.Messages(s.Requests()[0])
	var user int
	for _, m := range sent {
		if m.Role == "user" {
			user++
		}
	}
	if len(sent) < 3 || user < 2 || sent[len(sent)-1].Text != "and now?" {
		t.Errorf("the request did not carry the imported history: %+v", sent)
	}
	if got := w.run("", "context", files[0], "--json").stdout; !strings.Contains(got, "carried on") {
		t.Errorf("the reply was not appended to the imported session")
	}
}
