package cli

import (
	"fmt"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/spf13/cobra"
)

type forkOptions struct {
	io     *IO
	g      *Global
	arg    string
	leaf   string // entry id; "" for the cursor's leaf
	cursor string // id or name; "" for the active cursor
}

// forkResult is what `arbor fork --json` prints.
type forkResult struct {
	Path          string `json:"path"`
	ID            string `json:"id"`
	ParentSession string `json:"parentSession"`
}

func newCmdFork(ios *IO, g *Global) *cobra.Command {
	o := &forkOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "fork <session>",
		Short: "Start a new session from the path to a leaf (pi's /fork and /clone)",
		Long: `Write a new session file holding only the path from the root to a leaf of
this one, with the labels of those entries, a new session id, and
parentSession pointing back here (SPEC §6.1). It goes in the same folder,
and the original is left as it was. Prints the new file's path.

The leaf is the active cursor's unless --leaf or --cursor names another.`,
		Example: `  arbor fork examples/refactor.jsonl
  arbor fork examples/refactor.jsonl --leaf e1b8045d
  arbor fork my-session --cursor review --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if c.Flags().Changed("leaf") && c.Flags().Changed("cursor") {
				return usagef("--leaf and --cursor cannot be used together")
			}
			if c.Flags().Changed("leaf") && o.leaf == "" {
				return usagef("--leaf needs an entry id")
			}
			return runFork(o)
		},
	}
	cmd.Flags().StringVar(&o.leaf, "leaf", "", "fork the path to this entry")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "fork the path to this cursor's leaf (id or name)")
	return cmd
}

func runFork(o *forkOptions) error {
	// The source is only read: it takes no lock, so forking a session another
	// process is writing works.
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	leaf := o.leaf
	if leaf == "" {
		c, err := cursorOrErr(l, path, o.cursor)
		if err != nil {
			return err
		}
		e := c.Leaf()
		if e == nil {
			return fmt.Errorf("cursor %s of %s is before the first entry: nothing to fork; pass --leaf <entry-id>", cursorLabel(l, c.ID()), path)
		}
		leaf = e.ID
	} else {
		e, err := targetOrErr(l, path, leaf)
		if err != nil {
			return err
		}
		leaf = e.ID
	}
	ns, err := o.g.fork(path, l, leaf)
	if err != nil {
		return fmt.Errorf("fork %s at %s: %w", path, leaf, err)
	}
	// pi defers writing a session without an assistant message; a fork the
	// user asked for is written now, so the printed path exists.
	err = ns.Flush()
	if cerr := ns.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", ns.Path(), err)
	}
	h := ns.Header()
	res := forkResult{Path: ns.Path(), ID: h.ID, ParentSession: h.ParentSession}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	o.io.Printf("%s\n", res.Path)
	return nil
}

// fork starts the session holding the branch of l (read from ref) that ends at leaf.
func (g *Global) fork(ref string, l *session.Log, leaf string) (*writable, error) {
	if db, err := g.database(); err != nil || db != nil {
		if err != nil {
			return nil, err
		}
		return g.forkDB(db, l, ref, leaf)
	}
	s, err := jsonl.BranchFrom(ref, l, leaf)
	if err != nil {
		return nil, err
	}
	return fromFile(s), nil
}
