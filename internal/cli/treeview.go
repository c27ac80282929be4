package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// treeFilter names the entries a tree view shows, after pi's tree selector.
type treeFilter string

const (
	filterDefault treeFilter = "default" // hides bookkeeping entries and tool-call-only assistant messages
	filterNoTools treeFilter = "no-tools"
	filterUser    treeFilter = "user"
	filterLabeled treeFilter = "labeled"
	filterAll     treeFilter = "all"
)

var treeFilters = []treeFilter{filterDefault, filterNoTools, filterUser, filterLabeled, filterAll}

func parseTreeFilter(s string) (treeFilter, error) {
	for _, f := range treeFilters {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(treeFilters))
	for i, f := range treeFilters {
		names[i] = string(f)
	}
	return "", usagef("--filter must be one of %s, not %q", strings.Join(names, ", "), s)
}

// treeView is what `arbor tree` draws: the session's tree reduced to the
// entries a filter keeps, each attached to its nearest visible ancestor.
//
// It holds one small row per visible entry and no decoded message: what an
// entry says is worked out once, as the tree is walked, and kept only as far
// as the width shows it, so a session of a million entries or one of a 50 MB
// message is drawn in memory and time proportional to what is printed.
type treeView struct {
	log      *session.Log
	filter   treeFilter
	width    int                            // rows are cut to this many columns; 0: not cut
	leaf     *session.Entry                 // the leaf whose path is marked; nil before the first entry
	path     []*session.Entry               // root to leaf: an entry at depth d is on it when path[d] is the entry
	tags     map[*session.TreeNode][]string // names of the cursors whose leaf is this entry or hidden below it (only with several cursors)
	calls    map[string]string              // tool call id → the call as shown, to name tool results
	names    map[string]string              // cursor id → name
	home     string                         // shown as ~ in paths
	rows     []viewRow                      // the visible entries, in display order
	topKids  int32                          // rows at the top level
	shown    int
	total    int
	leafMark *session.TreeNode // the visible entry that stands for the leaf
}

type toolCall struct {
	name string
	args map[string]any
	raw  []byte // the arguments as written, for tools shown as JSON
}

// viewRow is one visible entry.
type viewRow struct {
	n      *session.TreeNode
	parent int32 // row this one hangs from: its nearest visible ancestor that is not a marker; -1 at the top
	kids   int32 // rows hanging from this one
	onPath bool  // on the path from the root to the leaf
	desc   line  // what the entry says (a tool result's is made when drawn, once every call is known)
	result *resultView
}

// resultView is what a tool result's row needs.
type resultView struct {
	callID, toolName string
	isError          bool
}

