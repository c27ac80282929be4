package treeview

import (
	"os"
	"sync"

	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// View is what `arbor tree` and the browser's tree draw: the session's tree
// reduced to the entries a filter keeps, each attached to its nearest visible
// ancestor.
//
// It holds one small row per visible entry and no decoded message: what an
// entry says is worked out once, as the tree is walked, and kept only as far
// as the width shows it, so a session of a million entries or one of a 50 MB
// message is drawn in memory and time proportional to what is printed.
type View struct {
	log      *session.Log
	filter   Filter
	width    int                     // rows are cut to this many columns; 0: not cut
	leaf     *session.Entry          // the leaf whose path is marked; nil before the first entry
	path     []*session.Entry        // root→leaf: the entry at depth d of the tree is on it if it is path[d]
	onPath   map[*session.Entry]bool // made for OnPath, once, when asked
	pathOnce sync.Once
	tags     map[*session.TreeNode][]string // names of the cursors whose leaf is this entry or hidden below it (only with several cursors)
	calls    map[string]string              // tool call id → the call as shown, to name tool results
	names    map[string]string              // cursor id → name
	home     string                         // shown as ~ in paths
	rows     []viewRow                      // the visible entries, in display order
	topKids  int32                          // rows at the top level
	Shown    int                            // entries the filter keeps
	Total    int                            // entries in the session
	leafMark *session.TreeNode              // the visible entry that stands for the leaf
}

// ToolCall is a tool call as the tree names it ("[read: a.go:1-20]").
type ToolCall struct {
	name string
	kind toolargs.Kind // "" for a tool toolargs does not know: shown as JSON
	args callArgs
	raw  []byte // the arguments as written, for tools shown as JSON
}

// viewRow is one visible entry. What it says is kept inline, as the texts
// and styles of its spans (describe makes at most two): a million rows are
// one allocation, not one a row.
type viewRow struct {
	n      *session.TreeNode
	text   [2]string // desc's spans; for a tool result, the call id and tool name (its row is made when drawn, once every call is known)
	parent int32     // row this one hangs from: its nearest visible ancestor that is not a marker; -1 at the top
	kids   int32     // rows hanging from this one
	style  [2]Style
	spans  uint8 // how many of text are desc's spans
	flags  uint8 // rowOnPath, rowResult, rowError
}

const (
	rowOnPath = 1 << iota // the entry is on the path to the leaf
	rowResult             // a tool result: text holds its call id and tool name
	rowError              // a tool result that is an error
)

// setDesc keeps ln, a description of at most two spans, as the row's
// (checkTreeView: every row says what Describe says of its entry).
func (r *viewRow) setDesc(ln Line) {
	for j, s := range ln {
		r.text[j], r.style[j] = s.Text, s.Style
	}
	r.spans = uint8(len(ln))
}

// said adds what a row's entry says.
func (v *View) said(ln *Line, i int32) {
	r := &v.rows[i]
	switch {
	case r.flags&rowResult != 0:
		v.describeResult(ln, r.text[0], r.text[1], r.flags&rowError != 0)
	default:
		for j := range r.spans {
			ln.Add(r.style[j], r.text[j])
		}
	}
}

// New selects and orders the visible entries of roots. Branches that
// hold the leaf come first, as in pi's tree selector. Markers are transparent:
// the children of a marker hang from the marker's nearest visible ancestor
// that is not a marker (SPEC §6.2), even when the marker itself is shown.
// Texts are kept as far as a row of width columns shows them (0: whole).
func New(roots []*session.TreeNode, l *session.Log, leaf *session.Entry, filter Filter, width int) *View {
	v := &View{
		log:    l,
		filter: filter,
		width:  width,
		leaf:   leaf,
		tags:   map[*session.TreeNode][]string{},
		names:  map[string]string{},
	}
	v.home, _ = os.UserHomeDir()
	v.rows = make([]viewRow, 0, l.Len()) // at most one row an entry: one allocation rather than doublings
	results := 0
	for _, e := range l.Entries() {
		if e.Role() == session.RoleToolResult {
			results++
		}
	}
	v.calls = make(map[string]string, results) // about one call a result: a million calls are not rehashed as they come
	if leaf != nil {
		v.path = l.PathTo(leaf.ID)
	}
	cursorsAt := map[string][]string{}
	cs := l.Cursors()
	for _, c := range cs {
		v.names[c.ID] = c.Name
		if c.Leaf != "" && len(cs) > 1 {
			cursorsAt[c.Leaf] = append(cursorsAt[c.Leaf], CursorName(c))
		}
	}
	type item struct {
		n     *session.TreeNode
		anc   int32 // row of the nearest visible non-marker ancestor; -1 at the top
		vis   int32 // row of the nearest visible ancestor, markers included
		depth int   // in the tree: 0 for a root
	}
	var stack []item
	push := func(ns []*session.TreeNode, anc, vis int32, depth int) {
		// Active branch first, then the others in timestamp order; pushed in
		// reverse so they pop in display order.
		if len(ns) == 1 {
			stack = append(stack, item{ns[0], anc, vis, depth})
			return
		}
		ordered := make([]*session.TreeNode, 0, len(ns))
		for _, n := range ns {
			if v.pathAt(n.Entry, depth) {
				ordered = append(ordered, n)
			}
		}
		for _, n := range ns {
			if !v.pathAt(n.Entry, depth) {
				ordered = append(ordered, n)
			}
		}
		for i := len(ordered) - 1; i >= 0; i-- {
			stack = append(stack, item{ordered[i], anc, vis, depth})
		}
	}
	push(roots, -1, -1, 0)
	// One message and one description are read at a time, into these.
	var (
		msg    msgView
		blocks []session.Block
		desc   Line
	)
	// Rows are made in the order they are drawn: a visible entry's row comes
	// after its ancestors' and after the rows of every earlier sibling's subtree.
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := it.n.Entry
		v.Total++
		m := v.message(e, &msg, &blocks)
		v.noteCalls(m)
		anc, vis := it.anc, it.vis
		if v.visibleMsg(it.n, m) {
			v.Shown++
			if it.anc < 0 {
				v.topKids++
			} else {
				v.rows[it.anc].kids++
			}
			v.rows = append(v.rows, viewRow{n: it.n, parent: it.anc})
			i := len(v.rows) - 1
			r := &v.rows[i]
			if v.pathAt(e, it.depth) {
				r.flags |= rowOnPath
			}
			if m != nil && m.Role == session.RoleToolResult {
				r.flags |= rowResult
				if m.IsError {
					r.flags |= rowError
				}
				r.text = [2]string{m.ToolCallID, m.ToolName}
			} else {
				desc = desc[:0]
				v.describe(&desc, e, m)
				r.setDesc(desc)
			}
			if !e.IsMarker() {
				anc = int32(i)
			}
			vis = int32(i)
		}
		// A hidden leaf is shown on the nearest entry above it that is shown.
		if vis >= 0 {
			if leaf != nil && e.ID == leaf.ID {
				v.leafMark = v.rows[vis].n
			}
			if at := cursorsAt[e.ID]; len(at) > 0 {
				v.tags[v.rows[vis].n] = append(v.tags[v.rows[vis].n], at...)
			}
		}
		push(it.n.Children, anc, vis, it.depth+1)
	}
	return v
}

