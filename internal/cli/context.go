package cli

import (
	"fmt"
	"strings"

	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

var _ = register(newCmdContext)

type contextOptions struct {
	io     *IO
	g      *Global
	arg    string
	leaf   string
	cursor string
	format string
}

func newCmdContext(ios *IO, g *Global) *cobra.Command {
	o := &contextOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "context <session>",
		Short: "Print what the model would see from a session's leaf",
		Long: `Print the context pi would send to the model: the messages on the path from
the root to the leaf, with compactions and branch summaries applied, plus the
thinking level and model in force there.

By default the leaf is the active cursor's. --leaf starts from any entry
(--leaf null gives the empty context), --cursor from another cursor.
--json prints {"messages":[…],"thinkingLevel":…,"model":…} exactly as pi's
buildSessionContext() would; --format llm prints the messages converted for
the model (bash runs, custom messages and summaries become user messages).`,
		Example: `  arbor context examples/refactor.jsonl
  arbor context 0195f1c2 --json
  arbor context my-session --leaf 3fa2b9c1 --format llm`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if c.Flags().Changed("leaf") && c.Flags().Changed("cursor") {
				return usagef("--leaf and --cursor cannot be used together")
			}
			if o.format != "json" && o.format != "llm" && o.format != "text" {
				return usagef("--format must be json, llm or text, not %q", o.format)
			}
			if !c.Flags().Changed("leaf") {
				o.leaf = ""
			} else if o.leaf == "" {
				return usagef("--leaf needs an entry id or null")
			}
			return runContext(o)
		},
	}
	cmd.Flags().StringVar(&o.leaf, "leaf", "", "build from this entry id (null: the empty context)")
	cmd.Flags().StringVar(&o.cursor, "cursor", "", "build from this cursor's leaf (id or name)")
	cmd.Flags().StringVar(&o.format, "format", "text", "text, json (pi's context) or llm (converted for the model)")
	return cmd
}

func runContext(o *contextOptions) error {
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	var ctx session.Context
	switch {
	case o.leaf == "null":
		ctx = l.ContextAt(nil)
	case o.leaf != "":
		if _, err := entryOrErr(l, path, o.leaf); err != nil {
			return err
		}
		ctx = l.ContextAt(&o.leaf)
	case o.cursor != "":
		c := l.Cursor(o.cursor)
		if !hasCursor(l, c.ID()) {
			return fmt.Errorf("no cursor %q in %s; 'arbor info %s' lists them", o.cursor, path, path)
		}
		ctx = c.Context()
	default:
		ctx = l.Context()
	}
	format := o.format
	if o.g.JSON && format == "text" {
		format = "json"
	}
	w := o.io.Buffered()
	defer w.Flush()
	switch format {
	case "json":
		if err := ctx.WriteJSON(w); err != nil {
			return err
		}
		w.WriteString("\n")
	case "llm":
		w.WriteString("[")
		for i, m := range session.ForModel(ctx.Messages) {
			if i > 0 {
				w.WriteString(",")
			}
			w.Write(m)
		}
		w.WriteString("]\n")
	default:
		printTranscript(w, ctx)
	}
	return nil
}

func hasCursor(l *session.Log, id string) bool {
	for _, c := range l.Cursors() {
		if c.ID == id {
			return true
		}
	}
	return false
}

// printTranscript writes the context for a person: one block per message.
func printTranscript(w interface{ WriteString(string) (int, error) }, ctx session.Context) {
	for _, m := range ctx.Messages {
		msg, err := session.ParseMessage(m.Raw)
		if err != nil {
			continue
		}
		w.WriteString("── " + m.Role)
		if m.Entry != nil {
			w.WriteString(" [" + m.Entry.ID + "]")
		}
		w.WriteString("\n")
		w.WriteString(strings.TrimRight(Describe(msg), "\n") + "\n\n")
	}
	model := "none"
	if ctx.Model != nil {
		model = strings.Trim(string(ctx.Model.Provider), `"`) + "/" + strings.Trim(string(ctx.Model.ModelID), `"`)
	}
	w.WriteString(fmt.Sprintf("%d messages · thinking %s · model %s\n", len(ctx.Messages), strings.Trim(string(ctx.ThinkingLevel), `"`), model))
}

// Describe renders a message as readable text: its text, thinking, tool calls and results.
func Describe(m session.Message) string {
	d, err := m.Data()
	if err != nil {
		return string(m.Raw())
	}
	var b strings.Builder
	switch d.Role {
	case session.RoleBashExecution:
		fmt.Fprintf(&b, "$ %s\n%s", d.Command, d.Output)
		return b.String()
	case session.RoleBranchSummary, session.RoleCompactionSummary:
		var v struct {
			Summary string `json:"summary"`
		}
		_ = jsonUnmarshal(m.Raw(), &v)
		return v.Summary
	case session.RoleToolResult:
		status := ""
		if d.IsError {
			status = " (error)"
		}
		fmt.Fprintf(&b, "%s result%s:\n", d.ToolName, status)
	}
	if d.Content.IsString {
		b.WriteString(d.Content.String)
		return b.String()
	}
	for _, blk := range d.Content.Blocks {
		switch blk.Type {
		case "text":
			b.WriteString(blk.Text + "\n")
		case "thinking":
			b.WriteString("(thinking) " + blk.Thinking + "\n")
		case "toolCall":
			b.WriteString("→ " + blk.Name + " " + string(blk.Arguments) + "\n")
		case "image":
			b.WriteString("[image " + blk.MimeType + "]\n")
		}
	}
	return b.String()
}
