package cli

import (
	"fmt"
	"os"

	"github.com/arborlog/arbor/internal/statusbar"
	"github.com/arborlog/arbor/window"
	"github.com/spf13/cobra"
)

type statsOptions struct {
	io      *IO
	g       *Global
	arg     string
	window  int
	reserve int
	cursor  string
	phases  string
}

func newCmdStats(ios *IO, g *Global) *cobra.Command {
	o := &statsOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "stats <session>",
		Short: "Show how much of the model's window a session's context uses",
		Long: `Print one status line (used/prompt budget, what remains, how many messages)
and a breakdown of the context's tokens by role, resolution and phase, the
compaction, and the provider usage and cost summed over every assistant
message in the file, on every branch.

The prompt budget is --window minus --reserve. The tokens used start from the
usage the provider reported for the last assistant message and add estimates of
what came after it, as pi does; where that is not possible (outlined entries,
no usage) every message is estimated. Phases come from tool names and shell
commands; --phases (or $ARBOR_PHASES) names a JSON file that adds to the
defaults: {"tools":{"my_tool":"exploration"},"commands":{"bazel test":"verification"}}.

--json prints the statistics as one JSON object.`,
		Example: `  arbor stats my-session
  arbor stats 0195f1c2 --window 128000 --reserve 8000 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if o.window <= 0 {
				return usagef("--window must be a number of tokens above 0, not %d", o.window)
			}
			if !c.Flags().Changed("reserve") && o.reserve >= o.window {
				o.reserve = o.window / 4 // the default reserve does not fit a small window
			}
			if o.reserve < 0 || o.reserve >= o.window {
				return usagef("--reserve must be at least 0 and below --window (%d), not %d", o.window, o.reserve)
			}
			if !c.Flags().Changed("phases") {
				o.phases = os.Getenv("ARBOR_PHASES")
			}
			return runStats(o)
		},
	}
	cmd.Flags().IntVar(&o.window, "window", window.DefaultWindow, "the model's context window in tokens")
	cmd.Flags().IntVar(&o.reserve, "reserve", window.DefaultReserve, "tokens kept free for the reply (a quarter of --window when the default does not fit)")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "measure this cursor's context (id or name); default the active one")
	cmd.Flags().StringVar(&o.phases, "phases", "", "JSON file of tool and command phases (default $ARBOR_PHASES)")
	return cmd
}

func runStats(o *statsOptions) error {
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	c := l.Cursor(o.cursor)
	if o.cursor != "" && !hasCursor(l, c.ID()) {
		return fmt.Errorf("no cursor %q in %s; 'arbor info %s' lists them", o.cursor, path, path)
	}
	opts := window.StatsOptions{Window: o.window, Reserve: o.reserve}
	if o.reserve == 0 {
		opts.Reserve = -1
	}
	if o.phases != "" {
		if opts.Classifier, err = window.LoadClassifier(o.phases); err != nil {
			return err
		}
	}
	s := window.Measure(c, opts)
	if o.g.JSON {
		return o.io.JSON(s)
	}
	w := o.io.Buffered()
	defer w.Flush()
	w.WriteString(statusbar.Line(s, o.io.Color()) + "\n\n")
	used := fmt.Sprintf("~%s", thousands(s.EstimatedUsed))
	if s.UsageAnchor != "" {
		used += fmt.Sprintf(" (provider usage up to %s, estimates after it)", s.UsageAnchor)
	} else {
		used += " (estimated)"
	}
	rows := [][2]string{
		{"window", fmt.Sprintf("%s − reserve %s = prompt budget %s", thousands(s.ContextWindow), thousands(s.CompletionReserve), thousands(s.PromptBudget))},
		{"used", used},
		{"remaining", thousands(s.EstimatedRemaining)},
		{"counts", fmt.Sprintf("%s in context · %s on the path · %s in the file", count(s.MessageCount, "message"), count(s.PathEntryCount, "entry"), count(s.EntryCount, "entry"))},
		{"by role", fmt.Sprintf("user %s · assistant %s · tool %s · system %s", thousands(s.RoleTokens.User), thousands(s.RoleTokens.Assistant), thousands(s.RoleTokens.Tool), thousands(s.RoleTokens.System))},
		{"by resolution", fmt.Sprintf("full %s · outlined %s · summarized %s · pinned %s", thousands(s.ResolutionTokens.Full), thousands(s.ResolutionTokens.Outlined), thousands(s.ResolutionTokens.Summarized), thousands(s.ResolutionTokens.Pinned))},
		{"by phase", fmt.Sprintf("exploration %s · execution %s · verification %s · conclusion %s · unclassified %s", thousands(s.PhaseTokens.Exploration), thousands(s.PhaseTokens.Execution), thousands(s.PhaseTokens.Verification), thousands(s.PhaseTokens.Conclusion), thousands(s.PhaseTokens.Unclassified))},
		{"beyond", fmt.Sprintf("%s counted by the provider beyond the messages (system prompt, tool schemas); with each breakdown above it makes the tokens used", signedThousands(s.BeyondMessages))},
		{"compaction", fmt.Sprintf("summary %s tokens · %s compacted", thousands(s.CompactionTokens), count(s.CompactedEntryCount, "entry"))},
		{"API usage", fmt.Sprintf("%s · input %s · output %s · cache read %s · cache write %s · total %s · $%.4f",
			count(s.APIUsage.Requests, "request"), thousands(int(s.APIUsage.Input)), thousands(int(s.APIUsage.Output)), thousands(int(s.APIUsage.CacheRead)), thousands(int(s.APIUsage.CacheWrite)), thousands(int(s.APIUsage.TotalTokens)), s.APIUsage.Cost)},
	}
	if s.Redactions > 0 {
		rows = append(rows, [2]string{"redacted", count(s.Redactions, "secret") + " removed from tool output"})
	}
	for _, r := range rows {
		fprintf(w, "%-14s %s\n", r[0], r[1])
	}
	return nil
}

func signedThousands(n int) string {
	if n < 0 {
		return "−" + thousands(-n)
	}
	return thousands(n)
}

// The number formats every command prints (package statusbar holds them, for
// the chat's footer too).
var (
	thousands = statusbar.Thousands
	count     = statusbar.Count
)
