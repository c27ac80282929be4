package treeview

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// Filter names the entries a tree view shows, after pi's tree selector.
type Filter string

const (
	FilterDefault Filter = "default" // hides bookkeeping entries and tool-call-only assistant messages
	FilterNoTools Filter = "no-tools"
	FilterUser    Filter = "user"
	FilterLabeled Filter = "labeled"
	FilterAll     Filter = "all"
)

// Filters lists every filter, in the order a user cycles through them.
var Filters = []Filter{FilterDefault, FilterNoTools, FilterUser, FilterLabeled, FilterAll}

// ParseFilter returns the filter named s; the error lists the names.
func ParseFilter(s string) (Filter, error) {
	for _, f := range Filters {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Filters))
	for i, f := range Filters {
		names[i] = string(f)
	}
	return "", fmt.Errorf("--filter must be one of %s, not %q", strings.Join(names, ", "), s)
}

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
	args map[string]any
	raw  []byte // the arguments as written, for tools shown as JSON
}

// viewRow is one visible entry.
type viewRow struct {
	n      *session.TreeNode
	parent int32 // row this one hangs from: its nearest visible ancestor that is not a marker; -1 at the top
	kids   int32 // rows hanging from this one
	onPath bool  // the entry is on the path to the leaf
	desc   Line  // what the entry says (a tool result's is made when drawn, once every call is known)
	result *resultView
}

// resultView is what a tool result's row needs.
type resultView struct {
	callID, toolName string
	isError          bool
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
		calls:  map[string]string{},
		tags:   map[*session.TreeNode][]string{},
		names:  map[string]string{},
	}
	v.home, _ = os.UserHomeDir()
	v.rows = make([]viewRow, 0, l.Len()) // at most one row an entry: one allocation rather than doublings
	if leaf != nil {
		v.path = l.Branch(leaf.ID)
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
	// Rows are made in the order they are drawn: a visible entry's row comes
	// after its ancestors' and after the rows of every earlier sibling's subtree.
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := it.n.Entry
		v.Total++
		m, _ := v.message(e)
		v.noteCalls(m)
		anc, vis := it.anc, it.vis
		if v.visibleMsg(it.n, m) {
			v.Shown++
			if it.anc < 0 {
				v.topKids++
			} else {
				v.rows[it.anc].kids++
			}
			r := viewRow{n: it.n, parent: it.anc, onPath: v.pathAt(e, it.depth)}
			if m != nil && m.Role == session.RoleToolResult {
				r.result = &resultView{callID: m.ToolCallID, toolName: m.ToolName, isError: m.IsError}
			} else {
				v.describe(&r.desc, e, m)
			}
			v.rows = append(v.rows, r)
			if !e.IsMarker() {
				anc = int32(len(v.rows) - 1)
			}
			vis = int32(len(v.rows) - 1)
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

// message decodes a message entry; ok is false when it is not a message or is unreadable.
func (v *View) message(e *session.Entry) (*msgView, bool) {
	if e.Type != session.TypeMessage {
		return nil, false
	}
	if m, ok := lazyUser(e); ok {
		return m, true
	}
	if m, ok := quickMessage(e); ok {
		return m, true
	}
	return decodeMessage(e)
}

// decodeMessage is message through the JSON decoder.
func decodeMessage(e *session.Entry) (*msgView, bool) {
	if e.Role() == session.RoleToolResult {
		// The content is skipped, not copied.
		var w struct {
			Message msgHead `json:"message"`
		}
		if e.Decode(&w) != nil {
			return nil, false
		}
		if w.Message.Role == session.RoleToolResult {
			return &msgView{msgHead: w.Message}, true
		}
	}
	var w struct {
		Message struct {
			msgHead `json:",inline"`
			Content jsontext.Value `json:"content"`
		} `json:"message"`
	}
	if e.Decode(&w) != nil {
		return nil, false
	}
	m := &msgView{msgHead: w.Message.msgHead}
	if m.Role != session.RoleToolResult && len(w.Message.Content) > 0 {
		_ = m.content.UnmarshalJSON(w.Message.Content) // a valid value: what encoding/json would hand it
	}
	return m, true
}

// visible applies the filter to one entry.
func (v *View) visible(n *session.TreeNode) bool {
	m, _ := v.message(n.Entry)
	return v.visibleMsg(n, m)
}

// visibleMsg is visible with the entry's message already decoded (nil when it
// has none or it is unreadable).
func (v *View) visibleMsg(n *session.TreeNode, m *msgView) bool {
	e := n.Entry
	switch v.filter {
	case FilterAll:
		return true
	case FilterLabeled:
		return n.Label != ""
	case FilterUser:
		return e.Role() == session.RoleUser
	}
	switch e.Type {
	case session.TypeLabel, session.TypeCustom, session.TypeModelChange, session.TypeThinkingLevelChange, session.TypeSessionInfo,
		session.TypeContextEdit, session.TypeUsage: // as pi 1.6.0 hides them (usage entries even more: everywhere but --filter all)
		return false
	}
	if v.filter == FilterNoTools && e.Role() == session.RoleToolResult {
		return false
	}
	if e.Role() == session.RoleAssistant && (v.leaf == nil || e.ID != v.leaf.ID) {
		if m != nil && !hasText(m.content) && !failed(m.StopReason) {
			return false
		}
	}
	return true
}

func hasText(c session.Content) bool {
	if c.IsString {
		return strings.TrimSpace(c.String) != ""
	}
	for _, b := range c.Blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			return true
		}
	}
	return false
}

