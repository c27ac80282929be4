package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
)

// previewEntries is how many of the last entries of the active branch a
// preview keeps.
const previewEntries = 12

// preview is what the picker shows of the selected session: its header and
// the end of its active branch, described as the tree describes entries.
type preview struct {
	loading bool
	err     error
	id, cwd string
	created string
	entries int
	cursors int
	last    []treeview.Line // oldest first
}

type previewMsg struct {
	path string
	p    preview
}

// previewCache loads previews in the background, one file at a time per
// request, and keeps the ones it loaded.
type previewCache struct {
	st    *store
	byKey map[string]*preview
}

func newPreviewCache(st *store) *previewCache {
	return &previewCache{st: st, byKey: map[string]*preview{}}
}

func (c *previewCache) busy() bool {
	for _, p := range c.byKey {
		if p.loading {
			return true
		}
	}
	return false
}

func (c *previewCache) forget(path string) { delete(c.byKey, path) }

// want returns the command that loads path's preview, or nil when it is
// loaded or on its way.
func (c *previewCache) want(path string) tea.Cmd {
	if _, ok := c.byKey[path]; ok {
		return nil
	}
	if len(c.byKey) > 256 {
		for k, p := range c.byKey {
			if !p.loading {
				delete(c.byKey, k)
			}
		}
	}
	c.byKey[path] = &preview{loading: true}
	return func() tea.Msg { return previewMsg{path: path, p: loadPreview(path)} }
}

func (c *previewCache) done(m previewMsg) { c.byKey[m.path] = &m.p }

func loadPreview(path string) preview {
	l, err := readSession(path)
	if err != nil {
		return preview{err: err}
	}
	h := l.Header()
	p := preview{id: h.ID, cwd: h.Cwd, created: h.Timestamp, entries: l.Len(), cursors: len(l.Cursors())}
	leaf := l.Leaf()
	if leaf == nil {
		return p
	}
	v := treeview.New(l.Tree(), l, leaf, treeview.FilterDefault, 0)
	branch := l.PathTo(leaf.ID)
	for i := len(branch) - 1; i >= 0 && len(p.last) < previewEntries; i-- {
		e := branch[i]
		if e.IsMarker() {
			continue
		}
		switch e.Type {
		case session.TypeMessage, session.TypeCustomMessage, session.TypeCompaction, session.TypeBranchSummary:
			p.last = append(p.last, v.Describe(e))
		}
	}
	for i, j := 0, len(p.last)-1; i < j; i, j = i+1, j-1 {
		p.last[i], p.last[j] = p.last[j], p.last[i]
	}
	return p
}

// previewLines draws the selected session's preview in n rows.
func (p *Picker) previewLines(n int) []string {
	r := p.selected()
	if r == nil || n <= 0 {
		return nil
	}
	pv := p.previews.byKey[r.info.Path]
	switch {
	case pv == nil || pv.loading:
		return []string{p.spin.View() + " " + p.th.muted.Render("Loading the preview")}
	case pv.err != nil:
		return []string{p.th.failure.Render(oneLine(pv.err.Error()))}
	}
	head := fmt.Sprintf("%s · %d entries", clean(pv.id), pv.entries)
	if pv.cursors > 1 {
		head += fmt.Sprintf(" · %d cursors", pv.cursors)
	}
	head += " · created " + clean(pv.created)
	out := []string{p.th.muted.Render(head), p.th.muted.Render(clean(shortHome(pv.cwd)))}
	last := pv.last
	if room := n - len(out); len(last) > room {
		last = last[len(last)-max(room, 0):]
	}
	for _, ln := range last {
		out = append(out, p.th.line(ln))
	}
	if len(pv.last) == 0 {
		out = append(out, p.th.muted.Render("(no messages)"))
	}
	return out
}

// line draws a tree row's spans, each cleaned, in the theme's colours.
func (t theme) line(ln treeview.Line) string {
	var b strings.Builder
	for _, s := range ln {
		b.WriteString(t.tree[s.Style].Render(oneLineKeep(s.Text)))
	}
	return b.String()
}

// oneLineKeep cleans a span for one row, keeping its spacing (branch drawing
// and separators) but not its line breaks.
func oneLineKeep(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	}
	return clean(s)
}
