package cli

import (
	"bytes"

	"github.com/spf13/cobra"
)

var _ = register(newCmdTree)

func newCmdTree(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "tree <session>",
		Short: "Show every entry of a session as a branch tree",
		Long: `Show every entry of a session as a tree: each branch, the active path,
labels, and the role and first line of each entry.

--json prints every entry (arbor's own markers included) as nested nodes
{"entry":{…},"children":[…],"label":"…","labelTimestamp":"…"}, roots in file
order and children by timestamp, as pi's getTree() does.`,
		Example: `  arbor tree examples/refactor.jsonl
  arbor tree 0195f1c2 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			l, _, err := g.read(args[0])
			if err != nil {
				return err
			}
			roots := l.Tree()
			w := ios.Buffered()
			defer w.Flush()
			if g.JSON {
				var b bytes.Buffer
				b.WriteByte('[')
				for i, r := range roots {
					if i > 0 {
						b.WriteByte(',')
					}
					r.WriteJSON(&b)
				}
				b.WriteString("]\n")
				_, err := w.Write(b.Bytes())
				return err
			}
			for _, r := range roots {
				w.WriteString(r.Entry.ID + " " + r.Entry.Type + "\n")
			}
			return nil
		},
	}
}
