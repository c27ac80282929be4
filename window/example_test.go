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
	l.AppendUser("Why does the scanner drop the last line?")
	l.AppendAssistant(session.Assistant{StopReason: session.StopToolUse,
		Content: []session.Block{session.ToolCallBlock("call1", "bash", map[string]string{"command": "go test ./..."})}})
	result, _ := l.AppendToolResult(session.ToolResult{ToolCallID: "call1", ToolName: "bash", IsError: true,
		Content: []session.Block{session.TextBlock("--- FAIL: TestScan (0.00s)\n--- PASS: TestSplit (0.00s)\nFAIL\n\nCommand exited with code 1")}})
	l.AppendAssistant(session.Assistant{StopReason: session.StopEnd, Content: []session.Block{session.TextBlock("The loop exits before flushing.")}})

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
			data, _ := m.Data()
			fmt.Printf("%s %s: %s\n", m.Role, m.Level, data.Content.Text(""))
		}
	}
	fmt.Println(len(r.Messages), "messages, fits:", r.Tokens <= r.Budget)
	// Output:
	// toolResult summarized: bash "go test ./...": failed (exit 1), 1 of 2 tests
	// 4 messages, fits: true
}

// Measure gives a cursor's statistics in one call: how much of the window the
// context takes, split by role, by resolution and by phase of the work.
func ExampleMeasure() {
	l := session.New("/project")
	l.AppendUser("Summarize CHANGES.md.")
	l.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("Three fixes and a new flag.")},
		StopReason: session.StopEnd, Usage: session.Usage{Input: 1200, Output: 10, TotalTokens: 1210}})

	st := window.Measure(l.Cursor(""), window.StatsOptions{Window: 8000, Reserve: 1000})
	fmt.Println(st.MessageCount, "messages,", st.EstimatedUsed, "of", st.PromptBudget, "tokens")
	fmt.Println("by role:", st.RoleTokens.User+st.RoleTokens.Assistant+st.BeyondMessages == st.EstimatedUsed)
	// Output:
	// 2 messages, 1210 of 7000 tokens
	// by role: true
}
