package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/arborlog/arbor/session"
)

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func FuzzRequestDecoded(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"bash","arguments":{}}],"stopReason":"toolUse"}`), []byte(`{"role":"toolResult","toolCallId":"a","content":"x"}`))
	f.Add([]byte(`{"role":"user","content":"hi"}`), []byte(`{"role":"toolResult","toolCallId":"b","content":[]}`))
	f.Add([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"}],"usage":{"input":1,"output":2},"stopReason":"stop"}`), []byte(`{"role":"user","content":"x","role":"assistant"}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		// Messages known to be JSON, not checked again, decode the same.
		if json.Valid(a) && json.Valid(b) {
			r := Request{Messages: []json.RawMessage{a, b}}
			var want, got []string
			for m := range r.Decoded() {
				want = append(want, fmt.Sprintf("%+v %s", m.Usage, must(json.Marshal(m))))
			}
			r.checked = true
			for m := range r.Decoded() {
				got = append(got, fmt.Sprintf("%+v %s", m.Usage, must(json.Marshal(m))))
			}
			if !slices.Equal(want, got) {
				t.Fatalf("checked JSON decoded\n%q\nnot as when checked again\n%q", got, want)
			}
		}
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

// FuzzWireIsTheSDKs: whatever the fast encoders write for the parameters the
// conversions make of a message is what the SDK's MarshalJSON writes.
func FuzzWireIsTheSDKs(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi <b> & \u2028 \n\t\"q\" \\ é \u0001"}`), []byte(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":""}]}`))
	f.Add([]byte(`{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"text","text":"x"},{"type":"text","text":"y"},{"type":"toolCall","id":"a","name":"bash","arguments":{"z":1,"a":[1.5,1e21,0.0000001,-0,12345678901234567890],"m":{"b":null,"a":true},"s":"<\u2029>"}}],"stopReason":"toolUse"}`),
		[]byte(`{"role":"toolResult","toolCallId":"a","content":[{"type":"text","text":"out"}],"isError":true}`))
	f.Add([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"","name":"","arguments":[1]},{"type":"toolCall","id":"b","name":"n"}],"stopReason":"toolUse"}`), []byte(`{"role":"toolResult","toolCallId":"b","content":""}`))
	f.Add([]byte("{\"role\":\"user\",\"content\":\"\xff\xfe\"}"), []byte(`{"role":"assistant","content":""}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		r := Request{System: "sys", Messages: []json.RawMessage{a, b}}
		for m := range openaiMessages(r) {
			want, err := m.MarshalJSON()
			if got, ok := appendOpenAI(nil, m); ok && (err != nil || string(got) != string(want)) {
				t.Fatalf("openai: wrote\n%s\nthe SDK\n%s (%v)", got, want, err)
			}
		}
		for m := range anthropicMessages(r, true) {
			want, err := m.MarshalJSON()
			if got, ok := appendAnthropic(nil, m); ok && (err != nil || string(got) != string(want)) {
				t.Fatalf("anthropic: wrote\n%s\nthe SDK\n%s (%v)", got, want, err)
			}
		}
	})
}

// FuzzToolInputIsTheMaps: the input toolInput gives a tool_use block is
// written as the map json.Unmarshal makes of the arguments would be.
func FuzzToolInputIsTheMaps(f *testing.F) {
	for _, s := range []string{`{"path":"a.go","command":"ls <x> & y"}`, ` {"b": [1, -2, 0, true, null, {"z":{},"a":"\u2028"}], "a": "é"} `, `[]`, `"s"`, `12`,
		`{"a":1,"a":2}`, `-0`, `1.5`, `1e3`, `1234567890123456`, `{"a\u0062":1}`, `{"a":1,}`, `[1,]`, ``, `{`, "{\"s\":\"x\u2028y\u2029<\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		var input any = map[string]any{}
		_ = json.Unmarshal(args, &input)
		want, werr := anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("i", input, "n")).MarshalJSON()
		got, err := anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("i", toolInput(args), "n")).MarshalJSON()
		if (err == nil) != (werr == nil) || string(got) != string(want) {
			t.Fatalf("arguments %q: wrote\n%s (%v)\nas a map\n%s (%v)", args, got, err, want, werr)
		}
	})
}
