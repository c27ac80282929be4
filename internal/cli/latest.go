package cli

import (
	"github.com/spf13/cobra"
)

func newCmdLatest(ios *IO, g *Global) *cobra.Command {
	o := &latestOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "latest",
		Short: "Print the most recent session of this project",
		Long: `Print the path of the session pi would continue here: the most recently
modified session file whose header cwd is this folder (--session-dir: of that
folder, any project; --all: of any project). Unlike pi, a header longer than
512 bytes does not hide a session. Archived sessions are skipped.
--json prints the session's listing record (see 'arbor ls').`,
		Example: `  arbor latest
  arbor context "$(arbor latest)" --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runLatest(o)
		},
	}
	addAllFlag(cmd, g)
	return cmd
}

// latestOptions are the command's arguments and flags.
type latestOptions struct {
	io *IO
	g  *Global
}

func runLatest(o *latestOptions) error {
	cat, err := o.g.sessions(o.io)
	if err != nil {
		return err
	}
	defer cat.Close()
	in, err := cat.Latest(o.g.scope())
	if err != nil {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(in)
	}
	o.io.Printf("%s\n", in.Path)
	return nil
}
