package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode"

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
type treeView struct {
	log      *session.Log
	filter   treeFilter
	leaf     *session.Entry // the leaf whose path is marked; nil before the first entry
	onPath   map[string]bool
	tags     map[*session.TreeNode][]string // names of the cursors whose leaf is this entry or hidden below it (only with several cursors)
	calls    map[string]toolCall            // tool call id → the call, to name tool results
	names    map[string]string              // cursor id → name
	msgs     map[*session.Entry]*msgView
	children map[*session.TreeNode][]*session.TreeNode
	roots    []*session.TreeNode
	shown    int
	total    int
	leafMark *session.TreeNode // the visible entry that stands for the leaf
}

type toolCall struct {
	name string
	args map[string]any
	raw  []byte // the arguments as written, for tools shown as JSON
}

// newTreeView selects and orders the visible entries of roots. Branches that
// hold the leaf come first, as in pi's tree selector. Markers are transparent:
// the children of a marker hang from the marker's nearest visible ancestor
// that is not a marker (SPEC §6.2), even when the marker itself is shown.
func newTreeView(roots []*session.TreeNode, l *session.Log, leaf *session.Entry, filter treeFilter) *treeView {
	v := &treeView{
		log:      l,
		filter:   filter,
		leaf:     leaf,
		onPath:   map[string]bool{},
		calls:    map[string]toolCall{},
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
			cursorsAt[c.Leaf] = append(cursorsAt[c.Leaf], cursorName(c))
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
		v.total++
		v.noteCalls(e)
		anc, vis := it.anc, it.vis
		if v.visible(it.n) {
			v.shown++
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

func cursorName(c session.CursorInfo) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// noteCalls remembers the tool calls of an assistant message, so the results
// that answer them can be shown as the call they answer. Parents are visited
// before their children, so a call is known before its result.
func (v *treeView) noteCalls(e *session.Entry) {
	if e.Role() != session.RoleAssistant {
		return
	}
	m, ok := v.message(e)
	if !ok {
		return
	}
	for _, b := range m.content.Blocks {
		if b.Type == "toolCall" && b.ID != "" {
			v.calls[b.ID] = parseCall(b)
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
func (v *treeView) message(e *session.Entry) (*msgView, bool) {
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
func (v *treeView) visible(n *session.TreeNode) bool {
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
	type item struct {
		n          *session.TreeNode
		self, cont string
	}
	var out []line
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
		out = append(out, v.row(it.n, it.self))
		pushKids(v.children[it.n], it.cont)
	}
	return out
}

// row is one entry's line: leaf mark, id, branch lines, active-path bullet,
// cursor names, label, then what the entry says.
func (v *treeView) row(n *session.TreeNode, prefix string) line {
	var ln line
	if n == v.leafMark {
		ln.add(accent, "› ")
	} else {
		ln.add(plain, "  ")
	}
	ln.add(dim, n.Entry.ID+"  ")
	ln.add(dim, prefix)
	if v.onPath[n.Entry.ID] {
		ln.add(accent, "• ")
	}
	for _, c := range v.tags[n] {
		ln.add(special, "@"+c+" ")
	}
	if n.Label != "" {
		ln.add(warning, "["+n.Label+"] ")
	}
	v.describe(&ln, n.Entry)
	return ln
}

// branchSummaryPreamble opens every branch summary pi writes; the tree shows
// what follows it.
const branchSummaryPreamble = "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"

// describe adds what an entry says, in the words pi's tree selector uses.
func (v *treeView) describe(ln *line, e *session.Entry) {
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
		v.describeMessage(ln, e)
	case session.TypeCustomMessage:
		ln.add(special, "["+f.CustomType+"]: ")
		ln.add(plain, flat(f.Content.Text("")))
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
		ln.add(plain, flat(strings.TrimPrefix(f.Summary, branchSummaryPreamble)))
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

func (v *treeView) describeMessage(ln *line, e *session.Entry) {
	d, ok := v.message(e)
	if !ok {
		ln.add(failure, "[unreadable message]")
		return
	}
	switch d.Role {
	case session.RoleUser:
		ln.add(accent, "user: ")
		ln.add(plain, contentText(d.content))
	case session.RoleAssistant:
		ln.add(success, "assistant: ")
		switch text := contentText(d.content); {
		case text != "":
			ln.add(plain, text)
		case d.StopReason == "aborted":
			ln.add(muted, "(aborted)")
		case d.ErrorMessage != "":
			ln.add(failure, flat(d.ErrorMessage))
		default:
			ln.add(muted, v.callsText(d))
		}
	case session.RoleToolResult:
		s := muted
		if d.IsError {
			s = failure
		}
		if c, ok := v.calls[d.ToolCallID]; ok {
			ln.add(s, c.String())
		} else {
			name := d.ToolName
			if name == "" {
				name = "tool"
			}
			ln.add(s, "["+name+"]")
		}
		if d.IsError {
			ln.add(failure, " (error)")
		}
	case session.RoleBashExecution:
		ln.add(muted, "[bash]: "+flat(d.Command))
	default:
		ln.add(muted, "["+d.Role+"]")
	}
}

// callsText names the tool calls of an assistant message without text (shown
// only when it is the leaf, or with --filter all).
func (v *treeView) callsText(d *msgView) string {
	var names []string
	for _, b := range d.content.Blocks {
		if b.Type == "toolCall" {
			names = append(names, parseCall(b).String())
		}
	}
	if len(names) == 0 {
		return "(no content)"
	}
	return strings.Join(names, " ")
}

// contentText is a message's text on one line; an image-only message says so.
func contentText(c session.Content) string {
	if t := flat(c.Text("")); t != "" {
		return t
	}
	for _, b := range c.Blocks {
		if b.Type == "image" {
			return "[image]"
		}
	}
	return ""
}

// flat puts text on one line: runs of white space become one space.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func parseCall(b session.Block) toolCall {
	c := toolCall{name: b.Name, raw: b.Arguments}
	_ = json.Unmarshal(b.Arguments, &c.args)
	return c
}

// String shows a tool call the way pi's tree selector does.
func (c toolCall) String() string {
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
