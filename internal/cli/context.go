package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/inorder"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window"
	"github.com/arborlog/arbor/window/blob"
	"github.com/spf13/cobra"
)

type contextOptions struct {
	io     *IO
	g      *Global
	arg    string
	leaf   string
	cursor string
	// resolved applies the cursor's resolutions to --json and --format llm.
	resolved bool
	format   string
	budget   int
	explain  bool
	share    float64
	system   bool
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
the model (bash runs, custom messages and summaries become user messages).
--system prints the system prompt and tools in force at the leaf instead:
every system message of the context replayed (pi 1.6.0's getCurrentSystemMessage),
as the prompt text, or with --json as {"message":{…}|null,"text":"…"}.

Entries the cursor outlined or summarized (arbor outline, arbor summarize) are
rendered that way in the transcript, each marked; --json and --format llm stay
pi's context exactly unless --resolved (or --budget) asks for that rendering. --budget N fits the context into N tokens: tool results
larger than a share of it are cut (the full output is kept as a blob, see
'arbor blob'), then older messages are outlined and summarized, oldest and
largest first, and if that is not enough whole turns are left out, oldest
first, with one note in their place. Pinned entries, the first and last user
requests and the last turn are never touched; tool calls keep their results.
A tool call left without a result (a crash mid-tool) gets an error result.
--explain lists on stderr what was cut, downgraded and left out.`,
		Example: `  arbor context examples/refactor.jsonl
  arbor context 0195f1c2 --json
  arbor context my-session --leaf 3fa2b9c1 --format llm
  arbor context my-session --budget 60000 --format llm --explain`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if c.Flags().Changed("leaf") && c.Flags().Changed("cursor") {
				return usagef("--leaf and --cursor cannot be used together")
			}
			if o.format != "json" && o.format != "llm" && o.format != "text" {
				return usagef("--format must be json, llm or text, not %q", o.format)
			}
			if o.budget < 0 || c.Flags().Changed("budget") && o.budget == 0 {
				return usagef("--budget must be a number of tokens above 0, not %d", o.budget)
			}
			if o.explain && o.budget == 0 {
				return usagef("--explain needs --budget")
			}
			if o.share <= 0 || o.share > 1 {
				return usagef("--result-share must be above 0 and at most 1, not %g", o.share)
			}
			if o.system && (o.budget > 0 || c.Flags().Changed("format")) {
				return usagef("--system cannot be used with --budget or --format")
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
	cmd.Flags().BoolVar(&o.resolved, "resolved", false, "with --json or --format llm: apply the cursor's outlines and summaries (the transcript always does)")
	cmd.Flags().StringVar(&o.format, "format", "text", "text, json (pi's context) or llm (converted for the model)")
	cmd.Flags().IntVar(&o.budget, "budget", 0, "fit the context into this many tokens")
	cmd.Flags().BoolVar(&o.explain, "explain", false, "with --budget: say on stderr what was cut, downgraded and left out")
	cmd.Flags().BoolVar(&o.system, "system", false, "print the system prompt and tools replayed at the leaf")
	cmd.Flags().Float64Var(&o.share, "result-share", 0.25, "with --budget: the largest share of it one tool result may take")
	return cmd
}

func runContext(o *contextOptions) error {
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	var ctx session.Context
	res := l.Cursor("")
	switch {
	case o.leaf == "null":
		ctx = l.ContextAt(nil)
	case o.leaf != "":
		e, err := entryOrErr(l, path, o.leaf)
		if err != nil {
			return err
		}
		o.leaf = e.ID
		ctx = l.ContextAt(&o.leaf)
	case o.cursor != "":
		c := l.Cursor(o.cursor)
		if !hasCursor(l, c.ID()) {
			return fmt.Errorf("no cursor %q in %s; 'arbor info %s' lists them", o.cursor, path, path)
		}
		ctx = c.Context()
		res = c
	default:
		ctx = l.Context()
	}
	if o.system {
		return o.printSystem(ctx)
	}
	format := o.format
	if o.g.JSON && format == "text" {
		format = "json"
	}
	var marks map[int]string
	// --json and --format llm are pi's context exactly, unless asked for the
	// cursor's rendering (--resolved) or a budget; the transcript shows the
	// rendering and marks each message it changed.
	if format == "text" || o.resolved || o.budget > 0 {
		if ctx, marks, err = o.fit(ctx, res.Resolutions(), path); err != nil {
			return err
		}
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
		printTranscript(w, ctx, marks)
	}
	return nil
}

// printSystem prints the system prompt replayed from the context's system messages.
func (o *contextOptions) printSystem(ctx session.Context) error {
	msg, text := session.SystemPrompt(ctx.Messages)
	w := o.io.Buffered()
	defer w.Flush()
	if !o.g.JSON {
		// Piped, the prompt is printed as recorded; on a terminal its
		// control characters are shown as escapes, as everywhere.
		if o.io.IsTTY() {
			text = termtext.Block(text)
		}
		w.WriteString(text + "\n")
		return nil
	}
	w.Flush()
	if msg == nil {
		msg = json.RawMessage("null")
	}
	return printJSON(o.io, struct {
		Message json.RawMessage `json:"message"`
		Text    string          `json:"text"`
	}{msg, text})
}

// fit renders the cursor's resolutions and, with --budget, fits the context.
// Without a budget and without entries below full, the context is pi's, untouched.
// marks says, by message index, how a message was rendered when not in full.
func (o *contextOptions) fit(ctx session.Context, res map[string]session.Resolution, path string) (session.Context, map[int]string, error) {
	if o.budget == 0 && !reduced(ctx, res) {
		return ctx, nil, nil
	}
	opts := window.Options{Budget: o.budget, ResultShare: o.share}
	if o.budget > 0 {
		opts.Blobs = blob.Store{Dir: filepath.Join(catalog.Home(), "blobs")}
	}
	r, err := window.Build(ctx, res, opts)
	if err != nil {
		return ctx, nil, fmt.Errorf("%s: %w", path, err)
	}
	if o.explain {
		// Each line quotes ids and roles from the session: one line each, newlines escaped.
		for _, line := range r.ExplainLines() {
			fprintf(o.io.ErrOut, "%s\n", line)
		}
	}
	marks := map[int]string{}
	for i, m := range r.Messages {
		switch {
		case m.Synthetic:
			marks[i] = "added by arbor"
		case m.Level == session.Outlined || m.Level == session.Summarized:
			marks[i] = string(m.Level)
		}
	}
	for _, c := range r.Cuts {
		for i, m := range r.Messages {
			if m.Entry != nil && m.Entry.ID == c.EntryID && m.Level == session.Full {
				marks[i] = "cut"
			}
		}
	}
	return r.Context(), marks, nil
}

// reduced reports whether the cursor renders any message of ctx below full.
func reduced(ctx session.Context, res map[string]session.Resolution) bool {
	if len(res) == 0 {
		return false
	}
	for _, m := range ctx.Messages {
		if m.Entry == nil {
			continue
		}
		if r, ok := res[m.Entry.ID]; ok && r.Level != session.Full && r.Level != session.Pinned {
			return true
		}
	}
	return false
}

func hasCursor(l *session.Log, id string) bool {
	for _, c := range l.Cursors() {
		if c.ID == id {
			return true
		}
	}
	return false
}

// printTranscript writes the context for a person: one block per message,
// with its mark (outlined, summarized, cut, added by arbor) when it has one.
func printTranscript(w interface{ WriteString(string) (int, error) }, ctx session.Context, marks map[int]string) {
	// A run of messages on each core, printed in order.
	inorder.Do(len(ctx.Messages), transcriptRun, func(lo, hi int) string {
		var b strings.Builder
		var sc session.MessageScanner
		for i := lo; i < hi; i++ {
			m := ctx.Messages[i]
			d, ok, err := sc.Message(m.Raw)
			if !ok {
				continue
			}
			b.WriteString("── " + termtext.Line(m.Role))
			if m.Entry != nil {
				b.WriteString(" [" + termtext.Line(m.Entry.ID) + "]")
			}
			if mark, ok := marks[i]; ok {
				b.WriteString(" (" + mark + ")")
			}
			b.WriteString("\n")
			text := string(m.Raw)
			if err == nil {
				text = Describe(d, m.Raw)
			}
			b.WriteString(termtext.Block(strings.TrimRight(text, "\n")) + "\n\n")
		}
		return b.String()
	}, func(s string) error {
		w.WriteString(s)
		return nil
	})
	// An assistant message written without its provider and model (arbor
	// append, other tools) leaves both empty: that is no model, not "/".
	model := "none"
	if ctx.Model != nil {
		provider, id := valueText(ctx.Model.Provider), valueText(ctx.Model.ModelID)
		switch {
		case provider != "" && id != "":
			model = provider + "/" + id
		case provider+id != "":
			model = provider + id
		}
	}
	w.WriteString(sprintf("%s · thinking %s · model %s\n", count(len(ctx.Messages), "message"), valueText(ctx.ThinkingLevel), model))
}

// valueText is a stored JSON value as a person reads it: a string decoded,
// anything else as written.
func valueText(v []byte) string {
	var s string
	if jsonUnmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// transcriptRun is how many messages a core describes at a time.
const transcriptRun = 1024

// Describe renders a message (d, read from raw) as readable text: its text,
// thinking, tool calls and results. One-line fields (a tool's name) are made
// printable here; the caller prints the whole through termtext.Block.
func Describe(d session.MessageData, raw []byte) string {
	var b strings.Builder
	switch d.Role {
	case session.RoleBashExecution:
		fmt.Fprintf(&b, "$ %s\n%s", d.Command, d.Output)
		return b.String()
	case session.RoleBranchSummary, session.RoleCompactionSummary:
		var v struct {
			Summary string `json:"summary"`
		}
		_ = jsonUnmarshal(raw, &v)
		return v.Summary
	case session.RoleToolResult:
		status := ""
		if d.IsError {
			status = " (error)"
		}
		fprintf(&b, "%s result%s:\n", d.ToolName, status)
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
			// An empty one (Claude Code writes them, redacted or not) says nothing.
			if strings.TrimSpace(blk.Thinking) != "" {
				b.WriteString("(thinking) " + blk.Thinking + "\n")
			}
		case "toolCall":
			b.WriteString("→ " + termtext.Line(blk.Name) + " " + string(blk.Arguments) + "\n")
		case "image":
			b.WriteString("[image " + termtext.Line(blk.MimeType) + "]\n")
		}
	}
	return b.String()
}
