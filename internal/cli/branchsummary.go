package cli

import (
	"context"
	"fmt"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

// branchSummaryFlags add --summarize to `arbor branch`: the entries the move
// leaves behind are summarized into a branch_summary at the target (pi's /tree
// "Summarize").
type branchSummaryFlags struct {
	summarize    bool
	instructions string
	replace      bool
	window       int
	summary      summarizerFlags
}

func (f *branchSummaryFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.summarize, "summarize", false, "summarize the entries left behind into a branch_summary at the target (pi's /tree summary)")
	cmd.Flags().StringVar(&f.instructions, "instructions", "", "with --summarize: what the summary should focus on")
	cmd.Flags().BoolVar(&f.replace, "replace-instructions", false, "with --summarize --summarizer model: --instructions replace pi's prompt instead of adding to it")
	cmd.Flags().IntVar(&f.window, "window", 128000, "with --summarize: the model's context window; the newest entries that fit in it minus 16,384 are summarized")
	f.summary.add(cmd)
}

// move summarizes what moving cursor c to target ("" for before the first entry)
// leaves behind and moves it there; it returns the branch_summary's id, or ""
// when nothing was left behind and the cursor just moved.
func (f *branchSummaryFlags) move(path string, c *session.Cursor, target string) (string, error) {
	summ, _, err := f.summary.summarizer()
	if err != nil {
		return "", err
	}
	m, err := compaction.BranchWithSummary(context.Background(), c, target, compaction.BranchOptions{
		Summarizer: summ, Instructions: f.instructions, ReplaceInstructions: f.replace, ContextWindow: f.window})
	if err != nil {
		return "", fmt.Errorf("summarize the branch left behind in %s: %w; nothing was written", path, err)
	}
	if m.Summary == nil {
		return "", nil
	}
	return m.Summary.ID, nil
}
