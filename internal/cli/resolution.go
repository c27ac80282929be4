package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arborlog/arbor/session"
)

type resolutionOptions struct {
	io     *IO
	g      *Global
	verb   string
	arg    string
	id     string
	cursor string
	text   string
}

var resolutionHelp = map[string]struct{ short, long string }{
	"pin": {"Keep an entry in full: never outlined, summarized or left out",
		"Pin an entry for a cursor: the context budget (arbor context --budget) never\ndowngrades or leaves out a pinned entry."},
	"unpin": {"Return an entry to its default level",
		"Undo pin, outline or summarize for a cursor: the entry renders at its default\nlevel again (full for messages)."},
	"outline": {"Render an entry as an outline in this cursor's context",
		"Render an entry as an outline for a cursor: a tool result becomes one line\nnaming the tool, its argument, the size and outcome plus its first lines; an\nassistant message keeps its tool calls. --text sets your own outline."},
	"summarize": {"Render an entry as a one-line summary in this cursor's context",
		"Render an entry as a one-line summary for a cursor (shorter than an outline;\nroles and tool-call pairing are kept). --text sets your own summary."},
}

func newCmdResolution(ios *IO, g *Global, verb string) *cobra.Command {
	o := &resolutionOptions{io: ios, g: g, verb: verb}
	h := resolutionHelp[verb]
	cmd := &cobra.Command{
		Use:   verb + " <session> <entry-id>",
		Short: h.short,
		Long: h.long + `

The change is recorded as an arbor.resolution marker on the cursor (the active
one, or --cursor), so it survives a restart and other cursors are not affected.
pi ignores these markers and still sees every entry in full. Like any write,
the marker goes under that cursor's leaf: the file's last line is then on that
cursor's branch, so it becomes the active cursor and pi continues from there.`,
		Example: fmt.Sprintf("  arbor %s my-session 3fa2b9c1\n  arbor %s 0195f1c2 3fa2b9c1 --cursor experiment", verb, verb),
		Args:    cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg, o.id = args[0], args[1]
			return runResolution(o)
		},
	}
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "the cursor (id or name) whose rendering changes; default the active one")
	if verb == "outline" || verb == "summarize" {
		cmd.Flags().StringVar(&o.text, "text", "", "render this text instead of the generated "+map[string]string{"outline": "outline", "summarize": "summary"}[verb])
	}
	return cmd
}

func runResolution(o *resolutionOptions) error {
	s, err := o.g.open(o.arg)
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := entryOrErr(s.Log, s.Path(), o.id)
	if err != nil {
		return err
	}
	level := map[string]session.Level{"pin": session.Pinned, "unpin": session.DefaultLevel(e), "outline": session.Outlined, "summarize": session.Summarized}[o.verb]
	if err := session.Resolvable(e, level); err != nil {
		return fmt.Errorf("%s %s in %s: %w", o.verb, o.id, s.Path(), err)
	}
	c := s.Cursor(o.cursor)
	if o.cursor != "" && !hasCursor(s.Log, c.ID()) {
		return fmt.Errorf("no cursor %q in %s; 'arbor info %s' lists them", o.cursor, s.Path(), s.Path())
	}
	set := map[string]func(string) error{
		"pin":       c.Pin,
		"unpin":     c.Unpin,
		"outline":   func(id string) error { return c.Outline(id, o.text) },
		"summarize": func(id string) error { return c.Summarize(id, o.text) },
	}[o.verb]
	if err := set(e.ID); err != nil {
		return fmt.Errorf("%s %s in %s: %w", o.verb, e.ID, s.Path(), err)
	}
	r, _ := c.Resolution(e.ID)
	if err := s.Close(); err != nil {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(map[string]string{"entryId": e.ID, "cursor": c.ID(), "level": string(r.Level)})
	}
	o.io.Printf("%s: %s for cursor %s\n", e.ID, r.Level, c.ID())
	return nil
}
