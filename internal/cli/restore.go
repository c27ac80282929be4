package cli

import (
	"github.com/arborlog/arbor/catalog"
	"github.com/spf13/cobra"
)

func newCmdRestore(ios *IO, g *Global) *cobra.Command {
	var list bool
	cmd := &cobra.Command{
		Use:   "restore <id|name|path>",
		Short: "Bring a removed session back from the trash",
		Long: `Move a session that 'arbor rm' put in the trash back to where it was, with
its sidecar files. It is found by its id, a unique id prefix, its name, or its
original path. A file already at that path is never overwritten, and the
folder it was in must still exist (restore makes no folder).
--list shows what is in the trash.`,
		Example: `  arbor restore 0195f1c2
  arbor restore --list`,
		Args: func(c *cobra.Command, args []string) error {
			if list {
				return cobra.NoArgs(c, args)
			}
			return cobra.ExactArgs(1)(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			cat := catalog.Open("")
			defer cat.Close()
			if list {
				ts, err := cat.Trash()
				if err != nil {
					return err
				}
				if g.JSON {
					if ts == nil {
						ts = []catalog.Trashed{}
					}
					return ios.JSON(ts)
				}
				if len(ts) == 0 {
					ios.Printf("the trash is empty\n")
				}
				ids := make([]string, len(ts))
				for i, t := range ts {
					ids[i] = t.ID
				}
				short := shortIDs(ids)
				for i, t := range ts {
					ios.Printf("%s  %s  %s  %s\n", t.RemovedAt, short[i], t.Path, t.Name)
				}
				return nil
			}
			t, err := cat.Restore(args[0])
			if err != nil {
				return err
			}
			if g.JSON {
				return ios.JSON(t)
			}
			ios.Printf("restored %s\n", t.Path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the sessions in the trash")
	return cmd
}
