package importers

import (
	"bytes"
	"fmt"
	"testing"
)

// bigClaude is a Claude Code transcript of n turns, each a prompt, a response
// written as two lines (text, tool_use) with a progress line between, a tool
// result and an answer: the shapes real files have.
func bigClaude(n int) []byte {
	var b bytes.Buffer
	prev := "null"
	env := `"isSidechain":false,"userType":"external","cwd":"/work/app","sessionId":"bench","version":"2.1.114"`
	for i := range n {
		ts := fmt.Sprintf("2026-05-01T%02d:%02d:%02d.000Z", i/3600%24, i/60%60, i%60)
		fmt.Fprintf(&b, `{"parentUuid":%s,%s,"type":"user","message":{"role":"user","content":"question %d: why does the build of module %d fail with exit status 2 on the CI runner?"},"uuid":"u%d","timestamp":"%s"}`+"\n", prev, env, i, i, i, ts)
		fmt.Fprintf(&b, `{"parentUuid":"u%d",%s,"type":"assistant","requestId":"r%d","message":{"id":"m%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me look at the log of module %d."}],"stop_reason":null,"usage":{"input_tokens":1200,"output_tokens":10,"cache_read_input_tokens":800,"cache_creation_input_tokens":0}},"uuid":"a%d","timestamp":"%s"}`+"\n", i, env, i, i, i, i, ts)
		fmt.Fprintf(&b, `{"parentUuid":"a%d",%s,"type":"progress","data":{"type":"hook_progress"},"uuid":"p%d","timestamp":"%s"}`+"\n", i, env, i, ts)
		fmt.Fprintf(&b, `{"parentUuid":"p%d",%s,"type":"assistant","requestId":"r%d","message":{"id":"m%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"make -C module%d 2>&1 | tail -50"}}],"stop_reason":"tool_use","usage":{"input_tokens":1200,"output_tokens":60,"cache_read_input_tokens":800,"cache_creation_input_tokens":0}},"uuid":"b%d","timestamp":"%s"}`+"\n", i, env, i, i, i, i, i, ts)
		fmt.Fprintf(&b, `{"parentUuid":"b%d",%s,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t%d","type":"tool_result","content":"%s"}]},"uuid":"r%d","timestamp":"%s"}`+"\n", i, env, i, bytes.Repeat([]byte(`make: *** [build] Error 2\\n`), 40), i, ts)
		fmt.Fprintf(&b, `{"parentUuid":"r%d",%s,"type":"assistant","requestId":"s%d","message":{"id":"n%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"The build of module %d fails because the build target is missing a dependency."}],"stop_reason":"end_turn","usage":{"input_tokens":2400,"output_tokens":30,"cache_read_input_tokens":800,"cache_creation_input_tokens":0}},"uuid":"c%d","timestamp":"%s"}`+"\n", i, env, i, i, i, i, ts)
		prev = fmt.Sprintf(`"c%d"`, i)
	}
	return b.Bytes()
}

// bigCodex is a Codex rollout of n turns with the event copies real files have.
func bigCodex(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"id":"bench","cwd":"/work/proj","originator":"codex_cli_rs","cli_version":"0.46.0","source":"cli","model_provider":"openai"}}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:01.000Z","type":"turn_context","payload":{"turn_id":"t%d","cwd":"/work/proj","model":"gpt-5"}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"question %d about the failing build"}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"question %d about the failing build"}]}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:02.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"Looking at the log"}],"encrypted_content":"gAAAA%s"}}`+"\n", bytes.Repeat([]byte("x"), 600))
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"make\",\"-C\",\"m%d\"]}","call_id":"c%d"}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c%d","output":"%s"}}`+"\n", i, bytes.Repeat([]byte(`make: *** [build] Error 2\\n`), 40))
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:04.000Z","type":"event_msg","payload":{"type":"agent_message","message":"answer %d"}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"2026-03-01T10:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"answer %d"}]}}`+"\n", i)
		b.WriteString(`{"timestamp":"2026-03-01T10:00:04.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":50}}}}` + "\n")
	}
	return b.Bytes()
}

func benchRead(b *testing.B, f Format, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Read(f, Input{Path: "/bench.jsonl", Data: data})
		if err != nil || len(s.Lines) == 0 {
			b.Fatal(err)
		}
	}
}

// go test ./importers -run '^$' -bench . -benchtime 5x
func BenchmarkReadClaude(b *testing.B) { benchRead(b, Claude, bigClaude(5000)) }
func BenchmarkReadCodex(b *testing.B)  { benchRead(b, Codex, bigCodex(5000)) }
