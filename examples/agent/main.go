// Command agent is a minimal coding agent on arbor's library: it keeps its
// conversation in a pi session file, runs a tool loop against a model, forks
// a cursor to try something aside, pins and outlines entries, fits the
// context into a budget, prints statistics, compacts, and reopens the file to
// continue.
//
// The model here is scripted (see model), so the program runs anywhere; a
// real agent calls a provider instead (package agent does).
//
//	go run ./examples/agent -dir /tmp/sessions
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/window"
)

func main() {
	dir := flag.String("dir", os.TempDir(), "the folder to keep the session in")
	flag.Parse()
	if err := run(os.Stdout, *dir); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, dir string) error {
	s, err := jsonl.Create("/home/me/project", dir) // a new session file in dir
	if err != nil {
		return err
	}
	if _, err := s.AppendModelChange("scripted", "model-1"); err != nil {
		return err
	}
	for _, prompt := range []string{"What is in README.md?", "And in main.go?"} {
		if err := turn(s.Log, prompt); err != nil {
			return err
		}
	}

	// A second cursor tries something aside; main's branch is not touched.
	// Appending through it makes it the active cursor: switch back to main.
	side, err := s.NewCursor("experiment")
	if err != nil {
		return err
	}
	if _, err := side.AppendUser("Try renaming it."); err != nil {
		return err
	}
	if err := s.Switch(session.MainCursor); err != nil {
		return err
	}

	// Keep the first prompt whatever the budget (the branch is model change,
	// prompt, call, result...); show the first tool result as an outline.
	cur, branch := s.Cursor(session.MainCursor), s.PathTo("")
	if err := cur.Pin(branch[1].ID); err != nil {
		return err
	}
	if err := cur.Outline(branch[3].ID, ""); err != nil {
		return err
	}
	fit, err := window.Fit(cur, window.Options{Budget: 200})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fitted: %d messages, %d of %d tokens\n", len(fit.Messages), fit.Tokens, fit.Budget)
	st := window.Measure(cur, window.StatsOptions{})
	fmt.Fprintf(w, "stats: %d messages, %d entries, %d tokens used\n", st.MessageCount, st.EntryCount, st.EstimatedUsed)

	// Summarize all but the most recent turn into a compaction entry.
	opts := compaction.Options{Settings: compaction.Settings{Enabled: true, ReserveTokens: 100, KeepRecentTokens: 40}}
	if _, _, err := compaction.Compact(context.Background(), s.Log.Cursor(""), opts); err != nil {
		return err
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		return err
	}

	// Reopen and continue where main left off.
	s, err = jsonl.Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := turn(s.Log, "Thanks, that is all."); err != nil {
		return err
	}
	fmt.Fprintf(w, "session %s: %d entries, %d messages in context\n", s.Header().ID, s.Len(), len(s.Context().Messages))
	return nil
}

// turn runs one prompt through the tool loop: ask the model, run the tools
// it calls, answer it, until it stops calling tools.
func turn(l *session.Log, prompt string) error {
	if _, err := l.AppendUser(prompt); err != nil {
		return err
	}
	for {
		reply := model(l.Context())
		if _, err := l.AppendAssistant(reply); err != nil {
			return err
		}
		calls := reply.ToolCalls()
		if len(calls) == 0 {
			return nil
		}
		for _, call := range calls {
			out, failed := readFile(call.Arguments)
			if _, err := l.AppendToolResult(session.ToolResult{ToolCallID: call.ID, ToolName: call.Name,
				Content: []session.Block{session.TextBlock(out)}, IsError: failed}); err != nil {
				return err
			}
		}
	}
}

// model stands in for a provider: it reads the file the last prompt names,
// then answers from the tool's result.
func model(ctx session.Context) session.Assistant {
	last, _ := ctx.Messages[len(ctx.Messages)-1].Data()
	n := float64(len(ctx.Messages))
	reply := session.Assistant{API: "scripted", Provider: "scripted", Model: "model-1",
		Usage: session.Usage{Input: 40 * n, Output: 12, TotalTokens: 40*n + 12}}
	text := last.Content.Text(" ")
	switch {
	case last.Role == session.RoleUser && strings.HasSuffix(text, "?"): // "What is in FILE?"
		words := strings.Fields(strings.TrimSuffix(text, "?"))
		file := words[len(words)-1]
		reply.Content = []session.Block{session.ToolCallBlock(fmt.Sprintf("call_%d", len(ctx.Messages)), "read", map[string]string{"path": file})}
		reply.StopReason = session.StopToolUse
	case last.Role == session.RoleToolResult:
		reply.Content = []session.Block{session.TextBlock("It says: " + text)}
		reply.StopReason = session.StopEnd
	default:
		reply.Content = []session.Block{session.TextBlock("You are welcome.")}
		reply.StopReason = session.StopEnd
	}
	return reply
}

// readFile is the one tool: it "reads" from a fixed set of files.
func readFile(args []byte) (string, bool) {
	files := map[string]string{"README.md": "# demo\nA demo project.", "main.go": "package main\n\nfunc main() {}"}
	for name, text := range files {
		if strings.Contains(string(args), `"`+name+`"`) {
			return text, false
		}
	}
	return "no such file", true
}
