package cli

import (
	"github.com/spf13/cobra"
)

type branchOptions struct {
	io     *IO
	g      *Global
	arg    string
	target string // entry id; "" with root
	root   bool   // move to before the first entry
	cursor string // id or name; "" for the active cursor

	summary branchSummaryFlags // --summarize and its flags (branchsummary.go)
}

// branchResult is what `arbor branch --json` prints.
type branchResult struct {
	Cursor string  `json:"cursor"`
	Leaf   *string `json:"leaf"`
	From   *string `json:"from"`
	Moved  bool    `json:"moved"`
	// Summary is the branch_summary appended with --summarize (then the leaf).
	Summary *string `json:"summary,omitempty"`
}

func newCmdBranch(ios *IO, g *Global) *cobra.Command {
	o := &branchOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "branch <session> (<entry-id> | --root)",
		Short: "Move a cursor's leaf to another entry, so the next turn branches there",
		Long: `Move the active cursor's leaf to an entry: its context is then the path from
the root to that entry, and the next message appended starts a new branch
there. Nothing is deleted; the old branch stays in the tree.

The move is recorded in the file (an arbor.leaf marker, SPEC §6.2), so it
survives a restart; pi, which ignores markers, continues from the last line,
which is the same entry. --root moves to before the first entry (the next
message starts a new root). --cursor moves another cursor, which then becomes
the active one.`,
		Example: `  arbor branch examples/refactor.jsonl e1b8045d
  arbor branch my-session --root
  arbor branch my-session e1b8045d --cursor review --json
  arbor branch my-session e1b8045d --summarize`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			switch {
			case len(args) == 2 && o.root:
				return usagef("give an entry id or --root, not both")
			case len(args) == 2:
				o.target = args[1]
			case !o.root:
				return usagef("which entry? give its id (see 'arbor tree %s'), or --root", o.arg)
			}
			return runBranch(o)
		},
	}
	cmd.Flags().BoolVar(&o.root, "root", false, "move to before the first entry")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "move this cursor (id or name) instead of the active one")
	o.summary.add(cmd)
	return cmd
}

func runBranch(o *branchOptions) error {
	var res branchResult
	err := o.g.edit(o.io, o.arg, func(s *writable) error {
		c, err := cursorOrErr(s.Log, s.Path(), o.cursor)
		if err != nil {
			return err
		}
		if o.target != "" {
			e, err := targetOrErr(s.Log, s.Path(), o.target)
			if err != nil {
				return err
			}
			o.target = e.ID
		}
		res.Cursor = cursorLabel(s.Log, c.ID())
		if old := c.Leaf(); old != nil {
			res.From = &old.ID
		}
		if idOrEmpty(res.From) == o.target {
			return nil // already there: record nothing
		}
		res.Moved = true
		if o.summary.summarize { // branchsummary.go
			id, err := o.summary.move(s.Path(), c, o.target)
			if id != "" {
				res.Summary = &id
			}
			return err
		}
		if o.root {
			return c.ResetLeaf()
		}
		return c.BranchTo(o.target)
	})
	if err != nil {
		return err
	}
	if o.target != "" {
		res.Leaf = &o.target
	}
	if res.Summary != nil {
		res.Leaf = res.Summary
	}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	switch {
	case !res.Moved && o.root:
		o.io.Printf("cursor %s is before the first entry already\n", res.Cursor)
	case !res.Moved:
		o.io.Printf("cursor %s is at %s already\n", res.Cursor, o.target)
	case o.root:
		o.io.Printf("cursor %s moved from %s to before the first entry\n", res.Cursor, orNone(idOrEmpty(res.From)))
	default:
		o.io.Printf("cursor %s moved from %s to %s\n", res.Cursor, orNone(idOrEmpty(res.From)), o.target)
	}
	if res.Summary != nil {
		o.io.Printf("the branch left behind is summarized in branch_summary %s, now the leaf ('arbor show %s %s')\n", *res.Summary, o.arg, *res.Summary)
	}
	return nil
}

func idOrEmpty(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