// failed reports an assistant message that ended other than by stopping or
// calling a tool: an error, an abort, or running out of output tokens.
func failed(stopReason string) bool {
	return stopReason != "" && stopReason != "stop" && stopReason != "toolUse"
}

// Style is how a Span of a Line is coloured on a terminal.
type Style int

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
	v.walk(nil, func(r Row) {
		ln = v.appendLine(ln[:0], r)
		draw(ln)
	})
}

// Rows lists the visible entries in drawing order, as Each draws them. The
// entries below a node for which folded returns true are left out.
func (v *View) Rows(folded func(*session.TreeNode) bool) []Row {
	out := make([]Row, 0, len(v.rows))
	v.walk(folded, func(r Row) { out = append(out, r) })
	return out
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
	v.said(&ln, &v.rows[r.i])
	return ln
}

// Describe is what any entry of the session says, visible or not, as a row
// would show it after the marks.
func (v *View) Describe(e *session.Entry) Line {
	var ln Line
	m, _ := v.message(e)
	if m != nil && m.Role == session.RoleToolResult {
		v.describeResult(&ln, &resultView{callID: m.ToolCallID, toolName: m.ToolName, isError: m.IsError})
	} else {
		v.describe(&ln, e, m)
	}
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
	return v.appendLine(make(Line, 0, 5+len(v.rows[row.i].desc)), row)
}

// appendLine is Line, appended to ln.
func (v *View) appendLine(ln Line, row Row) Line {
	r := &v.rows[row.i]
	n, prefix := r.n, row.Prefix
	if n == v.leafMark {
		ln.Add(Accent, "› ")
	} else {
		ln.Add(Plain, "  ")
	}
	ln.Add(Dim, n.Entry.ID+"  ")
	ln.Add(Dim, prefix)
	if r.onPath {
		ln.Add(Accent, "• ")
	}
	for _, c := range v.tags[n] {
		ln.Add(Special, "@"+c+" ")
	}
	if n.Label != "" {
		ln.Add(Warning, "["+n.Label+"] ")
	}
	v.said(&ln, r)
	return ln
}

// said adds what a row's entry says.
func (v *View) said(ln *Line, r *viewRow) {
	if r.result != nil {
		v.describeResult(ln, r.result)
	} else {
		*ln = append(*ln, r.desc...)
	}
}

// describe adds what an entry says, in the words pi's tree selector uses.
func (v *View) describe(ln *Line, e *session.Entry, m *msgView) {
	var f struct {
		CustomType    string          `json:"customType"`
		Content       session.Content `json:"content"`
		Summary       string          `json:"summary"`
		TokensBefore  float64         `json:"tokensBefore"`
		ModelID       string          `json:"modelId"`
		ThinkingLevel string          `json:"thinkingLevel"`
		Label         *string         `json:"label"`
		Name          *string         `json:"name"`
		TargetID      string          `json:"targetId"`
		Replacement   *struct{}       `json:"replacement"`
		Kind          string          `json:"kind"`
		Provider      string          `json:"provider"`
		Model         string          `json:"model"`
	}
	if e.Type != session.TypeMessage {
		_ = e.Decode(&f)
	}
	switch e.Type {
	case session.TypeMessage:
		v.describeMessage(ln, m)
	case session.TypeCustomMessage:
		ln.Add(Special, "["+f.CustomType+"]: ")
		ln.Add(Plain, v.flatText(contentPrefix(f.Content)))
	case session.TypeCompaction:
		ln.Add(Special, fmt.Sprintf("[compaction: %dk tokens]", int(f.TokensBefore/1000+0.5)))
		// What it covers, so a user sees what the summary stands for ('arbor show' lists it).
		if cov, err := compaction.Covers(v.log, e.ID); err == nil {
			kept := "keeps nothing before it"
			if len(cov.Kept) > 0 {
				kept = "keeps from " + cov.FirstKeptEntryID
			}
			ln.Add(Muted, fmt.Sprintf(" replaces %d entries, %s", len(cov.Replaced), kept))
		}
	case session.TypeBranchSummary:
		ln.Add(Warning, "[branch summary]: ")
		ln.Add(Plain, v.flat(strings.TrimPrefix(f.Summary, compaction.BranchSummaryPreamble)))
	case session.TypeModelChange:
		ln.Add(Muted, "[model: "+f.ModelID+"]")
	case session.TypeThinkingLevelChange:
		ln.Add(Muted, "[thinking: "+f.ThinkingLevel+"]")
	case session.TypeCustom:
		if e.IsMarker() {
			ln.Add(Muted, v.markerText(e))
		} else {
			ln.Add(Muted, "[custom: "+f.CustomType+"]")
		}
	case session.TypeLabel:
		if f.Label == nil || *f.Label == "" {
			ln.Add(Muted, "[label: (cleared)]")
		} else {
			ln.Add(Muted, "[label: "+*f.Label+"]")
		}
	case session.TypeSessionInfo:
		if f.Name == nil || strings.TrimSpace(*f.Name) == "" {
			ln.Add(Muted, "[title: (cleared)]")
		} else {
			ln.Add(Muted, "[title: "+strings.TrimSpace(*f.Name)+"]")
		}
	case session.TypeContextEdit:
		if f.Replacement == nil {
			ln.Add(Muted, "[edit: omit "+f.TargetID+"]")
		} else {
			ln.Add(Muted, "[edit: replace "+f.TargetID+"]")
		}
	case session.TypeUsage:
		ln.Add(Muted, "[usage: "+f.Kind+" "+f.Provider+"/"+f.Model+"]")
	default:
		ln.Add(Muted, "["+e.Type+"]")
	}
}

