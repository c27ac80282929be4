package cli

import (
	"errors"
	"fmt"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/importers"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/spf13/cobra"
)

func newCmdImport(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "import <file|folder>...",
		Short: "Import rho, Claude Code and Codex sessions as pi sessions",
		Long: `Import sessions of other coding agents as pi session files that pi and arbor
open and continue. A folder is searched for session files (e.g.
~/.claude/projects, ~/.codex/sessions); a Claude Code session brings its
subagent transcripts, which become sessions of their own whose parent is it.

The sources are only read. Each imported session records where it came from:
the header names the source file, format and session id, and every entry the
source line it was made from. Importing again changes nothing; a source that
grew since is brought up to date by appending what is new. Two files that
claim the same session id are never merged: the one imported later becomes a
session of its own, and the summary names the other.

Sessions are written to --session-dir, or to the project's folder under
~/.arbor/sessions (by the session's working directory). The summary says, per
file, what was imported, what was skipped (interface records, duplicates) and
what was kept as custom entries because arbor does not know it; damaged source
lines are listed with their numbers.`,
		Example: `  arbor import ~/.claude/projects/-home-me-app/0b5c1e9e-….jsonl
  arbor import ~/.codex/sessions --session-dir /tmp/imported
  arbor import ~/.rho/sessions --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var results []importers.Written
			var failed []error
			for _, arg := range args {
				srcs, err := importers.Sources(arg)
				if err != nil {
					failed = append(failed, err)
					continue
				}
				if len(srcs) == 0 {
					ios.Warnf("%s: no rho, Claude Code or Codex session files in it", arg)
				}
				imported := map[string]string{} // source path -> imported file
				for _, src := range srcs {
					w, err := importOne(g, src, imported)
					if err != nil {
						failed = append(failed, err)
						continue
					}
					imported[w.Source] = w.Path
					results = append(results, w)
				}
			}
			if g.JSON {
				if results == nil {
					results = []importers.Written{}
				}
				if err := ios.JSON(results); err != nil {
					return err
				}
			} else {
				for _, w := range results {
					printWritten(ios, w)
				}
			}
			for _, err := range failed[:max(0, len(failed)-1)] {
				ios.Warnf("%v", err)
			}
			if len(failed) > 0 {
				return failed[len(failed)-1]
			}
			return nil
		},
	}
}

// importOne reads a source and writes it; a subagent's parent link is pointed at
// its parent's import when that was written in this run or an earlier one.
func importOne(g *Global, src string, imported map[string]string) (importers.Written, error) {
	s, err := importers.ReadFile(src)
	if err != nil {
		return importers.Written{}, fmt.Errorf("import %s: %w", src, err)
	}
	dir := g.SessionDir
	if dir == "" {
		dir = jsonl.Dir(catalog.SessionsRoot(), s.Header.Cwd)
	}
	if p := s.Header.ParentSession; p != "" {
		if path, ok := imported[p]; ok {
			s.Header.ParentSession = path
		} else if parent, err := importers.ReadFile(p); err == nil {
			if path := importers.Find(parent, dir); path != "" {
				s.Header.ParentSession = path
			}
		}
	}
	w, err := importers.Write(s, dir)
	if err != nil {
		var le *jsonl.LockError
		if errors.As(err, &le) {
			return w, fmt.Errorf("import %s: %w", src, err)
		}
		return w, fmt.Errorf("import %s into %s: %w", src, dir, err)
	}
	return w, nil
}

func printWritten(ios *IO, w importers.Written) {
	verb := "imported"
	switch {
	case !w.Created && w.Added == 0:
		verb = "up to date"
	case !w.Created:
		verb = "updated"
	}
	ios.Printf("%s %s (%s)\n  -> %s\n", verb, w.Source, w.Format, w.Path)
	ios.Printf("  %d entries new, %d already there; %d source lines skipped, %d kept as custom entries; %d prompts, %d branches, %d compactions\n",
		w.Added, w.Existing, w.Stats.Skipped, w.Stats.Custom, w.Stats.Prompts, w.Stats.Branches, w.Stats.Compactions)
	if c := w.Conflict; c != nil {
		other := c.Source
		if other == "" {
			other = c.Path
		}
		ios.Printf("  %s claims session id %s too and was imported first (-> %s); this file is a session of its own\n", other, c.ID, c.Path)
	}
	if w.Pending > 0 {
		ios.Printf("  %d entries held back: the source is still writing them; import again later\n", w.Pending)
	}
	for _, d := range w.Damage {
		ios.Printf("  damaged %s\n", oneLine(d.String()))
	}
}

// foreignFormat says which other agent's format the file at path is in, or ""
// for a pi session or anything else.
func foreignFormat(path string) importers.Format {
	head, err := jsonl.FirstLine(path)
	if err != nil {
		return ""
	}
	f, err := importers.Detect(path, head)
	if err != nil {
		return ""
	}
	return f
}

// readForeign reads a rho, Claude Code or Codex file in place, read-only; ok is
// false for any other file.
func readForeign(path string) (l *session.Log, ok bool, err error) {
	if foreignFormat(path) == "" {
		return nil, false, nil
	}
	s, err := importers.ReadFile(path)
	if err != nil {
		return nil, true, fmt.Errorf("read %s: %w", path, err)
	}
	return s.Log(), true, nil
}

// refuseForeign keeps writing commands off other agents' files.
func refuseForeign(path string) error {
	if f := foreignFormat(path); f != "" {
		return fmt.Errorf("%s is a %s session, which arbor only reads; run 'arbor import %s' and work on the imported copy", path, f, path)
	}
	return nil
}

// fsckForeign checks another agent's file the way its reader sees it: the
// lines it could not read. ok is false for any other file.
func fsckForeign(ios *IO, g *Global, path string) (ok bool, err error) {
	f := foreignFormat(path)
	if f == "" {
		return false, nil
	}
	s, err := importers.ReadFile(path)
	if err != nil {
		return true, fmt.Errorf("read %s: %w", path, err)
	}
	if g.JSON {
		damage := s.Damage
		if damage == nil {
			damage = []importers.LineError{}
		}
		if err := ios.JSON(map[string]any{"path": path, "format": f, "ok": len(damage) == 0, "stats": s.Stats, "damage": damage}); err != nil {
			return true, err
		}
	} else {
		state := "ok"
		if len(s.Damage) > 0 {
			state = "damaged"
		}
		ios.Printf("%s: %s (%s session, read in place; %d lines, %d entries)\n", path, state, f, s.Stats.Lines, len(s.Lines))
		for _, d := range s.Damage {
			ios.Printf("  %s\n", oneLine(d.String()))
		}
	}
	if len(s.Damage) > 0 {
		return true, fmt.Errorf("%s has %d unreadable lines; arbor reads the rest and never writes to it", path, len(s.Damage))
	}
	return true, nil
}
