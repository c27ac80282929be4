package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/spf13/cobra"
)

func newCmdSearch(ios *IO, g *Global) *cobra.Command {
	var opt catalog.SearchOptions
	cmd := &cobra.Command{
		Use:   "search <query>",
		Short: "Search the text of every session",
		Long: `Search what was said in the current project's sessions (--all: every project;
--session-dir: one folder): user messages, assistant text and thinking, the
arguments of tool calls, and tool results. Each hit is one entry, best first.

  words          every word must occur in the entry (any order, any case);
                 the last word also matches longer words: "greet" finds
                 greeting, as when typing in the picker
  greet$         the last word as a whole word only
  "a phrase"     these whole words in this order
  migrat*        any word that starts with "migrat"
  re:<regex>     a regular expression, case-insensitive (reads the files)

Words match by their letters and digits, so "main.go" finds main.go and
main/go. Archived sessions are left out unless --archived. The first search
indexes what is new; later ones take milliseconds. With a --limit, the hits
are the best of the last 1,000 matching entries.
--json prints [{"path","sessionId","entryId","role","timestamp","snippet"}].`,
		Example: `  arbor search flock deadlock
  arbor search '"torn write"' --all
  arbor search 're:panic: .*nil' --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			q, err := catalog.ParseQuery(strings.Join(args, " "))
			if errors.Is(err, catalog.ErrEmptyQuery) {
				return usagef("%v", err)
			}
			if err != nil {
				return usageError{err}
			}
			cat, err := g.sessions(ios)
			if err != nil {
				return err
			}
			defer cat.Close()
			hits, err := cat.Search(g.scope(), q, opt)
			if err != nil {
				return err
			}
			if g.JSON {
				if hits == nil {
					hits = []catalog.Hit{}
				}
				return printJSON(ios, hits)
			}
			printHits(ios, hits, g.All || g.SessionDir != "")
			return nil
		},
	}
	cmd.Flags().IntVar(&opt.Limit, "limit", 50, "show at most this many hits (0: all)")
	cmd.Flags().BoolVar(&opt.Archived, "archived", false, "include archived sessions")
	addAllFlag(cmd, g)
	return cmd
}

func printHits(ios *IO, hits []catalog.Hit, wide bool) {
	w := ios.Buffered()
	defer w.Flush()
	if len(hits) == 0 {
		fmt.Fprintln(w, "no matches")
		return
	}
	color := ios.Color()
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.SessionID
	}
	short := shortIDs(ids)
	for i, h := range hits {
		loc := short[i]
		if wide {
			loc = h.Path
		}
		fprintf(w, "%s %s %s %s\n", loc, h.EntryID, h.Role, h.Timestamp)
		fmt.Fprintf(w, "    %s\n", highlight(h.Snippet, h.Marks, color))
	}
}

// highlight shows the matched parts of a snippet in bold (on a terminal) or
// between » and « otherwise. The snippet's own text is made printable.
func highlight(s string, marks [][2]int, color bool) string {
	on, off := "»", "«"
	if color {
		on, off = "\033[1;33m", "\033[0m"
	}
	var b strings.Builder
	last := 0
	for _, m := range marks {
		if m[0] < last || m[1] > len(s) {
			continue
		}
		b.WriteString(termtext.Line(s[last:m[0]]))
		b.WriteString(on + termtext.Line(s[m[0]:m[1]]) + off)
		last = m[1]
	}
	b.WriteString(termtext.Line(s[last:]))
	return b.String()
}
