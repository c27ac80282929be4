package treeview

import (
	"encoding/json"
	"fmt"
	"github.com/arborlog/arbor/compaction"
	"os"
	"strings"

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
// ancestor. A View is for one goroutine (it caches decoded messages).
type View struct {
	log      *session.Log
	filter   Filter
	leaf     *session.Entry // the leaf whose path is marked; nil before the first entry
	onPath   map[string]bool
	tags     map[*session.TreeNode][]string // names of the cursors whose leaf is this entry or hidden below it (only with several cursors)
	calls    map[string]ToolCall            // tool call id → the call, to name tool results
	names    map[string]string              // cursor id → name
	msgs     map[*session.Entry]*msgView
	children map[*session.TreeNode][]*session.TreeNode
	roots    []*session.TreeNode
	Shown    int               // entries the filter keeps
	Total    int               // entries in the session
	leafMark *session.TreeNode // the visible entry that stands for the leaf
}

// ToolCall is a tool call as the tree names it ("[read: a.go:1-20]").
type ToolCall struct {
	name string
	args map[string]any
	raw  []byte // the arguments as written, for tools shown as JSON
}

// New selects and orders the visible entries of roots. Branches that
// hold the leaf come first, as in pi's tree selector. Markers are transparent:
// the children of a marker hang from the marker's nearest visible ancestor
// that is not a marker (SPEC §6.2), even when the marker itself is shown.
func New(roots []*session.TreeNode, l *session.Log, leaf *session.Entry, filter Filter) *View {
	v := &View{
		log:      l,
		filter:   filter,
		leaf:     leaf,
		onPath:   map[string]bool{},
		calls:    map[string]ToolCall{},
		children: map[*session.TreeNode][]*session.TreeNode{},
		tags:     map[*session.TreeNode][]string{},
		names:    map[string]string{},
		msgs:     map[*session.Entry]*msgView{},
	}
	if leaf != nil {
		for _, e := range l.Branch(leaf.ID) {
			v.onPath[e.ID] = true
		}
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
		n   *session.TreeNode
		anc *session.TreeNode // nearest visible non-marker ancestor; nil at the top
		vis *session.TreeNode // nearest visible ancestor, markers included
	}
	var stack []item
	push := func(ns []*session.TreeNode, anc, vis *session.TreeNode) {
		// Active branch first, then the others in timestamp order; pushed in
		// reverse so they pop in display order.
		ordered := make([]*session.TreeNode, 0, len(ns))
		for _, n := range ns {
			if v.onPath[n.Entry.ID] {
				ordered = append(ordered, n)
			}
		}
		for _, n := range ns {
			if !v.onPath[n.Entry.ID] {
				ordered = append(ordered, n)
			}
		}
		for i := len(ordered) - 1; i >= 0; i-- {
			stack = append(stack, item{ordered[i], anc, vis})
		}
	}
	push(roots, nil, nil)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := it.n.Entry
		v.Total++
		v.noteCalls(e)
		anc, vis := it.anc, it.vis
		if v.visible(it.n) {
			v.Shown++
			if it.anc == nil {
				v.roots = append(v.roots, it.n)
			} else {
				v.children[it.anc] = append(v.children[it.anc], it.n)
			}
			if !e.IsMarker() {
				anc = it.n
			}
			vis = it.n
		}
		// A hidden leaf is shown on the nearest entry above it that is shown.
		if vis != nil {
			if leaf != nil && e.ID == leaf.ID {
				v.leafMark = vis
			}
			v.tags[vis] = append(v.tags[vis], cursorsAt[e.ID]...)
		}
		push(it.n.Children, anc, vis)
	}
	return v
}

