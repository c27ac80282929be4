package session_test

import (
	"bytes"
	"encoding/json"
	"github.com/arborlog/arbor/internal/pitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

// forModelLines runs ForModel over testdata/formodel/input.jsonl (messages as
// pi writes them) and returns one JSON line per converted message.
func forModelLines(t *testing.T) []string {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("testdata", "formodel", "input.jsonl"))
	check(t, err)
	var msgs []session.ContextMessage
	for _, line := range bytes.Split(bytes.TrimSpace(in), []byte("\n")) {
		var v struct{ Role string }
		check(t, json.Unmarshal(line, &v))
		msgs = append(msgs, session.ContextMessage{Role: v.Role, Raw: line})
	}
	var out []string
	for _, m := range session.ForModel(msgs) {
		out = append(out, string(m))
	}
	return out
}

// TestForModelMatchesPi: ForModel gives, byte for byte, what pi's convertToLlm
// gave on the same messages (expected.jsonl was written by gen.mjs with pi 0.73.1):
// bash executions in every variant (no output, exit codes, cancelled,
// truncated with and without a path, excluded), custom messages with string
// and block content, both summaries, unknown roles dropped.
func TestForModelMatchesPi(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "formodel", "expected.jsonl"))
	check(t, err)
	if diff := cmp.Diff(strings.Split(strings.TrimSpace(string(want)), "\n"), forModelLines(t)); diff != "" {
		t.Errorf("ForModel differs from pi's convertToLlm (-pi +arbor):\n%s", diff)
	}
}

// TestForModelAgainstNode runs pi's convertToLlm itself when Node and the pi
// peer are installed, so that the committed expectation cannot drift from pi.
func TestForModelAgainstNode(t *testing.T) {
	pi := pitest.Dir(t, pitest.V073)
	in, err := os.Open(filepath.Join("testdata", "formodel", "input.jsonl"))
	check(t, err)
	defer in.Close()
	cmd := exec.Command("node", filepath.Join("testdata", "formodel", "gen.mjs"), pi)
	cmd.Stdin = in
	out, err := cmd.Output()
	check(t, err)
	if diff := cmp.Diff(strings.Split(strings.TrimSpace(string(out)), "\n"), forModelLines(t)); diff != "" {
		t.Errorf("ForModel differs from pi's convertToLlm (-pi +arbor):\n%s", diff)
	}
}

func TestForModelExactTexts(t *testing.T) {
	text := func(raw string) string {
		t.Helper()
		out := session.ForModel([]session.ContextMessage{{Role: "bashExecution", Raw: []byte(raw)}})
		if len(out) == 0 {
			return "<dropped>"
		}
		var v struct {
			Content []struct{ Text string }
		}
		check(t, json.Unmarshal(out[0], &v))
		return v.Content[0].Text
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false}`, "Ran `ls`\n```\na\n```"},
		{`{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false}`, "Ran `ls`\n(no output)"},
		{`{"role":"bashExecution","command":"ls","output":"a","exitCode":3,"cancelled":false,"truncated":false}`, "Ran `ls`\n```\na\n```\n\nCommand exited with code 3"},
		{`{"role":"bashExecution","command":"ls","output":"a","exitCode":3,"cancelled":true,"truncated":false}`, "Ran `ls`\n```\na\n```\n\n(command cancelled)"},
		{`{"role":"bashExecution","command":"ls","output":"a","exitCode":null,"cancelled":false,"truncated":true,"fullOutputPath":"/p"}`, "Ran `ls`\n```\na\n```\n\n[Output truncated. Full output: /p]"},
		{`{"role":"bashExecution","command":"ls","output":"a","cancelled":false,"truncated":true}`, "Ran `ls`\n```\na\n```"},
		{`{"role":"bashExecution","command":"ls","output":"a","excludeFromContext":true}`, "<dropped>"},
	} {
		if got := text(tc.raw); got != tc.want {
			t.Errorf("%s\n got %q\nwant %q", tc.raw, got, tc.want)
		}
	}
}
