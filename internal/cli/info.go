package cli

import (
	"fmt"

	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

// Info is the record `arbor info --json` prints (SPEC §10).
type Info struct {
	ID            string               `json:"id"`
	Path          string               `json:"path"`
	Cwd           string               `json:"cwd"`
	Version       int                  `json:"version"`
	Name          string               `json:"name"`
	LeafID        *string              `json:"leafId"`
	EntryCount    int                  `json:"entryCount"`
	MessageCount  int                  `json:"messageCount"`
	ParentSession string               `json:"parentSession"`
	Cursors       []session.CursorInfo `json:"cursors"`
	Damage        *session.Report      `json:"damage,omitempty"`
}

func newCmdInfo(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "info <session>",
		Short: "Show a session's id, leaf, name, counts and cursors",
		Long: `Show a session's metadata: id, file, project folder, format version, name,
the active leaf, how many entries and messages it holds (on every branch), the
file it was forked from, and its cursors. Damage found while reading it is
listed too ('arbor fsck' says more).`,
		Example: `  arbor info examples/refactor.jsonl
  arbor info 0195f1c2 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			l, path, err := g.read(args[0])
			if err != nil {
				return err
			}
			info := infoOf(l, path)
			if g.JSON {
				return ios.JSON(info)
			}
			leaf := "(none)"
			if info.LeafID != nil {
				leaf = *info.LeafID
			}
			ios.Printf("id        %s\npath      %s\ncwd       %s\nversion   %d\n", info.ID, info.Path, info.Cwd, info.Version)
			if info.Name != "" {
				ios.Printf("name      %s\n", info.Name)
			}
			ios.Printf("leaf      %s\nentries   %d\nmessages  %d\n", leaf, info.EntryCount, info.MessageCount)
			if info.ParentSession != "" {
				ios.Printf("parent    %s\n", info.ParentSession)
			}
			for _, cur := range info.Cursors {
				ios.Printf("cursor    %s\n", cursorRow(cur))
			}
			if info.Damage != nil {
				ios.Printf("damage    %s\n", damageSummary(info.Damage))
			}
			return nil
		},
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func infoOf(l *session.Log, path string) Info {
	h := l.Header()
	info := Info{ID: h.ID, Path: path, Cwd: h.Cwd, Version: h.Version, Name: l.SessionName(), ParentSession: h.ParentSession, Cursors: l.Cursors()}
	if leaf := l.Leaf(); leaf != nil {
		info.LeafID = &leaf.ID
	}
	for _, e := range l.Entries() {
		info.EntryCount++
		if e.Type == session.TypeMessage {
			info.MessageCount++
		}
	}
	// An empty file is an empty session, as pi opens it, not damage.
	if rep := l.Report(); !rep.Clean() && !(rep.NoHeader && l.Len() == 0 && len(rep.BadLines) == 0 && !rep.TornTail) {
		info.Damage = &rep
	}
	return info
}

func damageSummary(r *session.Report) string {
	s := ""
	add := func(format string, a ...any) {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf(format, a...)
	}
	if r.NoHeader {
		add("no session header")
	}
	if len(r.BadLines) > 0 {
		add("%d unreadable lines (%v)", len(r.BadLines), r.BadLines)
	}
	if r.TornTail {
		add("torn last line")
	}
	if r.MissingNewline {
		add("last line lacks its newline")
	}
	if len(r.ExtraHeaders) > 0 {
		add("%d extra headers", len(r.ExtraHeaders))
	}
	if len(r.DuplicateIDs) > 0 {
		add("%d duplicate ids", len(r.DuplicateIDs))
	}
	if len(r.Cycles) > 0 {
		add("%d parent loops cut", len(r.Cycles))
	}
	if len(r.Orphans) > 0 {
		add("%s with unknown parents", count(len(r.Orphans), "entry"))
	}
	return s + " (run 'arbor fsck' for details)"
}
