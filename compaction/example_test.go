package compaction_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
)

// Compact plans as pi does (which entries to summarize, which to keep),
// summarizes the older part and appends a compaction entry: the context then
// starts from the summary. Without a Summarizer the summary is written
// mechanically, with no model call; agents pass one that asks their model.
func ExampleCompact() {
	l := session.New("/home/me/project")
	for i, prompt := range []string{"Read the scanner.", "Find the bug.", "Fix it."} {
		l.AppendUser(prompt)
		l.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock(strings.Repeat("Working on it. ", 40))},
			StopReason: session.StopEnd, Usage: session.Usage{Input: float64(1000 * (i + 1)), Output: 100}})
	}
	fmt.Println("before:", len(l.Context().Messages), "messages")

	settings := compaction.Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 200} // keep the newest 200 tokens or so
	e, plan, err := compaction.Compact(context.Background(), l.Cursor(""), compaction.Options{Settings: settings})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Type, "of", len(plan.MessagesToSummarize), "messages")
	fmt.Println("after:", len(l.Context().Messages), "messages, starting with", l.Context().Messages[0].Role)
	// Output:
	// before: 6 messages
	// compaction of 2 messages
	// after: 4 messages, starting with compactionSummary
}
