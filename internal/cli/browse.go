package cli

import (
	"errors"
	"os"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/internal/tui"
	"github.com/spf13/cobra"
)

func newCmdBrowse(ios *IO, g *Global) *cobra.Command {
	var filter, summarizer string
	cmd := &cobra.Command{
		Use:   "browse [session]",
		Short: "Find, read and manage sessions in the terminal (no model needed)",
		Long: `Open the session browser: a picker over the sessions of this folder (Tab:
every project), searched as you type (words, "a phrase", re:pattern, over titles,
names and the full text), sorted threaded, by date or by relevance, with a
preview of the selected session. Sessions can be renamed, moved to the trash
(asked first) and restored. Enter opens the session's tree: filters, search,
folding and labels, and Enter in the tree moves the leaf there, with no summary,
a summary of the branch left, or one with your instructions (written by the
mechanical summarizer unless --summarizer model).

Given a session, the browser opens its tree at once. Press ? for every key.
The browser needs a terminal; 'arbor ls', 'arbor search' and 'arbor tree' print
the same things for scripts.`,
		Example: `  arbor browse
  arbor browse --all
  arbor browse examples/refactor.jsonl --filter user`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, err := treeview.ParseFilter(filter)
			if err != nil {
				return usagef("%s", err)
			}
			if g.JSON {
				return usagef("browse is interactive and has no --json; use 'arbor ls --json' or 'arbor tree --json'")
			}
			if !ios.IsTTY() {
				return errors.New("browse needs a terminal; 'arbor ls', 'arbor search' and 'arbor tree' print the same for scripts")
			}
			sf := summarizerFlags{name: summarizer}
			summ, _, err := sf.summarizer()
			if err != nil {
				return err
			}
			var session string
			if len(args) == 1 {
				if session, err = g.resolve(args[0]); err != nil {
					return err
				}
			}
			cat := catalog.Open("")
			defer cat.Close()
			return tui.Browse(tui.BrowseOptions{Catalog: cat, Scope: g.scope(), Session: session, Filter: f,
				Summarizer: summ, Input: ios.In, Output: ios.Out, Env: os.Environ(),
				Opening: func(path string) { boundHeap(fileSize(path)) }})
		},
	}
	cmd.Flags().BoolVar(&g.All, "all", false, "open on every project, not only the current one (Tab switches)")
	cmd.Flags().StringVar(&filter, "filter", string(treeview.FilterDefault), "the tree's first filter: default, no-tools, user, labeled or all")
	cmd.Flags().StringVar(&summarizer, "summarizer", "mechanical", "who writes branch summaries: mechanical (offline) or model (as 'arbor branch --summarize')")
	return cmd
}