// markerText says what one of arbor's markers records (SPEC §6.2, §6.3).
func (v *View) markerText(e *session.Entry) string {
	m, _ := e.Marker()
	cur := m.Cursor
	if name := v.names[cur]; name != "" {
		cur = name
	}
	s := "[" + m.Kind + " @" + cur
	switch m.Kind {
	case session.MarkerCursor:
		if m.Name != nil {
			s += fmt.Sprintf(" named %q", *m.Name)
		}
	case session.MarkerLeaf:
		if m.Cleared {
			s += " cleared"
		} else {
			s += " moved here"
		}
		if m.From != nil {
			s += " from " + *m.From
		}
	case session.MarkerResolution:
		s += " " + m.Target + " " + m.Level
	}
	return s + "]"
}

func (v *View) describeMessage(ln *Line, d *msgView) {
	if d == nil {
		ln.Add(Failure, "[unreadable message]")
		return
	}
	switch d.Role {
	case session.RoleUser:
		ln.Add(Accent, "user: ")
		if d.text != nil {
			t := v.flatText(d.text)
			if t == "" && d.image() {
				t = "[image]"
			}
			ln.Add(Plain, t)
			break
		}
		ln.Add(Plain, v.contentText(d.content))
	case session.RoleAssistant:
		ln.Add(Success, "assistant: ")
		switch text := v.contentText(d.content); {
		case text != "":
			ln.Add(Plain, text)
		case d.StopReason == "aborted":
			ln.Add(Muted, "(aborted)")
		case d.ErrorMessage != "":
			ln.Add(Failure, v.flat(d.ErrorMessage))
		default:
			ln.Add(Muted, v.callsText(d))
		}
	case session.RoleToolResult:
		v.describeResult(ln, &resultView{callID: d.ToolCallID, toolName: d.ToolName, isError: d.IsError})
	case session.RoleBashExecution:
		ln.Add(Muted, "[bash]: "+v.flat(d.Command))
	default:
		ln.Add(Muted, "["+d.Role+"]")
	}
}

// describeResult shows a tool result as the call it answers.
func (v *View) describeResult(ln *Line, r *resultView) {
	s := Muted
	if r.isError {
		s = Failure
	}
	if c, ok := v.calls[r.callID]; ok {
		ln.Add(s, c)
	} else {
		name := r.toolName
		if name == "" {
			name = "tool"
		}
		ln.Add(s, "["+name+"]")
	}
	if r.isError {
		ln.Add(Failure, " (error)")
	}
}

// callsText names the tool calls of an assistant message without text (shown
// only when it is the leaf, or with --filter all).
func (v *View) callsText(d *msgView) string {
	var names []string
	for _, b := range d.content.Blocks {
		if b.Type == "toolCall" {
			names = append(names, v.callText(ParseCall(b)))
		}
	}
	if len(names) == 0 {
		return "(no content)"
	}
	return strings.Join(names, " ")
}

// contentText is a message's text on one line; an image-only message says so.
func (v *View) contentText(c session.Content) string {
	if t := v.flatText(contentPrefix(c)); t != "" {
		return t
	}
	for _, b := range c.Blocks {
		if b.Type == "image" {
			return "[image]"
		}
	}
	return ""
}

