package agent

import (
	"encoding/json"
	"github.com/arborlog/arbor/session"
	"testing"
)

func FuzzRequestDecoded(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"bash","arguments":{}}],"stopReason":"toolUse"}`), []byte(`{"role":"toolResult","toolCallId":"a","content":"x"}`))
	f.Add([]byte(`{"role":"user","content":"hi"}`), []byte(`{"role":"toolResult","toolCallId":"b","content":[]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		calls := map[string]bool{}
		for m := range (Request{Messages: []json.RawMessage{a, b}}).Decoded() {
			switch m.Role {
			case "assistant":
				if m.StopReason == session.StopError || m.StopReason == session.StopAborted {
					t.Fatalf("a failed reply was kept: %+v", m)
				}
				for _, c := range m.Content.AsBlocks() {
					if c.Type == "toolCall" {
						calls[c.ID] = true
					}
				}
			case "toolResult":
				if !calls[m.ToolCallID] {
					t.Fatalf("a result without its call: %+v", m)
				}
			case "user":
			default:
				t.Fatalf("role %q sent", m.Role)
			}
		}
	})
}

func FuzzParseArguments(f *testing.F) {
	f.Add(`{"command":"ls"}`)
	f.Add(`{"a":`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := parseArguments(s)
		var v map[string]any
		if json.Unmarshal(raw, &v) != nil {
			t.Fatalf("arguments %q became %q, not an object", s, raw)
		}
		if err == nil && len(s) > 0 {
			var w map[string]any
			if json.Unmarshal([]byte(s), &w) != nil && len(v) > 0 {
				t.Fatalf("bad arguments %q accepted", s)
			}
		}
	})
}
