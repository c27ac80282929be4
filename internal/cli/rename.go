package cli

import (
	"github.com/spf13/cobra"
)

func newCmdRename(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "rename <session> <name>",
		Short: "Give a session a name (pi shows it too)",
		Long: `Give a session a name by appending a session_info entry, as pi's /name does,
so pi shows the same name. Line breaks become spaces and the name is trimmed, as
pi 1.6.0 stores names; an empty name clears it. Names
work wherever a <session> is expected.`,
		Example: `  arbor rename 0195f1c2 "flock deadlock"
  arbor context "flock deadlock" --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := textArg("the name", args[1]); err != nil {
				return err
			}
			s, err := g.open(args[0])
			if err != nil {
				return err
			}
			e, err := s.SetSessionName(args[1])
			if err != nil {
				s.Close()
				return err
			}
			if err := s.Close(); err != nil {
				return err
			}
			if g.JSON {
				return ios.JSON(map[string]string{"path": s.Path(), "id": s.Header().ID, "name": s.SessionName(), "entryId": e.ID})
			}
			if s.SessionName() == "" {
				ios.Printf("cleared the name of %s\n", s.Path())
				return nil
			}
			ios.Printf("named %s %q\n", s.Path(), s.SessionName())
			return nil
		},
	}
}
