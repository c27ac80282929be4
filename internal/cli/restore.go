package cli

import (
	"github.com/arborlog/arbor/catalog"
	"github.com/spf13/cobra"
)

func newCmdRestore(ios *IO, g *Global) *cobra.Command {
	o := &restoreOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "restore <id|name|path>",
		Short: "Bring a removed session back from the trash",
		Long: `Move a session that 'arbor rm' put in the trash back to where it was, with
its sidecar files. It is found by its id, a unique id prefix, its name, or its
original path. A file already at that path is never overwritten.
--list shows what is in the trash.`,
		Example: `  arbor restore 0195f1c2
  arbor restore --list`,
		Args: func(c *cobra.Command, args []string) error {
			if o.list {
				return cobra.NoArgs(c, args)
			}
			return cobra.ExactArgs(1)(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return runRestore(o)
		},
	}
	cmd.Flags().BoolVar(&o.list, "list", false, "list the sessions in the trash")
	return cmd
}

// restoreOptions are the command's arguments and flags.
type restoreOptions struct {
	io   *IO
	g    *Global
	args []string
	list bool
}

func runRestore(o *restoreOptions) error {
	cat := catalog.Open("")
	defer cat.Close()
	if o.list {
		ts, err := cat.Trash()
		if err != nil {
			return err
		}
		if o.g.JSON {
			if ts == nil {
				ts = []catalog.Trashed{}
			}
			return o.io.JSON(ts)
		}
		if len(ts) == 0 {
			o.io.Printf("the trash is empty\n")
		}
		ids := make([]string, len(ts))
		for i, t := range ts {
			ids[i] = t.ID
		}
		short := shortIDs(ids)
		for i, t := range ts {
			o.io.Printf("%s  %s  %s  %s\n", t.RemovedAt, short[i], t.Path, t.Name)
		}
		return nil
	}
	t, err := cat.Restore(o.args[0])
	if err != nil {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(t)
	}
	o.io.Printf("restored %s\n", t.Path)
	return nil
}
