package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/spf13/cobra"
)

func newCmdMv(ios *IO, g *Global) *cobra.Command {
	var dryRun bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "mv <old-folder> <new-folder>",
		Short: "Re-home a moved project's sessions to its new folder",
		Long: `After a project folder moved (mv, a rename), move its sessions with it:
every session whose header cwd is <old-folder>, in arbor's folder
($ARBOR_DIR/sessions/--<path>--) and pi's (~/.pi/agent/sessions/--<path>--),
is copied to <new-folder>'s with its cwd updated (written whole and fsynced
before it appears), then the old file, with its .torn/.bak sidecars, goes to
the trash ('arbor restore --list' lists it, 'arbor restore' brings it back). Nothing is
deleted and no file at the destination is ever replaced.

Each session is moved under its writer lock. One open for writing elsewhere is
left untouched and reported (--wait waits for it to be let go); one that
changes while it is copied (pi takes no lock) is left too, and the copy taken
back. Running the command again moves what was left and finds nothing else to
do: it is idempotent. A copy at the destination that holds exactly what the
move would write (a run cut short) counts as done; any other file there is
reported as a conflict and both are left as they are.

Sessions in subfolders of <old-folder> are not moved. Without this command,
'arbor ls', -c and -r in the new folder still find the old sessions (same git
root commit or remote, the old folder gone), marked "moved from".`,
		Example: `  mv ~/src/app ~/work/app && arbor mv ~/src/app ~/work/app
  arbor mv --dry-run ~/src/app ~/work/app`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			from, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			to, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			cat := g.catalog(ios)
			defer cat.Close()
			rs, err := cat.Rehome(from, to, dryRun, wait)
			left := 0
			for _, r := range rs {
				if r.Status != catalog.RehomeMoved && r.Status != catalog.RehomeWouldMove {
					left++
				}
			}
			if g.JSON {
				if rs == nil {
					rs = []catalog.Rehomed{}
				}
				if jerr := ios.JSON(rs); jerr != nil {
					return jerr
				}
			} else {
				for _, r := range rs {
					line := fmt.Sprintf("%s %s -> %s", r.Status, r.From, r.To)
					if r.Reason != "" {
						line += ": " + r.Reason
					}
					ios.Printf("%s\n", termtext.Line(line))
				}
				if len(rs) == 0 && err == nil {
					ios.Printf("no session of %s to move (already moved, or none)\n", termtext.Line(from))
				}
			}
			if err != nil {
				return err
			}
			if left > 0 {
				return fmt.Errorf("%d of %d sessions not moved (see above); run 'arbor mv' again once they are closed, or with --wait 30s", left, len(rs))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be moved; change nothing")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for a session open for writing to be let go")
	return cmd
}
