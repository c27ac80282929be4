package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCmdArchive(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "archive <session>...",
		Short: "Hide sessions from 'arbor ls' without moving them",
		Long: `Hide sessions from 'arbor ls' and 'arbor latest'. The files stay where they
are (pi still sees them) and every command still finds them by path, id or
name; 'arbor ls --archived' shows them and 'arbor unarchive' brings them back.
The list is kept in $ARBOR_DIR/archive.json.`,
		Example: `  arbor archive 0195f1c2 "old spike"
  arbor ls --archived`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cat, err := g.sessions(ios)
			if err != nil {
				return err
			}
			defer cat.Close()
			out := []archiveResult{}
			for _, a := range args {
				path, err := cat.Resolve(a, g.scope())
				if err != nil {
					return err
				}
				if err := cat.Archive(path); err != nil {
					return err
				}
				out = append(out, archiveResult{Path: path, Archived: true})
				if !g.JSON {
					ios.Printf("archived %s\n", path)
				}
			}
			if g.JSON {
				return ios.JSON(out)
			}
			return nil
		},
	}
}

// archiveResult is one session of what `arbor archive|unarchive --json` prints.
type archiveResult struct {
	Path     string `json:"path"`
	Archived bool   `json:"archived"`
}

func newCmdUnarchive(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:     "unarchive <session>...",
		Short:   "Show archived sessions in 'arbor ls' again",
		Long:    `Undo 'arbor archive': the sessions are listed again.`,
		Example: `  arbor unarchive 0195f1c2`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cat, err := g.sessions(ios)
			if err != nil {
				return err
			}
			defer cat.Close()
			out := []archiveResult{}
			for _, a := range args {
				path, err := cat.Resolve(a, g.scope())
				if err != nil {
					return err
				}
				ok, err := cat.Unarchive(path)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%s is not archived", path)
				}
				out = append(out, archiveResult{Path: path})
				if !g.JSON {
					ios.Printf("unarchived %s\n", path)
				}
			}
			if g.JSON {
				return ios.JSON(out)
			}
			return nil
		},
	}
}
