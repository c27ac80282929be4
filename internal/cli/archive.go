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
			return runArchive(archiveOptions{io: ios, g: g, archive: true}, args)
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
			return runArchive(archiveOptions{io: ios, g: g}, args)
		},
	}
}

// archiveOptions are arbor archive's (archive true) and arbor unarchive's.
type archiveOptions struct {
	io      *IO
	g       *Global
	archive bool
}

func runArchive(o archiveOptions, args []string) error {
	cat, err := o.g.sessions(o.io)
	if err != nil {
		return err
	}
	defer cat.Close()
	out := []archiveResult{}
	for _, a := range args {
		path, err := cat.Resolve(a, o.g.scope())
		if err != nil {
			return err
		}
		verb := "archived"
		if o.archive {
			err = cat.Archive(path)
		} else {
			verb = "unarchived"
			var ok bool
			if ok, err = cat.Unarchive(path); err == nil && !ok {
				err = fmt.Errorf("%s is not archived", path)
			}
		}
		if err != nil {
			return err
		}
		out = append(out, archiveResult{Path: path, Archived: o.archive})
		if !o.g.JSON {
			o.io.Printf("%s %s\n", verb, path)
		}
	}
	if o.g.JSON {
		return o.io.JSON(out)
	}
	return nil
}
