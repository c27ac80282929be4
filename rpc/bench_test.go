package rpc

import (
	"fmt"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// BenchmarkServeGetState is one request and its response through arbor
// serve's framing (jrpc2 over JSON lines): the overhead a client pays per call.
func BenchmarkServeGetState(b *testing.B) {
	c := startServe(b, testConfig(b, agenttest.New(b, "openai"), b.TempDir()))
	b.ResetTimer()
	for b.Loop() {
		c.call("getState", nil)
	}
}

// BenchmarkFollowerPoll is a follower's getEntries{since} on a session of
// 2,000 entries that another writer holds: the file is read again each time.
func BenchmarkFollowerPoll(b *testing.B) {
	cfg := testConfig(b, agenttest.New(b, "openai"), b.TempDir())
	w, err := jsonl.Create(cfg.Cwd, cfg.Where, jsonl.Immediate())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var last string
	for i := range 2000 {
		m, _ := session.NewMessage(map[string]any{"role": "user", "content": fmt.Sprintf("message %d with some text to read", i), "timestamp": i})
		e, err := w.Log.AppendMessage(m)
		if err != nil {
			b.Fatal(err)
		}
		last = e.ID
	}
	c := startServe(b, cfg)
	c.call("resumeSession", map[string]any{"path": w.Path(), "readOnly": true})
	b.ResetTimer()
	for b.Loop() {
		resp, _ := c.call("getEntries", map[string]any{"since": last})
		if resp["error"] != nil {
			b.Fatal(resp["error"])
		}
	}
}
