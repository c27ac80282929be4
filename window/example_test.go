package window_test

import (
	"fmt"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window"
)

// A cursor summarizes an old tool result; Fit renders the cursor's context
// that way, and with a budget fits the rest. The log is not changed: pi still
// reads it in full.
func ExampleFit() {
	l := session.New("/project")
	add := func(v map[string]any) *session.Entry {
		m, _ := session.NewMessage(v)
		e, _ := l.AppendMessage(m)
		return e
	}
	add(map[string]any{"role": "user", "content": "Why does the scanner drop the last line?"})
	add(map[string]any{"role": "assistant", "stopReason": "toolUse", "content": []any{
		map[string]any{"type": "toolCall", "id": "call1", "name": "bash", "arguments": map[string]any{"command": "go test ./..."}}}})
	result := add(map[string]any{"role": "toolResult", "toolCallId": "call1", "toolName": "bash", "isError": true, "content": []any{
		map[string]any{"type": "text", "text": "--- FAIL: TestScan (0.00s)\n--- PASS: TestSplit (0.00s)\nFAIL\n\nCommand exited with code 1"}}})
	add(map[string]any{"role": "assistant", "stopReason": "stop", "content": []any{map[string]any{"type": "text", "text": "The loop exits before flushing."}}})

	c := l.Cursor("")
	if err := c.Summarize(result.ID, ""); err != nil {
		panic(err)
	}
	r, err := window.Fit(c, window.Options{Budget: 60000})
	if err != nil {
		panic(err)
	}
	for _, m := range r.Messages {
		if m.Level == session.Summarized {
			msg, _ := session.ParseMessage(m.Raw)
			data, _ := msg.Data()
			fmt.Printf("%s %s: %s\n", m.Role, m.Level, data.Content.Text(""))
		}
	}
	fmt.Println(len(r.Messages), "messages, fits:", r.Tokens <= r.Budget)
	// Output:
	// toolResult summarized: bash "go test ./...": failed (exit 1), 1 of 2 tests
	// 4 messages, fits: true
}
