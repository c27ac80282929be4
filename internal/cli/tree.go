package cli

import (
	"fmt"

	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

type treeOptions struct {
	io     *IO
	g      *Global
	arg    string
	filter string
	cursor string
}

func newCmdTree(ios *IO, g *Global) *cobra.Command {
	o := &treeOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "tree <session>",
		Short: "Show every entry of a session as a branch tree",
		Long: `Show a session as a tree: each entry's id, the branches (├─ └─), the
active path (•), the leaf (›), labels in [brackets], other cursors' leaves
(@name), and the role and text of each entry on one line.

--filter chooses what is shown, as in pi's tree view:
  default   hides labels, model and thinking changes, titles, custom
            entries, arbor's markers, and assistant messages that only call
            tools (unless they failed or are the leaf)
  no-tools  default, and hides tool results too
  user      only user messages
  labeled   only labeled entries
  all       every entry, arbor's markers included
When an entry is hidden its children hang from its nearest shown ancestor.
--cursor marks another cursor's path and leaf instead of the active one.

--json prints every entry, whatever the filter (arbor's markers included), as
nested nodes {"entry":{…},"children":[…],"label":"…","labelTimestamp":"…"},
roots in file order and children by timestamp, as pi's getTree() does.`,
		Example: `  arbor tree examples/refactor.jsonl
  arbor tree examples/refactor.jsonl --filter user
  arbor tree 0195f1c2 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if _, err := treeview.ParseFilter(o.filter); err != nil {
				return usagef("%s", err)
			}
			return runTree(o)
		},
	}
	cmd.Flags().StringVar(&o.filter, "filter", string(treeview.FilterDefault), "what to show: default, no-tools, user, labeled or all")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "mark this cursor's path and leaf (id or name)")
	return cmd
}

func runTree(o *treeOptions) error {
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	filter, _ := treeview.ParseFilter(o.filter)
	leaf, cursor := l.Leaf(), l.Active()
	if o.cursor != "" {
		c, err := cursorOrErr(l, path, o.cursor)
		if err != nil {
			return err
		}
		leaf, cursor = c.Leaf(), c.ID()
	}
	roots := l.Tree()
	w := o.io.Buffered()
	defer w.Flush()
	if o.g.JSON {
		if err := session.WriteTreeJSON(w, roots, true); err != nil {
			return err
		}
		_, err := w.WriteString("\n")
		return err
	}
	width, color := o.io.Width(), o.io.Color()
	v := treeview.New(roots, l, leaf, filter, width)
	v.Each(func(ln treeview.Line) {
		renderTo(w, ln, width, color)
		w.WriteByte('\n')
	})
	var foot treeview.Line
	switch {
	case v.Total == 0:
		foot.Add(treeview.Muted, "no entries yet")
	case leaf == nil:
		foot.Add(treeview.Muted, fmt.Sprintf("cursor %s has no leaf (before the first entry)", cursorLabel(l, cursor)))
	default:
		foot.Add(treeview.Muted, fmt.Sprintf("› leaf %s (cursor %s)", leaf.ID, cursorLabel(l, cursor)))
	}
	if v.Total > 0 {
		foot.Add(treeview.Muted, fmt.Sprintf(" · %d of %d entries shown", v.Shown, v.Total))
		if filter != treeview.FilterAll && v.Shown < v.Total {
			foot.Add(treeview.Muted, ", --filter all shows the rest")
		}
	}
	w.WriteString(render(foot, width, color) + "\n")
	return nil
}

// cursorLabel names a cursor for a person: its name, else its id.
func cursorLabel(l *session.Log, id string) string {
	for _, c := range l.Cursors() {
		if c.ID == id {
			return treeview.CursorName(c)
		}
	}
	return id
}
