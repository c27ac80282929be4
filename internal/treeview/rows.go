package treeview

import (
	"strings"

	"github.com/arborlog/arbor/session"
)

// Style is how a Span of a Line is coloured on a terminal.
type Style uint8

// The styles of a row's spans.
const (
	Plain Style = iota
	Dim
	Accent
	Success
	Warning
	Muted
	Failure
	Special
)

// Span is a run of a row drawn in one style.
type Span struct {
	Style Style
	Text  string // as the session has it: front ends print it through internal/termtext
}

// Line is one row, kept as styled spans so a front end can cut it to its width
// before it adds colour.
type Line []Span

// Add appends a span.
func (ln *Line) Add(s Style, text string) { *ln = append(*ln, Span{s, text}) }

// Row is one visible entry in drawing order: the node, the box-drawing prefix
// that hangs it from its parent, and how many visible entries hang from it.
type Row struct {
	Node   *session.TreeNode
	Prefix string
	Kids   int   // visible children (folded or not)
	i      int32 // its row in View.rows
}

// Lines draws the whole view, one Line per visible entry (as Each, kept).
func (v *View) Lines() []Line {
	var out []Line
	v.walk(nil, func(r Row) { out = append(out, v.Line(r)) })
	return out
}

// Each draws the rows one at a time, in order, with box-drawing branches. A
// chain without branches stays in one column; a branch point indents its
// children under ├─ and └─. Only one row is held at a time: the Line given to
// draw is reused for the next row once draw returns.
func (v *View) Each(draw func(Line)) {
	var ln Line
	var ids idTexts
	v.walk(nil, func(r Row) {
		ln = v.appendLine(ln[:0], r, ids.text(r.Node.Entry.ID))
		draw(ln)
	})
}

// idTexts makes the "id  " texts of the rows Each draws, cut from shared
// buffers rather than allocated one a row. A text is never written again once
// made (a strings.Builder's String), so a caller may keep it.
type idTexts struct{ b strings.Builder }

func (t *idTexts) text(id string) string {
	if t.b.Cap()-t.b.Len() < len(id)+2 {
		t.b = strings.Builder{} // the texts made so far keep the old buffer
		t.b.Grow(max(16<<10, len(id)+2))
	}
	start := t.b.Len()
	t.b.WriteString(id)
	t.b.WriteString("  ")
	return t.b.String()[start:]
}

// Rows lists the visible entries in drawing order, as Each draws them. The
// entries below a node for which folded returns true are left out.
func (v *View) Rows(folded func(*session.TreeNode) bool) []Row {
	return v.AppendRows(make([]Row, 0, len(v.rows)), folded)
}

// AppendRows is Rows appended to dst: a front end that lays the rows out
// again (a fold, a search cleared) reuses the array of its last layout
// rather than leaving it, a million rows, to the collector.
func (v *View) AppendRows(dst []Row, folded func(*session.TreeNode) bool) []Row {
	v.walk(folded, func(r Row) { dst = append(dst, r) })
	return dst
}

// walk visits the rows in order with their prefixes, skipping the rows below
// a folded one.
func (v *View) walk(folded func(*session.TreeNode) bool, visit func(Row)) {
	// conts[i] is what the rows below row i are indented by; seen[i] counts
	// the rows so far that hang from row i.
	conts := make([]string, len(v.rows))
	seen := make([]int32, len(v.rows))
	topSeen := 0
	for i := 0; i < len(v.rows); i++ {
		r := &v.rows[i]
		kids, nth, cont := v.topKids, int32(topSeen), ""
		if r.parent < 0 {
			topSeen++
		} else {
			kids, nth, cont = v.rows[r.parent].kids, seen[r.parent], conts[r.parent]
			seen[r.parent]++
		}
		self := cont
		switch {
		case kids == 1:
		case nth == kids-1:
			self, cont = v.indent(cont, "└─ "), v.indent(cont, "   ")
		default:
			self, cont = v.indent(cont, "├─ "), v.indent(cont, "│  ")
		}
		conts[i] = cont
		visit(Row{Node: r.n, Prefix: self, Kids: int(r.kids), i: int32(i)})
		if folded != nil && r.kids > 0 && folded(r.n) {
			// Rows come in drawing order, so the rows below this one follow
			// it, and they are exactly those that hang from it or from them.
			for top := int32(i); i+1 < len(v.rows) && v.rows[i+1].parent >= top; {
				i++
			}
		}
	}
}

// OnPath reports whether e is on the path from the root to the leaf.
func (v *View) OnPath(e *session.Entry) bool {
	v.pathOnce.Do(func() {
		v.onPath = make(map[*session.Entry]bool, len(v.path))
		for _, p := range v.path {
			v.onPath[p] = true
		}
	})
	return v.onPath[e]
}

// LeafMark is the visible entry that stands for the leaf (the leaf, or the
// nearest shown entry above a hidden leaf); nil before the first entry.
func (v *View) LeafMark() *session.TreeNode { return v.leafMark }

// Says is what a row's entry says, as its Line shows it after the marks.
func (v *View) Says(r Row) Line {
	var ln Line
	v.said(&ln, r.i)
	return ln
}

// indent adds one level to an indentation. A row is cut at the width, so an
// indentation that already reaches past it shows the same however deep it
// goes: it stops growing there, and a tree branching at every entry costs no
// more than a chain.
func (v *View) indent(cont, level string) string {
	if v.width > 0 && len(cont) > 3*(v.width+3) { // each column of an indentation is at most 3 bytes
		return cont
	}
	return cont + level
}

// Line is one row drawn: leaf mark, id, branch lines, active-path bullet,
// cursor names, label, then what the entry says.
func (v *View) Line(row Row) Line {
	return v.appendLine(make(Line, 0, 7), row, row.Node.Entry.ID+"  ") // marks, and a description of two spans (rarely more)
}

// appendLine is Line, appended to ln; idText is the row's id and two spaces.
func (v *View) appendLine(ln Line, row Row, idText string) Line {
	r := &v.rows[row.i]
	n, prefix := r.n, row.Prefix
	if n == v.leafMark {
		ln.Add(Accent, "› ")
	} else {
		ln.Add(Plain, "  ")
	}
	ln.Add(Dim, idText)
	ln.Add(Dim, prefix)
	if r.flags&rowOnPath != 0 {
		ln.Add(Accent, "• ")
	}
	for _, c := range v.tags[n] {
		ln.Add(Special, "@"+c+" ")
	}
	if n.Label != "" {
		ln.Add(Warning, "["+n.Label+"] ")
	}
	v.said(&ln, row.i)
	return ln
}
