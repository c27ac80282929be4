package cli

import (
	"errors"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/shell"
	"github.com/spf13/cobra"
)

func newCmdRm(ios *IO, g *Global) *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:   "rm <session>...",
		Short: "Move sessions to the trash (arbor restore brings them back)",
		Long: `Move sessions, with the files recovery kept beside them (.torn, .bak,
.v<N>.bak, in every numbered form, and half-written .tmp copies), to the trash
in $ARBOR_DIR/trash. Only session files are moved or deleted: a path that is
not a session (or a symlink) is refused. 'arbor restore' puts
them back where they were. A session open for writing in another process is
not touched: the error names that process.

--purge deletes the files for good instead, and also deletes a session that is
already in the trash; nothing else in arbor deletes a session.`,
		Example: `  arbor rm 0195f1c2
  arbor restore 0195f1c2
  arbor rm --purge ~/.arbor/sessions/--tmp--/2026-01-01T00-00-00-000Z_0195f1c2.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cat := g.catalog(ios)
			defer cat.Close()
			type removed struct {
				ID     string `json:"id"`
				Path   string `json:"path"`
				Purged bool   `json:"purged"`
			}
			var out []removed
			for _, a := range args {
				path, err := cat.Resolve(a, g.scope())
				if purge && errors.Is(err, catalog.ErrNotFound) {
					// Not a live session: maybe one in the trash.
					t, terr := cat.PurgeTrashed(a)
					if terr == nil {
						out = append(out, removed{ID: t.ID, Path: t.Path, Purged: true})
						if !g.JSON {
							ios.Printf("deleted %s from the trash\n", t.Path)
						}
						continue
					}
				}
				if err != nil {
					return err
				}
				if purge {
					if err := cat.Purge(path); err != nil {
						return err
					}
					out = append(out, removed{Path: path, Purged: true})
					if !g.JSON {
						ios.Printf("deleted %s\n", path)
					}
					continue
				}
				t, err := cat.Remove(path)
				if err != nil {
					return err
				}
				out = append(out, removed{ID: t.ID, Path: t.Path})
				if !g.JSON {
					ios.Printf("moved %s to the trash; to bring it back: %s\n", t.Path, restoreHint(t))
				}
			}
			if g.JSON {
				return ios.JSON(out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "delete the session files for good (no trash)")
	return cmd
}

// restoreHint is the command that brings t back, safe to paste: the id (the
// path when the session had none) quoted for the shell, after "--" when it
// would read as a flag.
func restoreHint(t catalog.Trashed) string {
	arg := t.ID
	if arg == "" {
		arg = t.Path
	}
	return shell.Args("arbor restore", arg)
}