// CursorName names a cursor for a person: its name, else its id.
func CursorName(c session.CursorInfo) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// noteCalls remembers the tool calls of an assistant message, so the results
// that answer them can be shown as the call they answer. Parents are visited
// before their children, so a call is known before its result.
func (v *View) noteCalls(e *session.Entry) {
	if e.Role() != session.RoleAssistant {
		return
	}
	m, ok := v.message(e)
	if !ok {
		return
	}
	for _, b := range m.content.Blocks {
		if b.Type == "toolCall" && b.ID != "" {
			v.calls[b.ID] = ParseCall(b)
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
	Role         string         `json:"role"`
	Content      jsontext.Value `json:"content"`
	StopReason   string         `json:"stopReason"`
	ErrorMessage string         `json:"errorMessage"`
	ToolCallID   string         `json:"toolCallId"`
	ToolName     string         `json:"toolName"`
	IsError      bool           `json:"isError"`
	Command      string         `json:"command"`

	content session.Content // decoded for every role but toolResult
}

// message decodes a message entry once; ok is false when it is unreadable.
func (v *View) message(e *session.Entry) (*msgView, bool) {
	if m, ok := v.msgs[e]; ok {
		return m, m != nil
	}
	var w struct {
		Message msgView `json:"message"`
	}
	m := &w.Message
	if e.Decode(&w) != nil {
		m = nil
	} else if m.Role != session.RoleToolResult && len(m.Content) > 0 {
		_ = json.Unmarshal(m.Content, &m.content)
	}
	v.msgs[e] = m
	return m, m != nil
}

// visible applies the filter to one entry.
func (v *View) visible(n *session.TreeNode) bool {
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
	case session.TypeLabel, session.TypeCustom, session.TypeModelChange, session.TypeThinkingLevelChange, session.TypeSessionInfo:
		return false
	}
	if v.filter == FilterNoTools && e.Role() == session.RoleToolResult {
		return false
	}
	if e.Role() == session.RoleAssistant && (v.leaf == nil || e.ID != v.leaf.ID) {
		if m, ok := v.message(e); ok && !hasText(m.content) && !failed(m.StopReason) {
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
	Text  string // as the session has it: front ends sanitize it when they draw it
}

// Line is one row, kept as styled spans so a front end can cut it to its width
// before it adds colour.
type Line []Span

// Add appends a span.
func (ln *Line) Add(s Style, text string) { *ln = append(*ln, Span{s, text}) }

// Row is one visible entry in drawing order: the node and the box-drawing
// prefix that hangs it from its parent.
type Row struct {
	Node   *session.TreeNode
	Prefix string
	Kids   int // visible children (folded or not)
}

// Lines draws the whole view (Rows with nothing folded, each as its Line).
func (v *View) Lines() []Line {
	rows := v.Rows(nil)
	out := make([]Line, len(rows))
	for i, r := range rows {
		out[i] = v.Line(r)
	}
	return out
}

// Rows lists the visible entries in drawing order, one per row, with
// box-drawing branches. A chain without branches stays in one column; a branch
// point indents its children under ├─ and └─. The entries below a node for
// which folded returns true are left out.
func (v *View) Rows(folded func(*session.TreeNode) bool) []Row {
	type item struct {
		n          *session.TreeNode
		self, cont string
	}
	out := make([]Row, 0, v.Shown)
	var stack []item
	pushKids := func(kids []*session.TreeNode, cont string) {
		if len(kids) == 1 {
			stack = append(stack, item{kids[0], cont, cont})
			return
		}
		for i := len(kids) - 1; i >= 0; i-- {
			if i == len(kids)-1 {
				stack = append(stack, item{kids[i], cont + "└─ ", cont + "   "})
			} else {
				stack = append(stack, item{kids[i], cont + "├─ ", cont + "│  "})
			}
		}
	}
	pushKids(v.roots, "")
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids := v.children[it.n]
		out = append(out, Row{Node: it.n, Prefix: it.self, Kids: len(kids)})
		if folded == nil || !folded(it.n) {
			pushKids(kids, it.cont)
		}
	}
	return out
}

// OnPath reports whether the entry is on the path from the root to the leaf.
func (v *View) OnPath(id string) bool { return v.onPath[id] }

// LeafMark is the visible entry that stands for the leaf (the leaf, or the
// nearest shown entry above a hidden leaf); nil before the first entry.
func (v *View) LeafMark() *session.TreeNode { return v.leafMark }

// Describe is what an entry says, as its row shows it after the marks.
func (v *View) Describe(e *session.Entry) Line {
	var ln Line
	v.describe(&ln, e)
	return ln
}

// Line is one row drawn: leaf mark, id, branch lines, active-path bullet,
// cursor names, label, then what the entry says.
func (v *View) Line(r Row) Line {
	n, prefix := r.Node, r.Prefix
	var ln Line
	if n == v.leafMark {
		ln.Add(Accent, "› ")
	} else {
		ln.Add(Plain, "  ")
	}
	ln.Add(Dim, n.Entry.ID+"  ")
	ln.Add(Dim, prefix)
	if v.onPath[n.Entry.ID] {
		ln.Add(Accent, "• ")
	}
	for _, c := range v.tags[n] {
		ln.Add(Special, "@"+c+" ")
	}
	if n.Label != "" {
		ln.Add(Warning, "["+n.Label+"] ")
	}
	v.describe(&ln, n.Entry)
	return ln
}

// branchSummaryPreamble opens every branch summary pi writes; the tree shows
// what follows it.
const branchSummaryPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

// describe adds what an entry says, in the words pi's tree selector uses.
func (v *View) describe(ln *Line, e *session.Entry) {
	var f struct {
		CustomType    string          `json:"customType"`
		Content       session.Content `json:"content"`
		Summary       string          `json:"summary"`
		TokensBefore  float64         `json:"tokensBefore"`
		ModelID       string          `json:"modelId"`
		ThinkingLevel string          `json:"thinkingLevel"`
		Label         *string         `json:"label"`
		Name          *string         `json:"name"`
	}
	if e.Type != session.TypeMessage {
		_ = e.Decode(&f)
	}
	switch e.Type {
	case session.TypeMessage:
		v.describeMessage(ln, e)
	case session.TypeCustomMessage:
		ln.Add(Special, "["+f.CustomType+"]: ")
		ln.Add(Plain, Flat(f.Content.Text("")))
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
		ln.Add(Plain, Flat(strings.TrimPrefix(f.Summary, branchSummaryPreamble)))
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
	default:
		ln.Add(Muted, "["+e.Type+"]")
	}
}

// markerText says what one of arbor's markers records (SPEC §6.2, §6.3).
func (v *View) markerText(e *session.Entry) string {
	var m struct {
		Data struct {
			Name   *string `json:"name"`
			From   *string `json:"from"`
			Target string  `json:"target"`
			Level  string  `json:"level"`
		} `json:"data"`
	}
	_ = e.Decode(&m)
	cur := e.Cursor
	if cur == "" {
		cur = session.MainCursor
	}
	if name := v.names[cur]; name != "" {
		cur = name
	}
	s := "[" + e.CustomType() + " @" + cur
	switch e.CustomType() {
	case "arbor.cursor":
		if m.Data.Name != nil {
			s += fmt.Sprintf(" named %q", *m.Data.Name)
		}
	case "arbor.leaf":
		if e.ParentID == "" {
			s += " cleared"
		} else {
			s += " moved here"
		}
		if m.Data.From != nil {
			s += " from " + *m.Data.From
		}
	case "arbor.resolution":
		s += " " + m.Data.Target + " " + m.Data.Level
	}
	return s + "]"
}

func (v *View) describeMessage(ln *Line, e *session.Entry) {
	d, ok := v.message(e)
	if !ok {
		ln.Add(Failure, "[unreadable message]")
		return
	}
	switch d.Role {
	case session.RoleUser:
		ln.Add(Accent, "user: ")
		ln.Add(Plain, ContentText(d.content))
	case session.RoleAssistant:
		ln.Add(Success, "assistant: ")
		switch text := ContentText(d.content); {
		case text != "":
			ln.Add(Plain, text)
		case d.StopReason == "aborted":
			ln.Add(Muted, "(aborted)")
		case d.ErrorMessage != "":
			ln.Add(Failure, Flat(d.ErrorMessage))
		default:
			ln.Add(Muted, v.callsText(d))
		}
	case session.RoleToolResult:
		s := Muted
		if d.IsError {
			s = Failure
		}
		if c, ok := v.calls[d.ToolCallID]; ok {
			ln.Add(s, c.String())
		} else {
			name := d.ToolName
			if name == "" {
				name = "tool"
			}
			ln.Add(s, "["+name+"]")
		}
		if d.IsError {
			ln.Add(Failure, " (error)")
		}
	case session.RoleBashExecution:
		ln.Add(Muted, "[bash]: "+Flat(d.Command))
	default:
		ln.Add(Muted, "["+d.Role+"]")
	}
}

// callsText names the tool calls of an assistant message without text (shown
// only when it is the leaf, or with --filter all).
func (v *View) callsText(d *msgView) string {
	var names []string
	for _, b := range d.content.Blocks {
		if b.Type == "toolCall" {
			names = append(names, ParseCall(b).String())
		}
	}
	if len(names) == 0 {
		return "(no content)"
	}
	return strings.Join(names, " ")
}

// ContentText is a message's text on one Line; an image-only message says so.
func ContentText(c session.Content) string {
	if t := Flat(c.Text("")); t != "" {
		return t
	}
	for _, b := range c.Blocks {
		if b.Type == "image" {
			return "[image]"
		}
	}
	return ""
}

// flat puts text on one Line: runs of white space become one space.
func Flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func ParseCall(b session.Block) ToolCall {
	c := ToolCall{name: b.Name, raw: b.Arguments}
	_ = json.Unmarshal(b.Arguments, &c.args)
	return c
}

// String shows a tool call the way pi's tree selector does.
func (c ToolCall) String() string {
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
		if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(p, home) {
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
