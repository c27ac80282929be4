package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

type labelOptions struct {
	io     *IO
	g      *Global
	arg    string
	target string
	label  string // "" clears
}

// labelResult is what `arbor label --json` prints.
type labelResult struct {
	ID       string  `json:"id"` // the label entry appended
	TargetID string  `json:"targetId"`
	Label    *string `json:"label"` // null when cleared
}

func newCmdLabel(ios *IO, g *Global) *cobra.Command {
	o := &labelOptions{io: ios, g: g}
	var clear bool
	cmd := &cobra.Command{
		Use:   "label <session> <entry-id> [label]",
		Short: "Label an entry, or clear its label",
		Long: `Give an entry a label, as pi's tree view does (Shift+L): 'arbor tree' shows it
in [brackets] and 'arbor tree --filter labeled' lists labeled entries. The
label is recorded as a label entry, so the last one for an entry wins.
Without a label (or with --clear) the entry's label is cleared.`,
		Example: `  arbor label examples/refactor.jsonl e1b8045d "asks which fix"
  arbor label my-session e1b8045d --clear`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg, o.target = args[0], args[1]
			if len(args) == 3 {
				if clear {
					return usagef("give a label or --clear, not both")
				}
				if err := textArg("the label", args[2]); err != nil {
					return err
				}
				o.label = args[2]
				if strings.TrimSpace(o.label) == "" {
					return usagef("a label of only white space would look like none: give some text, or --clear to remove the label")
				}
			}
			return runLabel(o)
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "clear the entry's label")
	return cmd
}

func runLabel(o *labelOptions) error {
	res := labelResult{TargetID: o.target}
	err := o.g.edit(o.io, o.arg, func(s *writable) error {
		t, err := targetOrErr(s.Log, s.Path(), o.target)
		if err != nil {
			return err
		}
		o.target, res.TargetID = t.ID, t.ID
		e, err := s.SetLabel(o.target, o.label)
		if err != nil {
			return err
		}
		res.ID = e.ID
		return nil
	})
	if err != nil {
		return err
	}
	if o.label != "" {
		res.Label = &o.label
	}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	if o.label == "" {
		o.io.Printf("cleared the label of %s\n", o.target)
	} else {
		o.io.Printf("labeled %s %q\n", o.target, o.label)
	}
	return nil
}
