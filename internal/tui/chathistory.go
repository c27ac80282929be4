package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/termtext"
)

// The editor's history also holds the prompts of the project's recent
// sessions, read in the background when the chat opens.
const (
	recentSessions = 20      // the newest sessions of the folder read for it
	recentMaxBytes = 8 << 20 // a larger session is not read for it (its own prompts still are, when open)
	maxRecent      = 500     // the most prompts of other sessions it keeps
)

// recentPrompts are one session's prompts, oldest first.
type recentPrompts struct {
	path    string
	prompts []string
}

// recentLoadedMsg carries the recent sessions' prompts, newest session first.
type recentLoadedMsg struct{ sessions []recentPrompts }

// loadRecent reads the prompts of the folder's recent sessions in the
// background (nil without a catalog).
func (c *Chat) loadRecent() tea.Cmd {
	if c.st == nil {
		return nil
	}
	st, scope := c.st, c.opt.Scope
	return func() tea.Msg { return recentLoadedMsg{st.recentPrompts(scope)} }
}

// recentPrompts lists the newest sessions of scope and reads their prompts.
// A session that cannot be read is left out: the history is a convenience.
func (s *store) recentPrompts(scope catalog.Scope) []recentPrompts {
	infos, err := s.list(scope)
	if err != nil {
		return nil
	}
	var out []recentPrompts
	for _, in := range infos {
		if len(out) == recentSessions {
			break
		}
		if in.SizeBytes > recentMaxBytes {
			continue
		}
		l, err := readSession(in.Path)
		if err != nil {
			continue
		}
		if p := userPrompts(l); len(p) > 0 {
			out = append(out, recentPrompts{in.Path, p})
		}
	}
	return out
}

// mergeHistory is the editor's history: the prompts of the recent sessions
// (newest first, without the open session at current), then the open
// session's own, so Up walks back through this session and then the ones
// before it. Prompts of other sessions appear once, at their newest, and not
// at all when the open session has them; at most maxRecent of them.
func mergeHistory(recent []recentPrompts, current string, own []string) []string {
	seen := map[string]bool{}
	for _, p := range own {
		seen[p] = true
	}
	var older []string // newest first
	for _, r := range recent {
		if r.path == current {
			continue
		}
		for i := len(r.prompts) - 1; i >= 0 && len(older) < maxRecent; i-- {
			if p := r.prompts[i]; !seen[p] {
				seen[p] = true
				older = append(older, p)
			}
		}
	}
	slices.Reverse(older)
	return append(older, own...)
}

// editable is a session's text made safe to put in the editor: what a
// terminal would act on is shown escaped (newlines and tabs stay).
func editable(s string) string { return termtext.Block(s) }
