package importers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/session"
)

// TestClaudeUsageCountedOnce: a response written as three lines, each repeating
// the usage as it grew, is one message with the final usage, not the sum.
func TestClaudeUsageCountedOnce(t *testing.T) {
	l := mustRead(t, "testdata/claude/synthetic/synth-0001.jsonl").Log()
	var outputs []float64
	for _, e := range l.Entries() {
		if e.Role() != "assistant" {
			continue
		}
		m, _ := e.Message()
		d, _ := m.Data()
		outputs = append(outputs, d.Usage.Output)
	}
	want := []float64{42, 12, 8, 9, 15} // msg_1's three lines say 3, 20, 42
	if len(outputs) != len(want) {
		t.Fatalf("assistant messages: output tokens %v, want %v", outputs, want)
	}
	for i := range want {
		if outputs[i] != want[i] {
			t.Fatalf("assistant messages: output tokens %v, want %v", outputs, want)
		}
	}
}

// TestClaudeSubagentOldLayout: before 2.1, agent-<id>.jsonl sat beside the
// session files; it is linked to its session and the Task call by agentId.
func TestClaudeSubagentOldLayout(t *testing.T) {
	dir := t.TempDir()
	main := "55550000-0000-4000-8000-000000000001.jsonl"
	for src, dst := range map[string]string{
		filepath.Join("testdata/claude/showcase", main):                                                main,
		"testdata/claude/showcase/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.jsonl": "agent-showcol1.jsonl",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadFile(filepath.Join(dir, "agent-showcol1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.ParentSession != filepath.Join(dir, main) || s.Header.From.ToolCall != "toolu_sc_showcol1" || !s.Header.From.Sidechain {
		t.Errorf("header %+v", s.Header)
	}
	srcs, err := Sources(dir)
	if err != nil || len(srcs) != 2 || filepath.Base(srcs[1]) != "agent-showcol1.jsonl" {
		t.Errorf("Sources: %v %v (the parent must come first)", srcs, err)
	}
	if !session.Load(s.Bytes()).Report().Clean() {
		t.Error("damage")
	}
}
