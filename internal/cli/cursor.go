package cli

import (
	"fmt"
	"strings"

	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

func newCmdCursor(ios *IO, g *Global) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cursor",
		Short: "List, create, switch and name a session's cursors",
		Long: `A cursor is a named position in a session's one shared log (SPEC §6.2):
several lines of work can go on at once, each appending on its own branch.
Every session has the cursor main; the active cursor is the one that wrote
the last line, and it is the one other commands use by default.`,
		Example: `  arbor cursor ls examples/refactor.jsonl
  arbor cursor new my-session review
  arbor cursor switch my-session review
  arbor cursor rename my-session 3c9e01aa reviewer`,
	}
	cmd.AddCommand(newCmdCursorLs(ios, g), newCmdCursorNew(ios, g), newCmdCursorSwitch(ios, g), newCmdCursorRename(ios, g))
	return cmd
}

func newCmdCursorLs(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "ls <session>",
		Short: "List a session's cursors",
		Long: `List a session's cursors: the active one marked *, then id, name (if it has
one) and leaf.
--json prints [{"id","name","leaf","active"}] (leaf "" before the first entry).`,
		Example: `  arbor cursor ls my-session
  arbor cursor ls my-session --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			l, _, err := g.read(args[0])
			if err != nil {
				return err
			}
			cs := l.Cursors()
			if g.JSON {
				return ios.JSON(cs)
			}
			for _, c := range cs {
				ios.Printf("%s\n", cursorRow(c))
			}
			return nil
		},
	}
}

func newCmdCursorNew(ios *IO, g *Global) *cobra.Command {
	var switchTo bool
	cmd := &cobra.Command{
		Use:   "new <session> [name]",
		Short: "Create a cursor at the active cursor's leaf",
		Long: `Create a cursor at the active cursor's leaf and print its id. The active
cursor stays as it was unless --switch is given. Names are unique.`,
		Example: `  arbor cursor new my-session review
  arbor cursor new my-session review --switch --json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			name := ""
			if len(args) == 2 {
				if err := textArg("the cursor name", args[1]); err != nil {
					return err
				}
				name = strings.TrimSpace(args[1])
				if name == "" {
					return usagef("the cursor name is empty; leave it out for an unnamed cursor")
				}
			}
			return editCursor(ios, g, args[0], func(s *writable) (string, error) {
				c, err := s.NewCursor(name)
				if err != nil {
					return "", err
				}
				id := c.ID()
				if switchTo {
					if err := s.Switch(id); err != nil {
						return "", err
					}
				}
				return id, nil
			}, func(info session.CursorInfo) string { return sprintf("%s", info.ID) })
		},
	}
	cmd.Flags().BoolVar(&switchTo, "switch", false, "make the new cursor the active one")
	return cmd
}

func newCmdCursorSwitch(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "switch <session> <cursor>",
		Short: "Make another cursor the active one",
		Long: `Make a cursor (by id or name) the active one: commands that act on the
session's leaf use it from now on, and a reopen restores it.`,
		Example: `  arbor cursor switch my-session review
  arbor cursor switch my-session main`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return editCursor(ios, g, args[0], func(s *writable) (string, error) {
				cur, err := cursorOrErr(s.Log, s.Path(), args[1])
				if err != nil {
					return "", err
				}
				return cur.ID(), s.Switch(cur.ID())
			}, func(info session.CursorInfo) string {
				return sprintf("cursor %s is active, at %s", treeview.CursorName(info), orNone(info.Leaf))
			})
		},
	}
}

func newCmdCursorRename(ios *IO, g *Global) *cobra.Command {
	var clear bool
	cmd := &cobra.Command{
		Use:   "rename <session> <cursor> [name]",
		Short: "Name or rename a cursor",
		Long: `Give a cursor (by id or current name) a new name; --clear removes its name.
The name is recorded as an arbor.cursor marker under the cursor's leaf.`,
		Example: `  arbor cursor rename my-session 3c9e01aa reviewer
  arbor cursor rename my-session reviewer --clear`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(c *cobra.Command, args []string) error {
			name := ""
			switch {
			case len(args) == 3 && clear:
				return usagef("give a name or --clear, not both")
			case len(args) == 3:
				if err := textArg("the cursor name", args[2]); err != nil {
					return err
				}
				name = strings.TrimSpace(args[2])
				if name == "" {
					return usagef("the cursor name is empty; use --clear to remove it")
				}
			case !clear:
				return usagef("give the new name, or --clear")
			}
			return editCursor(ios, g, args[0], func(s *writable) (string, error) {
				cur, err := cursorOrErr(s.Log, s.Path(), args[1])
				if err != nil {
					return "", err
				}
				if name != "" {
					if other := s.Cursor(name); hasCursor(s.Log, other.ID()) && other.ID() != cur.ID() {
						return "", fmt.Errorf("%s has a cursor named %q already (%s); pick another name", s.Path(), name, other.ID())
					}
				}
				return cur.ID(), cur.Rename(name)
			}, func(info session.CursorInfo) string {
				return sprintf("cursor %s is named %s", info.ID, orNone(info.Name))
			})
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the cursor's name")
	return cmd
}

// cursorRow is one cursor for a person: * when active, id, name, leaf.
func cursorRow(c session.CursorInfo) string {
	mark := " "
	if c.Active {
		mark = "*"
	}
	return sprintf("%s %-8s  %-16s  leaf %s", mark, c.ID, c.Name, orNone(c.Leaf))
}

// editCursor runs f on the session arg names; f returns the id of the cursor
// it acted on, which is then printed: its roster record with --json, else the
// line line makes of it.
func editCursor(ios *IO, g *Global, arg string, f func(s *writable) (string, error), line func(session.CursorInfo) string) error {
	var info session.CursorInfo
	err := g.edit(ios, arg, func(s *writable) error {
		id, err := f(s)
		if err != nil {
			return err
		}
		info = cursorInfo(s.Log, id)
		return nil
	})
	if err != nil {
		return err
	}
	if g.JSON {
		return ios.JSON(info)
	}
	fmt.Fprintln(ios.Out, line(info))
	return nil
}

func cursorInfo(l *session.Log, id string) session.CursorInfo {
	for _, c := range l.Cursors() {
		if c.ID == id {
			return c
		}
	}
	return session.CursorInfo{ID: id}
}
