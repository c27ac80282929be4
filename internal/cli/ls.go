package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/spf13/cobra"
)

func newCmdLs(ios *IO, g *Global) *cobra.Command {
	var opt catalog.ListOptions
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List sessions, newest first",
		Long: `List the current project's sessions (those whose header cwd is this folder),
newest first: age, message count, and the session's name or first message.
--all lists every project in $ARBOR_DIR/sessions and pi's sessions folder;
--session-dir lists one folder (and its subfolders) whatever the project.

Sessions without a message are hidden unless --empty; archived ones unless
--archived. --json prints pi's listing records plus entryCount and sizeBytes,
newest first, dates as ISO-8601 UTC:
{"path","id","cwd","name","parentSessionPath","created","modified",
 "messageCount","firstMessage","entryCount","sizeBytes"}, plus "archived":true and
"movedFrom":"<old folder>" where they apply.

A session of this project made in a folder that no longer exists (the same
git root commit or origin remote, recorded in its header) is listed too,
marked "[moved from <old folder>]"; 'arbor mv <old> <new>' re-homes it.
pi's own list includes sessions without messages: 'arbor ls --json --empty
--session-dir DIR' prints what pi's list of DIR prints, plus those two fields.

The first listing of a folder reads every file (in parallel); later ones read
only what changed, through the index in $ARBOR_DIR/index.db.`,
		Example: `  arbor ls
  arbor ls --all
  arbor ls --session-dir ~/.pi/agent/sessions/--home-me-project-- --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cat, err := g.sessions(ios)
			if err != nil {
				return err
			}
			defer cat.Close()
			infos, err := cat.List(g.scope(), opt)
			if err != nil {
				return err
			}
			if g.JSON {
				b := make([]byte, 0, 512*len(infos)+3)
				b = append(b, '[')
				for i := range infos {
					if i > 0 {
						b = append(b, ',')
					}
					b = infos[i].AppendJSON(b)
				}
				_, err := ios.Out.Write(append(b, ']', '\n'))
				return err
			}
			printList(ios, infos, g.All || g.SessionDir != "", ios.Now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&opt.Empty, "empty", false, "include sessions without any message")
	cmd.Flags().BoolVar(&opt.Archived, "archived", false, "include archived sessions")
	addAllFlag(cmd, g)
	return cmd
}

// printList writes one line per session, cut to the terminal's width.
func printList(ios *IO, infos []catalog.Info, project bool, now time.Time) {
	w := ios.Buffered()
	defer w.Flush()
	if len(infos) == 0 {
		fmt.Fprintln(w, "no sessions (arbor ls --all shows every project; --empty includes sessions without messages)")
		return
	}
	home, _ := os.UserHomeDir()
	projW := 0
	if project {
		for _, in := range infos {
			projW = max(projW, min(28, termtext.Width(termtext.Line(shortPath(in.Cwd, home)))))
		}
	}
	ids := make([]string, len(infos))
	for i, in := range infos {
		ids[i] = in.ID
	}
	short := shortIDs(ids)
	idW := 8
	for _, s := range short {
		idW = max(idW, termtext.Width(termtext.Line(s)))
	}
	for i, in := range infos {
		var b strings.Builder
		fprintf(&b, "%-*s %10s %5d  ", idW, short[i], catalog.Age(in.Modified.Time(), now), in.MessageCount)
		if project {
			b.WriteString(pad(cut(termtext.Line(shortPath(in.Cwd, home)), projW), projW))
			b.WriteString("  ")
		}
		title := in.Name
		if title == "" {
			title = in.FirstMessage
		}
		title = termtext.Line(strings.Join(strings.Fields(title), " "))
		if in.Archived {
			title = "[archived] " + title
		}
		if in.MovedFrom != "" {
			title = "[moved from " + termtext.Line(shortPath(in.MovedFrom, home)) + "] " + title
		}
		rest := ios.Width() - termtext.Width(b.String())
		b.WriteString(cut(title, max(rest, 10)))
		fmt.Fprintln(w, b.String())
	}
}

// shortIDs returns, for each id, its shortest prefix of 8 or more characters
// that no other id in ids shares: what can be typed back to name that session.
// (A UUIDv7's first 8 digits are a timestamp, so sessions made in the same
// minute share them.)
func shortIDs(ids []string) []string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	need := make(map[string]int, len(ids))
	for i, id := range sorted {
		n := 8
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(sorted) && sorted[j] != id {
				n = max(n, commonPrefix(id, sorted[j])+1)
			}
		}
		n = min(n, len(id))
		for n < len(id) && !utf8.RuneStart(id[n]) {
			n++ // never cut a character in two
		}
		need[id] = n
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:need[id]]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func shortPath(p, home string) string {
	if home != "" && (p == home || strings.HasPrefix(p, home+string(filepath.Separator))) {
		return "~" + p[len(home):]
	}
	return p
}

// cut shortens s to n columns, ending it with … when it was longer.
func cut(s string, n int) string {
	if termtext.Width(s) <= n {
		return s
	}
	return termtext.Truncate(s, n-1) + "…"
}

func pad(s string, n int) string {
	if d := n - termtext.Width(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return s
}
