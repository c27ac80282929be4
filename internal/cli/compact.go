package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

type compactOptions struct {
	io        *IO
	g         *Global
	arg       string
	keep      int
	reserve   int
	olderThan int // rho's compact_older_than: summarize the oldest this many tokens
	window    int // compact only when the context exceeds window − reserve
	dryRun    bool
	undo      bool
	cursor    string
	summary   summarizerFlags
	instruct  string
}

// summarizerFlags choose and configure a summarizer; compact and branch share them.
type summarizerFlags struct {
	name    string // mechanical | model | "" (model when configured, else mechanical)
	baseURL string
	model   string
	keyEnv  string
	timeout time.Duration
}

func (f *summarizerFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "summarizer", "", "mechanical (offline) or model; default: model when "+compaction.EnvBaseURL+" and "+compaction.EnvModel+" are set, else mechanical")
	cmd.Flags().StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible endpoint for the model summarizer (default $"+compaction.EnvBaseURL+")")
	cmd.Flags().StringVar(&f.model, "model", "", "model for the model summarizer (default $"+compaction.EnvModel+")")
	cmd.Flags().StringVar(&f.keyEnv, "api-key-env", "", "environment variable holding the API key (default $"+compaction.EnvAPIKeyEnv+", else "+compaction.DefaultKey+")")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 2*time.Minute, "how long to wait for the model")
}

// summarizer builds the chosen summarizer and says which it is.
func (f *summarizerFlags) summarizer() (compaction.Summarizer, string, error) {
	env := func(k string) string {
		switch k {
		case compaction.EnvBaseURL:
			if f.baseURL != "" {
				return f.baseURL
			}
		case compaction.EnvModel:
			if f.model != "" {
				return f.model
			}
		case compaction.EnvAPIKeyEnv:
			if f.keyEnv != "" {
				return f.keyEnv
			}
		}
		return os.Getenv(k)
	}
	switch f.name {
	case "mechanical":
		return compaction.Mechanical{}, "mechanical", nil
	case "model", "":
		m, err := compaction.ModelFromEnv(env)
		if errors.Is(err, compaction.ErrNoModel) && f.name == "" {
			return compaction.Mechanical{}, "mechanical", nil
		}
		if err != nil {
			return nil, "", err
		}
		m.Timeout = f.timeout
		return m, "model " + m.Model, nil
	}
	return nil, "", usagef("--summarizer must be mechanical or model, not %q", f.name)
}

// compactResult is what `arbor compact --json` prints after appending.
type compactResult struct {
	ID               string `json:"id"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	Summarized       int    `json:"messagesSummarized"`
	Summarizer       string `json:"summarizer"`
	MovedFrom        string `json:"movedFrom,omitempty"`
}

// undoResult is what `arbor compact --undo --json` prints.
type undoResult struct {
	Compaction string  `json:"compaction"`
	From       string  `json:"from"`
	To         *string `json:"to"`
	Left       int     `json:"left"`
}

func newCmdCompact(ios *IO, g *Global) *cobra.Command {
	o := &compactOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "compact <session>",
		Short: "Summarize the older part of a branch (and undo it)",
		Long: `Compact the active branch as pi does: the older messages are replaced in the
context by a summary, and the most recent --keep-recent-tokens (estimated as
pi estimates, characters/4) are kept as they are. The plan is pi 1.6.0's (over
the context with its edits applied), so pi and arbor agree on what a compaction
covers; unlike pi, arbor never keeps a
tool result without the call that produced it (it moves the cut back instead).

The compaction is appended as an entry (pi reads it); nothing is deleted.
--dry-run prints the plan without summarizing or writing anything (with --json,
null when there is nothing to summarize, as pi prints). --undo moves
the leaf back to where it was before the last compaction on the branch, so the
context is exactly what it was; the compaction stays in the tree.

Summaries are written offline by default (--summarizer mechanical: the original
and current request, tool activity by phase, key findings, files). With
--summarizer model, pi's prompts go to an OpenAI-compatible chat-completions
endpoint: --base-url or $ARBOR_MODEL_BASE_URL, --model or $ARBOR_MODEL, and the
key from the variable named by --api-key-env or $ARBOR_API_KEY_ENV (default
$ARBOR_API_KEY). If the model fails, nothing is appended.

