package treeview

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
)

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
