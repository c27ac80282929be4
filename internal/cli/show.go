package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
		var pretty bytes.Buffer
		if json.Indent(&pretty, e.Raw(), "", "  ") != nil {
			pretty.Reset()
			pretty.Write(e.Raw())
		}
		fmt.Fprintf(out, "%s\n", termtext.Block(pretty.String()))
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