'arbor show <session> <compaction-id>' prints a compaction's summary and the
entries it replaced.`,
		Example: `  arbor compact my-session --dry-run --json
  arbor compact my-session --keep-recent-tokens 8000
  arbor compact my-session --older-than 50000
  arbor compact my-session --window 200000   # only when over 200,000 − 16,384 tokens
  ARBOR_MODEL_BASE_URL=http://localhost:11434/v1 ARBOR_MODEL=qwen3 arbor compact my-session --instructions "keep the failing test names"
  arbor compact my-session --undo`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if o.undo && (o.dryRun || c.Flags().Changed("keep-recent-tokens") || c.Flags().Changed("summarizer") || o.instruct != "") {
				return usagef("--undo takes no other compaction flags")
			}
			if o.olderThan > 0 && c.Flags().Changed("keep-recent-tokens") {
				return usagef("give --keep-recent-tokens or --older-than, not both")
			}
			for _, f := range []struct {
				name string
				n    int
			}{{"keep-recent-tokens", o.keep}, {"reserve-tokens", o.reserve}, {"older-than", o.olderThan}, {"window", o.window}} {
				if f.n < 0 {
					return usagef("--%s must be a number of tokens of at least 0, not %d", f.name, f.n)
				}
			}
			switch {
			case o.undo:
				return runCompactUndo(o)
			case o.dryRun:
				return runCompactPlan(o)
			}
			return runCompact(c.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.keep, "keep-recent-tokens", compaction.DefaultSettings.KeepRecentTokens, "tokens of recent messages to keep as they are")
	cmd.Flags().IntVar(&o.reserve, "reserve-tokens", compaction.DefaultSettings.ReserveTokens, "tokens reserved for the reply (bounds the model's summary)")
	cmd.Flags().IntVar(&o.olderThan, "older-than", 0, "summarize the oldest this many tokens not yet summarized, instead of keeping the most recent --keep-recent-tokens")
	cmd.Flags().IntVar(&o.window, "window", 0, "compact only if the context exceeds this window minus --reserve-tokens (pi's automatic trigger)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the plan; summarize and write nothing")
	cmd.Flags().BoolVar(&o.undo, "undo", false, "move the leaf back to before the last compaction on the branch")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "compact this cursor's branch (id or name) instead of the active one")
	cmd.Flags().StringVar(&o.instruct, "instructions", "", "what the summary should focus on")
	o.summary.add(cmd)
	return cmd
}

func (o *compactOptions) settings() compaction.Settings {
	return compaction.Settings{Enabled: true, ReserveTokens: o.reserve, KeepRecentTokens: o.keep}
}

// plan makes the compaction plan for the branch ending at leaf.
func (o *compactOptions) plan(l *session.Log, leaf string) (*compaction.Plan, error) {
	if o.olderThan > 0 {
		return compaction.PrepareOlderThan(l.PathTo(leaf), o.olderThan)
	}
	return compaction.Prepare(l.PathTo(leaf), o.settings())
}

// notNeeded is what `arbor compact --window` prints when the context fits.
type notNeeded struct {
	Compacted bool `json:"compacted"`
	Tokens    int  `json:"tokens"`
	Window    int  `json:"window"`
	Reserve   int  `json:"reserve"`
}

// needed applies --window: it reports, and prints, when the context still fits.
func (o *compactOptions) needed(l *session.Log, cursor string) (bool, error) {
	if o.window == 0 {
		return true, nil
	}
	need, est := compaction.NeedsCompaction(l.Cursor(cursor).Context().Messages, o.window, o.settings())
	if need {
		return true, nil
	}
	if o.g.JSON {
		return false, o.io.JSON(notNeeded{Tokens: est.Tokens, Window: o.window, Reserve: o.reserve})
	}
	o.io.Printf("no compaction needed: the context holds about %d tokens, under %d − %d\n", est.Tokens, o.window, o.reserve)
	return false, nil
}

func runCompactPlan(o *compactOptions) error {
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	if _, err := cursorOrErr(l, path, o.cursor); err != nil {
		return err
	}
	leaf := l.Cursor(o.cursor).Leaf()
	if leaf == nil {
		if o.g.JSON && o.olderThan == 0 {
			o.io.Printf("null\n") // pi's prepareCompaction makes no plan for an empty branch
			return nil
		}
		return fmt.Errorf("nothing to compact in %s: the branch is empty", path)
	}
	if need, err := o.needed(l, o.cursor); !need || err != nil {
		return err
	}
	plan, err := o.plan(l, leaf.ID)
	if errors.Is(err, compaction.ErrNothingToCompact) && o.g.JSON && o.olderThan == 0 {
		o.io.Printf("null\n") // as pi's prepareCompaction: no plan
		return nil
	}
	if err != nil {
		return o.planError(err, path)
	}
	if o.g.JSON {
		return o.io.JSON(plan)
	}
	printPlan(o.io, plan)
	return nil
}

func (o *compactOptions) planError(err error, path string) error {
	if errors.Is(err, compaction.ErrNothingToCompact) {
		return fmt.Errorf("nothing to summarize in %s: the branch is empty, ends in a compaction, or fits in --keep-recent-tokens", path)
	}
	if errors.Is(err, compaction.ErrBelowThreshold) {
		return fmt.Errorf("nothing to compact in %s: less than --older-than %d tokens before the leaf", path, o.olderThan)
	}
	return fmt.Errorf("compact %s: %w", path, err)
}

func printPlan(ios *IO, p *compaction.Plan) {
	ios.Printf("keep from       %s", p.FirstKeptEntryID)
	if p.MovedFrom != "" {
		ios.Printf(" (moved back from %s to keep a tool result with its call)", p.MovedFrom)
	}
	ios.Printf("\ntokens before   %d\nsummarize       %s", p.TokensBefore, count(len(p.MessagesToSummarize), "message"))
	if p.IsSplitTurn {
		ios.Printf(", plus the first %s of the turn that is cut", count(len(p.TurnPrefixMessages), "message"))
	}
	ios.Printf("\n")
	if p.PreviousSummary != nil {
		ios.Printf("updates         the previous compaction's summary\n")
	}
	for _, f := range p.ReadFiles {
		ios.Printf("read            %s\n", f)
	}
	for _, f := range p.ModifiedFiles {
		ios.Printf("modified        %s\n", f)
	}
}

func runCompact(ctx context.Context, o *compactOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	summ, which, err := o.summary.summarizer()
	if err != nil {
		return err
	}
	var res compactResult
	skipped := false
	err = o.g.edit(o.io, o.arg, func(s *writable) error {
		c, err := cursorOrErr(s.Log, s.Path(), o.cursor)
		if err != nil {
			return err
		}
		leaf := c.Leaf()
		if leaf == nil {
			return fmt.Errorf("nothing to compact in %s: the branch is empty", s.Path())
		}
		if need, err := o.needed(s.Log, c.ID()); !need || err != nil {
			skipped = true
			return err
		}
		plan, err := o.plan(s.Log, leaf.ID)
		if err != nil {
			return o.planError(err, s.Path())
		}
		// A plan that summarizes nothing is still worth appending when it
		// moves an older compaction's cut: that repairs a context holding a
		// tool result without its call.
		if len(plan.MessagesToSummarize) == 0 && len(plan.TurnPrefixMessages) == 0 && plan.MovedFrom == "" {
			return fmt.Errorf("nothing to summarize in %s: everything since the last compaction is kept (--keep-recent-tokens %d); lower it to compact", s.Path(), o.keep)
		}
		r, err := compaction.Summarize(ctx, plan, summ, o.instruct, o.reserve)
		if err != nil {
			return fmt.Errorf("compact %s: %w; nothing was appended", s.Path(), err)
		}
		res = compactResult{FirstKeptEntryID: plan.FirstKeptEntryID, TokensBefore: plan.TokensBefore,
			Summarized: len(plan.MessagesToSummarize) + len(plan.TurnPrefixMessages), Summarizer: which, MovedFrom: plan.MovedFrom}
		// From here the plan is not used, so its messages (a million on a
		// large session) are not live while Append projects the branch again.
		e, err := compaction.Append(c, r)
		if err != nil && !strings.HasPrefix(err.Error(), s.Path()+": ") { // the store's errors name the file
			return fmt.Errorf("compact %s: %w", s.Path(), err)
		}
		if err != nil {
			return err
		}
		res.ID = e.ID
		return nil
	})
	if err != nil || skipped {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	o.io.Printf("%s\n", res.ID)
	return nil
}

func runCompactUndo(o *compactOptions) error {
	var res undoResult
	err := o.g.edit(o.io, o.arg, func(s *writable) error {
		c, err := cursorOrErr(s.Log, s.Path(), o.cursor)
		if err != nil {
			return err
		}
		u, err := compaction.Undo(c)
		if errors.Is(err, compaction.ErrNoCompaction) {
			return fmt.Errorf("nothing to undo in %s: no compaction on the current branch", s.Path())
		}
		if err != nil {
			return err
		}
		res = undoResult{Compaction: u.Compaction.ID, From: u.From, Left: u.Left}
		if u.To != "" {
			res.To = &u.To
		}
		return nil
	})
	if err != nil {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	o.io.Printf("undid compaction %s: leaf moved from %s to %s\n", res.Compaction, res.From, orNone(idOrEmpty(res.To)))
	if res.Left > 0 {
		o.io.Printf("%s after the compaction stay in the tree; 'arbor branch %s %s' returns to them\n", count(res.Left, "entry"), o.arg, res.From)
	}
	return nil
}
