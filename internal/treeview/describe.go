package treeview

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/session"
)

// Describe is what any entry of the session says, visible or not, as a row
// would show it after the marks.
func (v *View) Describe(e *session.Entry) Line {
	var ln Line
	var msg msgView
	m := v.message(e, &msg, nil)
	if m != nil && m.Role == session.RoleToolResult {
		v.describeResult(&ln, m.ToolCallID, m.ToolName, m.IsError)
	} else {
		v.describe(&ln, e, m)
	}
	return ln
}

// describe adds what an entry says, in the words pi's tree selector uses.
func (v *View) describe(ln *Line, e *session.Entry, m *msgView) {
	if e.Type == session.TypeMessage {
		v.describeMessage(ln, m)
		return
	}
	v.describeOther(ln, e)
}

// describeOther is describe of an entry that is not a message: the entry is
// decoded here, so a message's row does not pay for these fields.
func (v *View) describeOther(ln *Line, e *session.Entry) {
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
	_ = e.Decode(&f)
	switch e.Type {
	case session.TypeCustomMessage:
		ln.Add(Special, "["+f.CustomType+"]: ")
		ln.Add(Plain, v.flatContent(f.Content))
	case session.TypeCompaction:
		ln.Add(Special, "[compaction: "+compactionTokens(f.TokensBefore)+" tokens]")
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
		v.describeResult(ln, d.ToolCallID, d.ToolName, d.IsError)
	case session.RoleBashExecution:
		ln.Add(Muted, "[bash]: "+v.flat(d.Command))
	default:
		ln.Add(Muted, "["+d.Role+"]")
	}
}

