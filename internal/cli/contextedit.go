package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

type editOptions struct {
	io      *IO
	g       *Global
	arg     string
	target  string
	omit    bool
	replace string
	restore bool
	cursor  string
}

// editResult is what `arbor edit --json` prints.
type editResult struct {
	ID       string `json:"id"` // the context_edit entry appended
	TargetID string `json:"targetId"`
	Action   string `json:"action"` // omit, replace or restore
}

func newCmdEdit(ios *IO, g *Global) *cobra.Command {
	o := &editOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "edit <session> <entry-id> (--omit | --replace-with FILE | --restore)",
		Short: "Hide or replace an earlier message in the context (a context edit)",
		Long: `Change what the model sees of an earlier message on the branch without
changing the log, as pi 1.6.0 does: a context_edit entry is appended, and the
context from then on leaves the message out (--omit) or shows FILE's text in
its place (--replace-with FILE, - for stdin). --restore appends an edit that
brings back the message's own content. The latest edit of a message wins;
nothing is deleted, and 'arbor tree' shows every edit.

The entry must be a user, assistant or tool result message or a custom
message on the branch of the active cursor (--cursor for another). pi 1.6.0
reads the edits arbor writes; pi 0.73.1 ignores them.`,
		Example: `  arbor edit my-session 3fa2b9c1 --omit
  arbor edit my-session 3fa2b9c1 --replace-with shorter.txt
  arbor edit my-session 3fa2b9c1 --restore`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg, o.target = args[0], args[1]
			n := 0
			for _, set := range []bool{o.omit, c.Flags().Changed("replace-with"), o.restore} {
				if set {
					n++
				}
			}
			if n != 1 {
				return usagef("give exactly one of --omit, --replace-with FILE and --restore")
			}
			if c.Flags().Changed("replace-with") && o.replace == "" {
				return usagef("--replace-with needs a file (- for stdin)")
			}
			return runEdit(o)
		},
	}
	cmd.Flags().BoolVar(&o.omit, "omit", false, "leave the message out of the context")
	cmd.Flags().StringVar(&o.replace, "replace-with", "", "show this file's text instead of the message (- for stdin)")
	cmd.Flags().BoolVar(&o.restore, "restore", false, "show the message's own content again")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "edit on this cursor's branch (id or name); default the active one")
	return cmd
}

func runEdit(o *editOptions) error {
	var replacement *session.Content
	if o.replace != "" {
		text, err := readReplacement(o.io, o.replace)
		if err != nil {
			return err
		}
		c := session.TextContent(text)
		replacement = &c
	}
	res := editResult{TargetID: o.target}
	err := o.g.edit(o.io, o.arg, func(s *writable) error {
		if _, err := targetOrErr(s.Log, s.Path(), o.target); err != nil {
			return err
		}
		c, err := cursorOrErr(s.Log, s.Path(), o.cursor)
		if err != nil {
			return err
		}
		var e *session.Entry
		switch {
		case o.restore:
			res.Action = "restore"
			e, err = c.RestoreContext(o.target)
		case o.omit:
			res.Action = "omit"
			e, err = c.AppendContextEdit(o.target, nil)
		default:
			res.Action = "replace"
			e, err = c.AppendContextEdit(o.target, replacement)
		}
		if errors.Is(err, session.ErrNotEditable) {
			return fmt.Errorf("cannot edit %s in %s: %w; only user, assistant and tool result messages and custom messages on the branch can be edited ('arbor tree %s')", o.target, s.Path(), err, s.Path())
		}
		if err != nil {
			return err
		}
		res.ID = e.ID
		return nil
	})
	if err != nil {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	o.io.Printf("%s: context edit %s (%s %s)\n", o.arg, res.ID, res.Action, o.target)
	return nil
}

// readReplacement reads the replacement text: a UTF-8 file, or stdin for "-".
func readReplacement(ios *IO, name string) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(ios.In, 64<<20))
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("read the replacement: %w", err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("the replacement %s is not UTF-8 text", name)
	}
	return string(b), nil
}
