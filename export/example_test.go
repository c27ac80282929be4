package export_test

import (
	"fmt"
	"strings"

	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/session"
)

// Markdown writes the conversation of a branch for people who do not run
// arbor; HTML writes a page with the whole tree, JSONL a linear session pi opens.
func ExampleMarkdown() {
	l := session.New("/home/me/project")
	l.AppendUser("How many lines does main.go have?")
	l.AppendAssistant(session.Assistant{
		Content:    []session.Block{session.ToolCallBlock("call_1", "bash", map[string]string{"command": "wc -l main.go"})},
		StopReason: session.StopToolUse})
	l.AppendToolResult(session.ToolResult{ToolCallID: "call_1", ToolName: "bash", Content: []session.Block{session.TextBlock("42 main.go")}})
	l.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("It has 42 lines.")}, StopReason: session.StopEnd})

	var md strings.Builder
	if err := export.Markdown(&md, l, export.Options{NoTools: true}); err != nil {
		panic(err)
	}
	_, conversation, _ := strings.Cut(md.String(), "\n\n## ") // after the header's ids and times
	fmt.Println("## " + conversation)
	// Output:
	// ## User
	//
	// How many lines does main.go have?
	//
	// ## Assistant
	//
	// **Tool call** `bash`
	//
	// ## Assistant
	//
	// It has 42 lines.
}