// prefixFunc gives at least the first n bytes of a text (cut at a character),
// or all of it, saying which; n < 0 asks for all of it.
type prefixFunc func(n int) (string, bool)

// stringPrefix is a prefixFunc of s.
func stringPrefix(s string) prefixFunc {
	return func(n int) (string, bool) {
		if n < 0 || n >= len(s) {
			return s, true
		}
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n], false
	}
}

// contentPrefix is a prefixFunc of c.Text(""), which it joins only as far as asked.
func contentPrefix(c session.Content) prefixFunc {
	if c.IsString {
		return stringPrefix(c.String)
	}
	return func(n int) (string, bool) {
		var b strings.Builder
		for _, blk := range c.Blocks {
			if blk.Type != "text" {
				continue
			}
			if n >= 0 && b.Len()+len(blk.Text) > n {
				s, _ := stringPrefix(blk.Text)(n - b.Len())
				b.WriteString(s)
				return b.String(), false
			}
			b.WriteString(blk.Text)
		}
		return b.String(), true
	}
}

// flat is Flat(s) as far as a row shows it.
func (v *View) flat(s string) string { return v.flatText(stringPrefix(s)) }

// flatText is flat of the whole text, or, when a row of v.width columns cannot
// show all of that, flat of a prefix that is wider than the row, which render
// cuts at the same place. The prefix doubles until it is wide enough, so a 50
// MB message costs a few hundred bytes and a text of zero-width characters
// costs no more than flat of the whole of it.
func (v *View) flatText(text prefixFunc) string {
	if v.width <= 0 {
		s, _ := text(-1)
		return Flat(s)
	}
	for n := 4 * (v.width + 3); ; n *= 2 {
		s, whole := text(n)
		f := Flat(s)
		if whole {
			return f
		}
		// A printed character is never narrower than the character itself.
		if termtext.Width(f) >= v.width+3 {
			return strings.Clone(f) // not a window on the whole text, which can then go
		}
	}
}

// ContentText is a message's whole text on one line; an image-only message says so.
func ContentText(c session.Content) string { return (&View{}).contentText(c) }

// Flat puts text on one line: runs of white space become one space.
// It is strings.Join(strings.Fields(s), " ") in one pass, and s itself when
// it is already flat.
func Flat(s string) string {
	if isFlat(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

// isFlat reports whether s has no white space but single spaces between words.
func isFlat(s string) bool {
	space := true // at the start, a space would be leading
	for _, r := range s {
		if unicode.IsSpace(r) {
			if r != ' ' || space {
				return false
			}
			space = true
		} else {
			space = false
		}
	}
	return !space || s == ""
}

func ParseCall(b session.Block) ToolCall {
	c := ToolCall{name: b.Name, raw: b.Arguments}
	_ = json.Unmarshal(b.Arguments, &c.args)
	return c
}

// callText is c.String() with the home folder looked up once per view.
func (v *View) callText(c ToolCall) string { return c.show(v.home) }

// String shows a tool call the way pi's tree selector does.
func (c ToolCall) String() string {
	home, _ := os.UserHomeDir()
	return c.show(home)
}

// show is String with the home folder given.
func (c ToolCall) show(home string) string {
	name, args := c.name, c.args
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := args[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	path := func(keys ...string) string {
		p := str(keys...)
		if home != "" && strings.HasPrefix(p, home) {
			return "~" + p[len(home):]
		}
		return p
	}
	switch name {
	case "read":
		p := path("path", "file_path")
		off, hasOff := args["offset"].(float64)
		lim, hasLim := args["limit"].(float64)
		if hasOff || hasLim {
			if !hasOff {
				off = 1
			}
			p += fmt.Sprintf(":%d", int(off))
			if hasLim {
				p += fmt.Sprintf("-%d", int(off+lim-1))
			}
		}
		return "[read: " + p + "]"
	case "write", "edit":
		return "[" + name + ": " + path("path", "file_path") + "]"
	case "bash":
		cmd := Flat(str("command"))
		if r := []rune(cmd); len(r) > 50 {
			cmd = string(r[:50]) + "..."
		}
		return "[bash: " + cmd + "]"
	case "grep":
		p := path("path")
		if p == "" {
			p = "."
		}
		return "[grep: /" + str("pattern") + "/ in " + p + "]"
	case "find":
		p := path("path")
		if p == "" {
			p = "."
		}
		return "[find: " + str("pattern") + " in " + p + "]"
	case "ls":
		p := path("path")
		if p == "" {
			p = "."
		}
		return "[ls: " + p + "]"
	}
	s := Flat(string(c.raw))
	if s == "" {
		s = "{}"
	}
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "..."
	}
	return "[" + name + ": " + s + "]"
}