// describeResult shows a tool result as the call it answers.
func (v *View) describeResult(ln *Line, callID, toolName string, isError bool) {
	s := Muted
	if isError {
		s = Failure
	}
	if c, ok := v.calls[callID]; ok {
		ln.Add(s, c)
	} else {
		name := toolName
		if name == "" {
			name = "tool"
		}
		ln.Add(s, "["+name+"]")
	}
	if isError {
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
	if t := v.flatContent(c); t != "" {
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

// flatContent is flat of c.Text("").
func (v *View) flatContent(c session.Content) string {
	if s, ok := soleText(c); ok {
		return v.flat(s)
	}
	return v.flatText(contentPrefix(c))
}

// soleText is c.Text("") when that is a string or the text of c's one text
// block (or none): most messages, whose text is then not copied.
func soleText(c session.Content) (string, bool) {
	if c.IsString {
		return c.String, true
	}
	texts, text := 0, ""
	for _, b := range c.Blocks {
		if b.Type == "text" {
			texts, text = texts+1, b.Text
		}
	}
	return text, texts <= 1
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

// ParseCall reads a tool call block for String. Only the arguments of the
// tools in toolargs' table are read, and of those only the fields it shows.
// pi's own tools are read in one walk of the arguments (scanArgs); the others
// (Claude Code's, Codex's) are decoded.
func ParseCall(b session.Block) ToolCall {
	c := ToolCall{name: b.Name, raw: b.Arguments}
	shape, ok := toolargs.Lookup(c.name)
	if !ok {
		return c
	}
	c.kind = shape.Kind
	if toolargs.Pi(c.name) {
		var ok bool
		if c.args, ok = scanArgs(b.Arguments); !ok {
			var m map[string]any
			_ = json.Unmarshal(b.Arguments, &m)
			c.args = argsOf(m)
		}
		return c
	}
	a := shape.Of(b.Arguments)
	c.args = callArgs{path: a.Path, command: a.Command, pattern: a.Pattern, offset: a.Offset, limit: a.Limit,
		hasOffset: a.HasOffset, hasLimit: a.HasLimit, subject: a.Subject, items: a.Items, hasItems: a.HasItems}
	return c
}

// callArgs is what String shows of a call's arguments: each string field,
// "" when it is absent or not a string, and each number field, with whether
// it is there as a number.
type callArgs struct {
	path, filePath, command, pattern string
	offset, limit                    float64
	hasOffset, hasLimit              bool
	subject                          string // a URL, a query, a task (not pi's tools)
	items                            int    // a to-do list's length (not pi's tools)
	hasItems                         bool
}

// argsOf is the callArgs of arguments decoded into a map.
func argsOf(m map[string]any) callArgs {
	str := func(k string) string { s, _ := m[k].(string); return s }
	var a callArgs
	a.path, a.filePath, a.command, a.pattern = str("path"), str("file_path"), str("command"), str("pattern")
	a.offset, a.hasOffset = m["offset"].(float64)
	a.limit, a.hasLimit = m["limit"].(float64)
	return a
}

// scanArgs is argsOf of the decoded arguments, read in one walk of them as
// written (a loaded line: valid JSON) without the decoder or a map. ok is
// false when the walk might read them otherwise than the decoder (not an
// object, an escaped name or string, invalid UTF-8, a repeated field, a
// number out of range); ParseCall then decodes them.
func scanArgs(raw []byte) (callArgs, bool) {
	var a callArgs
	var seen jsonscan.Seen
	ok := jsonscan.Members(raw, func(name, value []byte) bool {
		var dst *string
		var num *float64
		var has *bool
		var bit uint32
		switch string(name) {
		case "path":
			dst, bit = &a.path, 1
		case "file_path":
			dst, bit = &a.filePath, 2
		case "command":
			dst, bit = &a.command, 4
		case "pattern":
			dst, bit = &a.pattern, 8
		case "offset":
			num, has, bit = &a.offset, &a.hasOffset, 16
		case "limit":
			num, has, bit = &a.limit, &a.hasLimit, 32
		default:
			return true
		}
		if !seen.First(bit) {
			return false
		}
		switch {
		case dst != nil:
			if value[0] != '"' {
				return true // not a string: as if absent
			}
			s, ok := jsonscan.Plain(value)
			*dst = s
			return ok
		case value[0] == '-' || value[0] >= '0' && value[0] <= '9':
			f, err := strconv.ParseFloat(string(value), 64)
			*num, *has = f, true
			return err == nil
		}
		return true // not a number: as if absent
	})
	return a, ok
}

// callText is c.String() with the home folder looked up once per view.
func (v *View) callText(c ToolCall) string { return c.show(v.home) }

// String shows a tool call the way pi's tree selector does.
func (c ToolCall) String() string {
	home, _ := os.UserHomeDir()
	return c.show(home)
}

// show is String with the home folder given. A call is shown by its kind
// under its own name: Claude Code's "Read" as "[Read: a.go]", as pi's "read".
func (c ToolCall) show(home string) string {
	name, args := c.name, c.args
	path := func(p string) string {
		if home != "" && strings.HasPrefix(p, home) {
			return "~" + p[len(home):]
		}
		return p
	}
	// The first of path and file_path that is a non-empty string.
	either := args.path
	if either == "" {
		either = args.filePath
	}
	orDot := func(p string) string {
		if p = path(p); p == "" {
			return "."
		}
		return p
	}
	switch c.kind {
	case toolargs.Read:
		p := path(either)
		off, lim := args.offset, args.limit
		if args.hasOffset || args.hasLimit {
			if !args.hasOffset {
				off = 1
			}
			p += fmt.Sprintf(":%d", int(off))
			if args.hasLimit {
				p += fmt.Sprintf("-%d", int(off+lim-1))
			}
		}
		return "[" + name + ": " + p + "]"
	case toolargs.Write, toolargs.Edit, toolargs.Patch:
		return "[" + name + ": " + path(either) + "]"
	case toolargs.Bash:
		return "[" + name + ": " + cutRunes(Flat(args.command), 50) + "]"
	case toolargs.Grep:
		return "[" + name + ": /" + args.pattern + "/ in " + orDot(args.path) + "]"
	case toolargs.Find:
		return "[" + name + ": " + args.pattern + " in " + orDot(args.path) + "]"
	case toolargs.Ls:
		return "[" + name + ": " + orDot(args.path) + "]"
	case toolargs.Fetch, toolargs.Search, toolargs.Task:
		return "[" + name + ": " + cutRunes(Flat(args.subject), 50) + "]"
	case toolargs.Plan:
		if args.hasItems {
			return "[" + name + ": " + toolargs.Count(args.items) + "]"
		}
	}
	s := Flat(string(c.raw))
	if s == "" {
		s = "{}"
	}
	return "[" + name + ": " + cutRunes(s, 40) + "]"
}

// cutRunes is s cut to its first n characters followed by "..." when it has
// more (string([]rune(s)[:n]) + "...": an invalid byte counts as one
// character and becomes U+FFFD, as that conversion makes it).
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "..."
}

// compactionTokens is a compaction's tokensBefore as pi's tree shows it, in
// rounded thousands ("12k"), except that a count under 1,000 is shown whole:
// "0k" would say the compaction replaced nothing.
func compactionTokens(n float64) string {
	if n < 999.5 {
		return fmt.Sprint(int(n + 0.5))
	}
	return fmt.Sprintf("%dk", int(n/1000+0.5))
}
