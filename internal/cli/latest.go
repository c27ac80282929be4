package cli

import (
	"github.com/spf13/cobra"
)

func newCmdLatest(ios *IO, g *Global) *cobra.Command {
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
			cat, err := g.sessions(ios)
			if err != nil {
				return err
			}
			defer cat.Close()
			in, err := cat.Latest(g.scope())
			if err != nil {
				return err
			}
			if g.JSON {
				return ios.JSON(in)
			}
			ios.Printf("%s\n", in.Path)
			return nil
		},
	}
	addAllFlag(cmd, g)
	return cmd
}
