package session_test

import (
	"fmt"

	"github.com/arborlog/arbor/session"
)

// An agent keeps its conversation in a Log: typed appends write each message
// as pi stores it, and Context is what to send the model next.
func Example() {
	l := session.New("/home/me/project") // in memory; session/jsonl keeps it in a file
	l.AppendModelChange("anthropic", "claude-sonnet-4-5")
	l.AppendUser("How many lines does main.go have?")
	l.AppendAssistant(session.Assistant{
		Content:  []session.Block{session.ToolCallBlock("call_1", "bash", map[string]string{"command": "wc -l main.go"})},
		Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: session.StopToolUse,
	})
	l.AppendToolResult(session.ToolResult{ToolCallID: "call_1", ToolName: "bash",
		Content: []session.Block{session.TextBlock("42 main.go")}})
	l.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("42.")},
		Provider: "anthropic", Model: "claude-sonnet-4-5", StopReason: session.StopEnd})

	ctx := l.Context()
	for _, m := range ctx.Messages {
		d, _ := m.Data()
		fmt.Printf("%s %q\n", m.Role, d.Content.Text(" "))
	}
	fmt.Println("model:", string(ctx.Model.ModelID))
	// Output:
	// user "How many lines does main.go have?"
	// assistant ""
	// toolResult "42 main.go"
	// assistant "42."
	// model: "claude-sonnet-4-5"
}

// A cursor is a second position in the same log: what is appended through it
// forms its own branch, and the main cursor's context does not change.
func ExampleLog_NewCursor() {
	l := session.New("/p")
	l.AppendUser("Write a parser.")
	l.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("With a state machine.")}, StopReason: session.StopEnd})

	side, _ := l.NewCursor("regexp")
	side.AppendUser("Try it with a regular expression instead.")

	fmt.Println("main:", len(l.Cursor(session.MainCursor).Context().Messages), "messages")
	fmt.Println("regexp:", len(side.Context().Messages), "messages")
	// Output:
	// main: 2 messages
	// regexp: 3 messages
}

// Extensions keep state in custom entries, which never reach the model, and
// read the latest back from the branch.
func ExampleLog_CustomState() {
	l := session.New("/p")
	l.AppendCustom("todo", []string{"parse"})
	l.AppendUser("Done parsing; now the printer.")
	l.AppendCustom("todo", []string{"print"})

	data, _ := l.CustomState("todo")
	fmt.Println(string(data))
	// Output: ["print"]
}

// A bash execution is a command the user ran themselves; pi's readers need
// its cancelled and truncated flags, which the typed append always writes.
func ExampleCursor_AppendBashExecution() {
	l := session.New("/p")
	code := 0
	e, _ := l.Cursor("").AppendBashExecution(session.BashExecution{Command: "go vet ./...", Output: "", ExitCode: &code})
	d, _ := l.Context().Messages[0].Data()
	fmt.Println(e.Role(), d.Command, *d.ExitCode, d.Cancelled, d.Truncated)
	// Output: bashExecution go vet ./... 0 false false
}
