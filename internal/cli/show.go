package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

// showResult is what `arbor show --json` prints. For a compaction it adds what
// the compaction covers.
type showResult struct {
	Entry json.RawMessage `json:"entry"`
	Label string          `json:"label,omitempty"`
	// compactions only
	Previous *string           `json:"previousCompaction,omitempty"`
	Replaced []json.RawMessage `json:"replaced,omitempty"`
	Kept     []string          `json:"kept,omitempty"`
}

func newCmdShow(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "show <session> <entry-id>",
		Short: "Print one entry; for a compaction, its summary and the entries it replaced",
		Long: `Print one entry of a session. For a compaction this is what it did: its
summary, the entries it replaced (summarized and left out of the context from
then on, though still in the tree), the entries before it that the context still
keeps, and the earlier compaction it rolled forward, if any.

With --json the entry is printed as stored; a compaction adds "replaced" (those
entries as stored), "kept" (their ids) and "previousCompaction".`,
		Example: `  arbor show my-session 7c1e9a20
  arbor show my-session 7c1e9a20 --json | jq '.replaced | length'`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			l, path, err := g.read(args[0])
			if err != nil {
				return err
			}
			e, err := entryOrErr(l, path, args[1])
			if err != nil {
				return err
			}
			return runShow(ios, g, l, e)
		},
	}
}

func runShow(ios *IO, g *Global, l *session.Log, e *session.Entry) error {
	res := showResult{Entry: json.RawMessage(e.Raw()), Label: l.Label(e.ID)}
	var cov *compaction.Coverage
	if e.Type == session.TypeCompaction {
		c, err := compaction.Covers(l, e.ID)
		if err != nil {
			return err
		}
		cov = &c
		res.Replaced = []json.RawMessage{}
		for _, x := range c.Replaced {
			res.Replaced = append(res.Replaced, json.RawMessage(x.Raw()))
		}
		res.Kept = []string{}
		for _, x := range c.Kept {
			res.Kept = append(res.Kept, x.ID)
		}
		if c.Previous != nil {
			res.Previous = &c.Previous.ID
		}
	}
	if g.JSON {
		return ios.JSON(res)
	}
	out := ios.Buffered()
	defer out.Flush()
	fprintf(out, "%s %s  parent %s  %s", e.Type, e.ID, orNone(e.ParentID), e.Timestamp)
	if res.Label != "" {
		fprintf(out, "  label %q", res.Label)
	}
	fmt.Fprintln(out)
	if cov == nil {
		// The entry is printed indented, a piece at a time: an entry of one
		// 200 MB line is not copied whole again (show took 1 GB).
		b := &blockWriter{w: out}
		if json.Valid(e.Raw()) {
			indent(b, e.Raw())
		} else {
			b.Write(e.Raw())
		}
		b.Flush()
		fmt.Fprintln(out)
		return nil
	}
	fprintf(out, "tokens before %d\n", cov.TokensBefore)
	if cov.Previous != nil {
		fprintf(out, "rolls forward compaction %s\n", cov.Previous.ID)
	}
	if len(cov.Kept) > 0 {
		fprintf(out, "keeps %s from %s\n", count(len(cov.Kept), "entry"), cov.FirstKeptEntryID)
	} else {
		fprintf(out, "keeps nothing before it (first kept entry %s is not on its branch)\n", orNone(cov.FirstKeptEntryID))
	}
	fprintf(out, "replaced %s:\n", count(len(cov.Replaced), "entry"))
	for _, x := range cov.Replaced {
		fprintf(out, "  %s  %s\n", x.ID, termtext.Truncate(termtext.Line(entryPreview(x)), max(20, ios.Width()-12)))
	}
	fmt.Fprintf(out, "\nsummary:\n%s\n", termtext.Block(cov.Summary))
	return nil
}

// blockWriter writes what it is given to w as termtext.Block prints it, in
// pieces of about 64 KiB cut between characters.
type blockWriter struct {
	w   io.Writer
	buf []byte
}

func (b *blockWriter) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) >= 64<<10 {
		// Keep an incomplete last character for the next piece.
		n, i := len(b.buf), len(b.buf)-1
		for i > 0 && len(b.buf)-i < utf8.UTFMax && !utf8.RuneStart(b.buf[i]) {
			i--
		}
		if !utf8.FullRune(b.buf[i:]) {
			n = i
		}
		io.WriteString(b.w, termtext.Block(string(b.buf[:n])))
		b.buf = append(b.buf[:0], b.buf[n:]...)
	}
	return len(p), nil
}

// Flush writes what is left.
func (b *blockWriter) Flush() {
	io.WriteString(b.w, termtext.Block(string(b.buf)))
	b.buf = b.buf[:0]
}

// indent writes valid JSON src to w as json.Indent(dst, src, "", "  ")
// does, without holding the indented copy.
func indent(w io.Writer, src []byte) {
	var out []byte
	depth := 0
	inString, escaped, open, started := false, false, false, false
	newline := func(d int) {
		out = append(out, '\n')
		for range d {
			out = append(out, ' ', ' ')
		}
	}
	for _, c := range src {
		if len(out) >= 32<<10 {
			w.Write(out)
			out = out[:0]
		}
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if started && depth == 0 {
				out = append(out, c) // json.Indent keeps what follows the value
			}
			continue
		}
		started = true
		if open && c != '}' && c != ']' {
			newline(depth)
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '{', '[':
			depth++
			out = append(out, c)
			open = true
			continue
		case ',':
			out = append(out, c)
			newline(depth)
		case ':':
			out = append(out, ':', ' ')
		case '}', ']':
			depth--
			if !open {
				newline(depth)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
		open = false
	}
	w.Write(out)
}

// entryPreview is one line saying what an entry holds.
func entryPreview(e *session.Entry) string {
	if e.Type == session.TypeMessage {
		d, ok := treeview.MessageData(e)
		if !ok {
			return "message (unreadable)"
		}
		switch d.Role {
		case session.RoleAssistant:
			text := treeview.ContentText(d.Content)
			var calls []string
			for _, b := range d.Content.Blocks {
				if b.Type == "toolCall" {
					calls = append(calls, treeview.ParseCall(b).String())
				}
			}
			return strings.TrimSpace("assistant: " + strings.TrimSpace(text+" "+strings.Join(calls, " ")))
		case session.RoleToolResult:
			s := "toolResult " + d.ToolName
			if d.IsError {
				s += " (error)"
			}
			return s + ": " + treeview.ContentText(d.Content)
		case session.RoleBashExecution:
			return "bash: " + treeview.Flat(d.Command)
		}
		return d.Role + ": " + treeview.ContentText(d.Content)
	}
	var f struct {
		CustomType string          `json:"customType"`
		Content    session.Content `json:"content"`
		Summary    string          `json:"summary"`
	}
	_ = e.Decode(&f)
	switch e.Type {
	case session.TypeCustomMessage:
		return "custom_message " + f.CustomType + ": " + treeview.ContentText(f.Content)
	case session.TypeBranchSummary, session.TypeCompaction:
		return e.Type + ": " + treeview.Flat(strings.TrimPrefix(f.Summary, compaction.BranchSummaryPreamble))
	case session.TypeCustom:
		return "custom " + f.CustomType
	}
	return e.Type
}
