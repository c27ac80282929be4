package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

type nameOptions struct {
	io    *IO
	g     *Global
	arg   string
	name  string
	set   bool // false: print the current name
	clear bool
}

func newCmdName(ios *IO, g *Global) *cobra.Command {
	o := &nameOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "name <session> [name]",
		Short: "Print or set a session's name",
		Long: `Without a name, print the session's name (the latest session_info entry).
With one, set it, as pi's /name does: a session_info entry is appended, and
the name is trimmed. --clear removes the name. Afterwards the session can be
given by its name wherever a <session> is asked for.

--json prints {"name": "…"} (null when the session has no name).`,
		Example: `  arbor name examples/refactor.jsonl
  arbor name 0195f1c2 "Fix TestParseDuration"
  arbor name 0195f1c2 --clear`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			switch {
			case len(args) == 2 && o.clear:
				return usagef("give a name or --clear, not both")
			case len(args) == 2 && strings.TrimSpace(args[1]) == "":
				return usagef("the name is empty; use --clear to remove the name")
			case len(args) == 2:
				if err := textArg("the name", args[1]); err != nil {
					return err
				}
				o.name, o.set = strings.TrimSpace(args[1]), true
			case o.clear:
				o.set = true
			}
			return runName(o)
		},
	}
	cmd.Flags().BoolVar(&o.clear, "clear", false, "remove the session's name")
	return cmd
}

func runName(o *nameOptions) error {
	name := o.name
	if !o.set {
		l, _, err := o.g.read(o.arg)
		if err != nil {
			return err
		}
		name = l.SessionName()
	} else {
		err := o.g.edit(o.io, o.arg, func(s *writable) error {
			_, err := s.SetSessionName(o.name)
			return err
		})
		if err != nil {
			return err
		}
	}
	if o.g.JSON {
		var v struct {
			Name *string `json:"name"`
		}
		if name != "" {
			v.Name = &name
		}
		return o.io.JSON(v)
	}
	switch {
	case name != "":
		o.io.Printf("%s\n", name)
	case o.set:
		o.io.Warnf("name cleared")
	default:
		o.io.Warnf("the session has no name; set one with 'arbor name %s <name>'", o.arg)
	}
	return nil
}