// pathAt reports whether e, at depth in the tree, is on the path to the leaf:
// the path holds one entry at each depth, so no set of a million entries is
// made to tell.
func (v *View) pathAt(e *session.Entry, depth int) bool {
	return depth < len(v.path) && v.path[depth] == e
}

func CursorName(c session.CursorInfo) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// noteCalls remembers the tool calls of an assistant message, so the results
// that answer them can be shown as the call they answer.
func (v *View) noteCalls(m *msgView) {
	if m == nil || m.Role != session.RoleAssistant {
		return
	}
	for _, b := range m.content.Blocks {
		if b.Type == "toolCall" && b.ID != "" {
			v.calls[b.ID] = v.callText(ParseCall(b))
		}
	}
}

// MessageData decodes the whole message of a message entry.
func MessageData(e *session.Entry) (session.MessageData, bool) {
	m, err := e.Message()
	if err != nil {
		return session.MessageData{}, false
	}
	d, err := m.Data()
	return d, err == nil
}

// msgView is what the tree shows of a message. A tool result's content, often
// most of a session's bytes, is skipped rather than decoded.
type msgView struct {
	msgHead
	content session.Content // decoded for every role but toolResult
	// A large user message's text is read only as far as it is shown
	// (lazyUser): then text and image are set and content is not decoded.
	text  prefixFunc
	image func() bool
}

// msgHead is a message's fields but its content.
type msgHead struct {
	Role         string `json:"role"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`
	ToolCallID   string `json:"toolCallId"`
	ToolName     string `json:"toolName"`
	IsError      bool   `json:"isError"`
	Command      string `json:"command"`
}

// message reads a message entry into m and returns it; nil when e is not a
// message or is unreadable. blocks, when not nil, is a slice the content's
// blocks are read into and kept for the next message: m's content is then
// valid only until the next call.
func (v *View) message(e *session.Entry, m *msgView, blocks *[]session.Block) *msgView {
	if e.Type != session.TypeMessage {
		return nil
	}
	*m = msgView{}
	if lazyUser(e, m) || quickMessage(e, m, blocks) || decodeMessage(e, m) {
		return m
	}
	return nil
}

// decodeMessage is message through the JSON decoder.
func decodeMessage(e *session.Entry, m *msgView) bool {
	*m = msgView{}
	if e.Role() == session.RoleToolResult {
		// The content is skipped, not copied.
		var w struct {
			Message msgHead `json:"message"`
		}
		if e.Decode(&w) != nil {
			return false
		}
		if w.Message.Role == session.RoleToolResult {
			m.msgHead = w.Message
			return true
		}
	}
	var w struct {
		Message struct {
			msgHead `json:",inline"`
			Content jsontext.Value `json:"content"`
		} `json:"message"`
	}
	if e.Decode(&w) != nil {
		return false
	}
	m.msgHead = w.Message.msgHead
	if m.Role != session.RoleToolResult && len(w.Message.Content) > 0 {
		_ = m.content.UnmarshalJSON(w.Message.Content) // a valid value: what encoding/json would hand it
	}
	return true
}