// newTreeView selects and orders the visible entries of roots. Branches that
// hold the leaf come first, as in pi's tree selector. Markers are transparent:
// the children of a marker hang from the marker's nearest visible ancestor
// that is not a marker (SPEC §6.2), even when the marker itself is shown.
// Texts are kept as far as a row of width columns shows them (0: whole).
func newTreeView(roots []*session.TreeNode, l *session.Log, leaf *session.Entry, filter treeFilter, width int) *treeView {
	v := &treeView{
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
			cursorsAt[c.Leaf] = append(cursorsAt[c.Leaf], cursorName(c))
		}
	}
	type item struct {
		n     *session.TreeNode
		anc   int32 // row of the nearest visible non-marker ancestor; -1 at the top
		vis   int32 // row of the nearest visible ancestor, markers included
		depth int32 // in the tree: roots are at 0
	}
	var stack []item
	push := func(ns []*session.TreeNode, anc, vis, depth int32) {
		// Active branch first, then the others in timestamp order; pushed in
		// reverse so they pop in display order.
		if len(ns) == 1 {
			stack = append(stack, item{ns[0], anc, vis, depth})
			return
		}
		ordered := make([]*session.TreeNode, 0, len(ns))
		for _, n := range ns {
			if v.onPath(n.Entry, depth) {
				ordered = append(ordered, n)
			}
		}
		for _, n := range ns {
			if !v.onPath(n.Entry, depth) {
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
		v.total++
		m, _ := v.message(e)
		v.noteCalls(m)
		anc, vis := it.anc, it.vis
		if v.visibleMsg(it.n, m) {
			v.shown++
			if it.anc < 0 {
				v.topKids++
			} else {
				v.rows[it.anc].kids++
			}
			r := viewRow{n: it.n, parent: it.anc, onPath: v.onPath(e, it.depth)}
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

// onPath reports whether e, at depth in the tree, is on the path from the root
// to the leaf: a path holds one entry at each depth.
func (v *treeView) onPath(e *session.Entry, depth int32) bool {
	return int(depth) < len(v.path) && v.path[depth] == e
}

func cursorName(c session.CursorInfo) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// noteCalls remembers the tool calls of an assistant message, so the results
// that answer them can be shown as the call they answer.
func (v *treeView) noteCalls(m *msgView) {
	if m == nil || m.Role != session.RoleAssistant {
		return
	}
	for _, b := range m.content.Blocks {
		if b.Type == "toolCall" && b.ID != "" {
			v.calls[b.ID] = v.callText(parseCall(b))
		}
	}
}

// messageData decodes the whole message of a message entry.
func messageData(e *session.Entry) (session.MessageData, bool) {
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
func (v *treeView) message(e *session.Entry) (*msgView, bool) {
	if e.Type != session.TypeMessage {
		return nil, false
	}
	if m, ok := lazyUser(e); ok {
		return m, true
	}
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
func (v *treeView) visible(n *session.TreeNode) bool {
	m, _ := v.message(n.Entry)
	return v.visibleMsg(n, m)
}

// visibleMsg is visible with the entry's message already decoded (nil when it
// has none or it is unreadable).
func (v *treeView) visibleMsg(n *session.TreeNode, m *msgView) bool {
	e := n.Entry
	switch v.filter {
	case filterAll:
		return true
	case filterLabeled:
		return n.Label != ""
	case filterUser:
		return e.Role() == session.RoleUser
	}
	switch e.Type {
	case session.TypeLabel, session.TypeCustom, session.TypeModelChange, session.TypeThinkingLevelChange, session.TypeSessionInfo,
		session.TypeContextEdit, session.TypeUsage: // as pi 1.6.0 hides them (usage entries even more: everywhere but --filter all)
		return false
	}
	if v.filter == filterNoTools && e.Role() == session.RoleToolResult {
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

// style is how a span of a line is coloured on a terminal.
type style int

const (
	plain style = iota
	dim
	accent
	success
	warning
	muted
	failure
	special
)

var ansi = map[style]string{dim: "\x1b[2m", accent: "\x1b[36m", success: "\x1b[32m", warning: "\x1b[33m", muted: "\x1b[90m", failure: "\x1b[31m", special: "\x1b[35m"}

type span struct {
	style style
	text  string
}

// line is one printed row, kept as styled spans so it can be cut to the
// terminal's width before colour codes are added.
type line []span

func (ln *line) add(s style, text string) { *ln = append(*ln, span{s, text}) }

// render cuts the line to width display columns (marking a cut with "…") and
// colours it when color is set.
func (ln line) render(width int, color bool) string {
	var b strings.Builder
	total := 0
	for _, s := range ln {
		total += textWidth(termtext.Line(s.text))
	}
	budget := -1
	if width > 0 && total > width {
		budget = width - 1
	}
	for _, s := range ln {
		text := termtext.Line(s.text)
		cut := false
		if budget >= 0 {
			if textWidth(text) > budget {
				text = truncateWidth(text, budget)
				cut = true
			}
			budget -= textWidth(text)
		}
		if color && s.style != plain && text != "" {
			b.WriteString(ansi[s.style] + text + "\x1b[0m")
		} else {
			b.WriteString(text)
		}
		if cut {
			b.WriteString("…")
			break
		}
	}
	return b.String()
}

// runeWidth is the number of terminal columns r takes: 0 for combining marks
// and format characters, 2 for East Asian wide and emoji, 1 otherwise.
func runeWidth(r rune) int {
	switch {
	case r == 0 || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r):
		return 0
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0x303E, r >= 0x3041 && r <= 0x33FF,
		r >= 0x3400 && r <= 0x4DBF, r >= 0x4E00 && r <= 0x9FFF, r >= 0xA000 && r <= 0xA4CF,
		r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1F64F,
		r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}

func textWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// truncateWidth returns the longest prefix of s that fits in width columns.
func truncateWidth(s string, width int) string {
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > width {
			return s[:i]
		}
		w += runeWidth(r)
	}
	return s
}

// lines draws the view: one row per visible entry, with box-drawing branches.
// A chain without branches stays in one column; a branch point indents its
// children under ├─ and └─.
func (v *treeView) lines() []line {
	var out []line
	v.each(func(ln line) { out = append(out, ln) })
	return out
}

// each draws the rows one at a time, in order, as lines does.
func (v *treeView) each(draw func(line)) {
	// conts[i] is what the rows below row i are indented by; seen[i] counts
	// the rows drawn so far that hang from row i.
	conts := make([]string, len(v.rows))
	seen := make([]int32, len(v.rows))
	topSeen := 0
	for i := range v.rows {
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
		draw(v.row(r, self))
	}
}

// indent adds one level to an indentation. A row is cut at the width, so an
// indentation that already reaches past it shows the same however deep it
// goes: it stops growing there, and a tree branching at every entry costs no
// more than a chain.
func (v *treeView) indent(cont, level string) string {
	if v.width > 0 && len(cont) > 3*(v.width+3) { // each column of an indentation is at most 3 bytes
		return cont
	}
	return cont + level
}

// row is one entry's line: leaf mark, id, branch lines, active-path bullet,
// cursor names, label, then what the entry says.
func (v *treeView) row(r *viewRow, prefix string) line {
	n := r.n
	ln := make(line, 0, 5+len(r.desc))
	if n == v.leafMark {
		ln.add(accent, "› ")
	} else {
		ln.add(plain, "  ")
	}
	ln.add(dim, n.Entry.ID+"  ")
	ln.add(dim, prefix)
	if r.onPath {
		ln.add(accent, "• ")
	}
	for _, c := range v.tags[n] {
		ln.add(special, "@"+c+" ")
	}
	if n.Label != "" {
		ln.add(warning, "["+n.Label+"] ")
	}
	if r.result != nil {
		v.describeResult(&ln, r.result)
	} else {
		ln = append(ln, r.desc...)
	}
	return ln
}

// branchSummaryPreamble opens every branch summary pi writes; the tree shows
// what follows it.
const branchSummaryPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

// describe adds what an entry says, in the words pi's tree selector uses.
func (v *treeView) describe(ln *line, e *session.Entry, m *msgView) {
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
		ln.add(special, "["+f.CustomType+"]: ")
		ln.add(plain, v.flatText(contentPrefix(f.Content)))
	case session.TypeCompaction:
		ln.add(special, fmt.Sprintf("[compaction: %dk tokens]", int(f.TokensBefore/1000+0.5)))
		// What it covers, so a user sees what the summary stands for ('arbor show' lists it).
		if cov, err := compaction.Covers(v.log, e.ID); err == nil {
			kept := "keeps nothing before it"
			if len(cov.Kept) > 0 {
				kept = "keeps from " + cov.FirstKeptEntryID
			}
			ln.add(muted, fmt.Sprintf(" replaces %d entries, %s", len(cov.Replaced), kept))
		}
	case session.TypeBranchSummary:
		ln.add(warning, "[branch summary]: ")
		ln.add(plain, v.flat(strings.TrimPrefix(f.Summary, branchSummaryPreamble)))
	case session.TypeModelChange:
		ln.add(muted, "[model: "+f.ModelID+"]")
	case session.TypeThinkingLevelChange:
		ln.add(muted, "[thinking: "+f.ThinkingLevel+"]")
	case session.TypeCustom:
		if e.IsMarker() {
			ln.add(muted, v.markerText(e))
		} else {
			ln.add(muted, "[custom: "+f.CustomType+"]")
		}
	case session.TypeLabel:
		if f.Label == nil || *f.Label == "" {
			ln.add(muted, "[label: (cleared)]")
		} else {
			ln.add(muted, "[label: "+*f.Label+"]")
		}
	case session.TypeSessionInfo:
		if f.Name == nil || strings.TrimSpace(*f.Name) == "" {
			ln.add(muted, "[title: (cleared)]")
		} else {
			ln.add(muted, "[title: "+strings.TrimSpace(*f.Name)+"]")
		}
	case session.TypeContextEdit:
		if f.Replacement == nil {
			ln.add(muted, "[edit: omit "+f.TargetID+"]")
		} else {
			ln.add(muted, "[edit: replace "+f.TargetID+"]")
		}
	case session.TypeUsage:
		ln.add(muted, "[usage: "+f.Kind+" "+f.Provider+"/"+f.Model+"]")
	default:
		ln.add(muted, "["+e.Type+"]")
	}
}

// markerText says what one of arbor's markers records (SPEC §6.2, §6.3).
func (v *treeView) markerText(e *session.Entry) string {
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

func (v *treeView) describeMessage(ln *line, d *msgView) {
	if d == nil {
		ln.add(failure, "[unreadable message]")
		return
	}
	switch d.Role {
	case session.RoleUser:
		ln.add(accent, "user: ")
		if d.text != nil {
			t := v.flatText(d.text)
			if t == "" && d.image() {
				t = "[image]"
			}
			ln.add(plain, t)
			break
		}
		ln.add(plain, v.contentText(d.content))
	case session.RoleAssistant:
		ln.add(success, "assistant: ")
		switch text := v.contentText(d.content); {
		case text != "":
			ln.add(plain, text)
		case d.StopReason == "aborted":
			ln.add(muted, "(aborted)")
		case d.ErrorMessage != "":
			ln.add(failure, v.flat(d.ErrorMessage))
		default:
			ln.add(muted, v.callsText(d))
		}
	case session.RoleToolResult:
		v.describeResult(ln, &resultView{callID: d.ToolCallID, toolName: d.ToolName, isError: d.IsError})
	case session.RoleBashExecution:
		ln.add(muted, "[bash]: "+v.flat(d.Command))
	default:
		ln.add(muted, "["+d.Role+"]")
	}
}

// describeResult shows a tool result as the call it answers.
func (v *treeView) describeResult(ln *line, r *resultView) {
	s := muted
	if r.isError {
		s = failure
	}
	if c, ok := v.calls[r.callID]; ok {
		ln.add(s, c)
	} else {
		name := r.toolName
		if name == "" {
			name = "tool"
		}
		ln.add(s, "["+name+"]")
	}
	if r.isError {
		ln.add(failure, " (error)")
	}
}

// callsText names the tool calls of an assistant message without text (shown
// only when it is the leaf, or with --filter all).
func (v *treeView) callsText(d *msgView) string {
	var names []string
	for _, b := range d.content.Blocks {
		if b.Type == "toolCall" {
			names = append(names, v.callText(parseCall(b)))
		}
	}
	if len(names) == 0 {
		return "(no content)"
	}
	return strings.Join(names, " ")
}

// contentText is a message's text on one line; an image-only message says so.
func (v *treeView) contentText(c session.Content) string {
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

// flat is flat(s) as far as a row shows it.
func (v *treeView) flat(s string) string { return v.flatText(stringPrefix(s)) }

// flatText is flat of the whole text, or, when a row of v.width columns cannot
// show all of that, flat of a prefix that is wider than the row, which render
// cuts at the same place. The prefix doubles until it is wide enough, so a 50
// MB message costs a few hundred bytes and a text of zero-width characters
// costs no more than flat of the whole of it.
func (v *treeView) flatText(text prefixFunc) string {
	if v.width <= 0 {
		s, _ := text(-1)
		return flat(s)
	}
	for n := 4 * (v.width + 3); ; n *= 2 {
		s, whole := text(n)
		f := flat(s)
		if whole {
			return f
		}
		// A printed character is never narrower than the character itself.
		if textWidth(f) >= v.width+3 {
			return strings.Clone(f) // not a window on the whole text, which can then go
		}
	}
}

// contentText is a message's whole text on one line; an image-only message says so.
func contentText(c session.Content) string { return (&treeView{}).contentText(c) }

// flat puts text on one line: runs of white space become one space.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func parseCall(b session.Block) toolCall {
	c := toolCall{name: b.Name, raw: b.Arguments}
	_ = json.Unmarshal(b.Arguments, &c.args)
	return c
}

// callText is c.String() with the home folder looked up once per view.
func (v *treeView) callText(c toolCall) string { return c.show(v.home) }

// String shows a tool call the way pi's tree selector does.
func (c toolCall) String() string {
	home, _ := os.UserHomeDir()
	return c.show(home)
}

// show is String with the home folder given.
func (c toolCall) show(home string) string {
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
		cmd := flat(str("command"))
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
	s := flat(string(c.raw))
	if s == "" {
		s = "{}"
	}
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "..."
	}
	return "[" + name + ": " + s + "]"
}
