package rpc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
)

// The RPC servers refuse what arbor pin refuses, with the same check
// (session.Resolvable): metadata that never reaches the model cannot be
// pinned or rendered shorter, and a marker not at all.
func TestServeResolutionChecksAsTheCLI(t *testing.T) {
	c := startServe(t, testConfig(t, agenttest.New(t, "openai", agenttest.Reply{Text: "hello"}), t.TempDir()))
	call := func(method string, params any) map[string]any {
		t.Helper()
		return result(t, first(c.call(method, params)))
	}
	call("prompt", map[string]any{"message": "hi"})
	var user string
	for _, en := range call("getEntries", nil)["entries"].([]any) {
		if m, ok := en.(map[string]any)["message"].(map[string]any); ok && m["role"] == "user" {
			user = en.(map[string]any)["id"].(string)
		}
	}
	call("label", map[string]any{"entryId": user, "label": "start"})
	call("pin", map[string]any{"entryId": user})
	var label, marker string
	for _, en := range call("getEntries", nil)["entries"].([]any) {
		m := en.(map[string]any)
		switch {
		case m["type"] == "label":
			label = m["id"].(string)
		case m["type"] == "custom" && strings.HasPrefix(fmt.Sprint(m["customType"]), "arbor."):
			marker = m["id"].(string)
		}
	}
	if label == "" || marker == "" {
		t.Fatalf("no label (%q) or marker (%q) entry", label, marker)
	}
	for _, r := range []struct {
		method string
		params map[string]any
		says   string
	}{
		{"pin", map[string]any{"entryId": label}, "never reaches the model"},
		{"setResolution", map[string]any{"entryId": label, "level": "outline", "text": "x"}, "never reaches the model"},
		{"pin", map[string]any{"entryId": marker}, "arbor marker"},
		{"setResolution", map[string]any{"entryId": marker, "level": "summarize", "text": "x"}, "arbor marker"},
	} {
		e := errorOf(t, first(c.call(r.method, r.params)), -32602)
		if !strings.Contains(fmt.Sprint(e["message"]), r.says) || e["data"].(map[string]any)["field"] != "entryId" {
			t.Errorf("%s %v: %v, want %q", r.method, r.params, e, r.says)
		}
	}
	if r := call("unpin", map[string]any{"entryId": label}); r["level"] != "attached" {
		t.Errorf("unpin of a label: %v", r)
	}
	if r := call("unpin", map[string]any{"entryId": user}); r["level"] != "full" {
		t.Errorf("unpin of the prompt: %v", r)
	}
}
