package window

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// Lengths of the generated texts, in bytes. Outlines keep the shape of an
// entry (what was asked, what came back, the first lines); summaries keep one
// line.
const (
	outlineText  = 240
	summaryText  = 100
	outlineLines = 3
	outlineLine  = 100
	argOutline   = 80
	argSummary   = 60
)

// call is a tool call as the assistant made it. Its arguments stay as they
// lie in the message and are decoded when an outline or a phase asks for them,
// so indexing the calls of a million-message context keeps no decoded copy.
type call struct {
	name      string
	arguments jsontext.Value
}

// str is str(c.args(), names...): the first of the named arguments that is a
// string. Arguments whose decode is plain (no escapes, valid UTF-8, no
// repeated name) are read where they lie; the others are decoded.
func (c call) str(names ...string) string {
	if bytes.IndexByte(c.arguments, '\\') >= 0 || !utf8.Valid(c.arguments) {
		return str(c.args(), names...)
	}
	var seen [16][]byte
	n, found, at := 0, "", len(names)
	ok := jsonscan.Members(c.arguments, func(name, v []byte) bool {
		if n == len(seen) || slices.ContainsFunc(seen[:n], func(s []byte) bool { return bytes.Equal(s, name) }) {
			return false
		}
		seen[n], n = name, n+1
		if i := slices.Index(names, string(name)); i >= 0 && i < at && v[0] == '"' {
			found, at = string(v[1:len(v)-1]), i
		}
		return true
	})
	if !ok {
		return str(c.args(), names...)
	}
	return found
}

// args decodes the call's arguments (nil when they are not an object).
func (c call) args() map[string]jsontext.Value {
	if len(c.arguments) == 0 {
		return nil
	}
	var m map[string]jsontext.Value
	_ = unmarshal(c.arguments, &m)
	return m
}

// callIndex indexes the tool calls of a context by id: outlines of tool results
// name the call's tool and key argument. The planner's index points into the
// calls its facts hold, so a million calls are not copied.
type callIndex map[string]*call

// get is the call with id, empty when there is none.
func (cs callIndex) get(id string) call {
	if c := cs[id]; c != nil {
		return *c
	}
	return call{}
}

// callsOf indexes the tool calls of msgs.
func callsOf(msgs []session.ContextMessage) callIndex {
	out := callIndex{}
	for _, m := range msgs {
		if m.Role != session.RoleAssistant {
			continue
		}
		if d, ok := data(m.Raw); ok {
			out.add(d)
		}
	}
	return out
}

// add indexes the tool calls of one assistant message.
func (cs callIndex) add(d session.MessageData) {
	for _, b := range d.Content.Blocks {
		if b.Type == "toolCall" && b.ID != "" {
			cs[b.ID] = &call{name: b.Name, arguments: jsontext.Value(b.Arguments)}
		}
	}
}

// addBlocks indexes the tool calls of one assistant message, given as its
// toolCall blocks, which the index points into; it reports whether an id was
// indexed already (the later call wins).
func (cs callIndex) addBlocks(bs []toolBlock) bool {
	again := false
	for i, b := range bs {
		if b.id != "" {
			n := len(cs)
			cs[b.id] = &bs[i].call
			again = again || len(cs) == n
		}
	}
	return again
}

// dataOf is data of a message of the context; one from a loaded entry is read
// without the decoder when it is plain (session.ScanMessageData), as the
// planner reads every message of a context that may hold a million.
func dataOf(m session.ContextMessage) (session.MessageData, bool) {
	var sc session.MessageScanner
	return dataWith(&sc, m)
}

// dataWith is dataOf reading with sc, which the planner's workers keep from
// one message to the next; the result is valid until sc scans again.
func dataWith(sc *session.MessageScanner, m session.ContextMessage) (session.MessageData, bool) {
	if m.Entry != nil {
		if d, ok := sc.Scan(m.Raw); ok {
			return d, true
		}
	}
	return data(m.Raw)
}

// data decodes a context message. It decodes once, straight into the struct:
// the messages of a built context are already known to be JSON objects.
func data(raw []byte) (session.MessageData, bool) {
	var d session.MessageData
	if err := unmarshal(raw, &d); err != nil || d.Role == "" {
		return session.MessageData{}, false
	}
	return d, true
}

// renderLevel returns m as a cursor renders it at level: outlined and summarized
// messages keep their role, tool-call ids and tool calls; text, when set,
// replaces the generated outline or summary. Full and pinned return m as is.
// calls (callsOf the whole context) lets a tool result's outline name its
// call's argument; nil leaves that out.
func renderLevel(m session.ContextMessage, level session.Level, text string, calls callIndex) session.ContextMessage {
	if level != session.Outlined && level != session.Summarized {
		return m
	}
	d, ok := data(m.Raw)
	if !ok {
		return m
	}
	return render(m, d, nil, level, text, calls)
}

// render is Render on a message already decoded as d (and split into ms,
// when not nil).
func render(m session.ContextMessage, d session.MessageData, ms []member, level session.Level, text string, calls callIndex) session.ContextMessage {
	sum := level == session.Summarized
	out := m
	switch d.Role {
	case session.RoleToolResult:
		if text == "" {
			text = toolOutline(d.ToolName, calls.get(d.ToolCallID).args(), d.Content.Text("\n"), d.IsError, sum)
		}
		out.Raw = edit(m.Raw, ms, []member{{"content", textContent(text)}, {"details", nil}})
	case session.RoleAssistant:
		out.Raw = edit(m.Raw, ms, []member{{"content", assistantContent(d, text, sum)}})
	case session.RoleBashExecution:
		if text == "" {
			text = outputOutline(d.Output, exitFailure(d), sum)
		}
		out.Raw = edit(m.Raw, ms, []member{{"output", marshal(text)}, {"truncated", nil}, {"fullOutputPath", nil}})
	case session.RoleCompactionSummary, session.RoleBranchSummary:
		if text == "" {
			text = clip(summaryOf(m.Raw), pick(sum, 2*summaryText, 4*outlineText))
		}
		out.Raw = edit(m.Raw, ms, []member{{"summary", marshal(text)}})
	default: // user, custom and roles arbor does not know
		if text == "" {
			text = proseOutline(d.Content, sum)
		}
		out.Raw = edit(m.Raw, ms, []member{{"content", textContent(text)}, {"details", nil}})
	}
	return out
}

func pick(sum bool, s, o int) int {
	if sum {
		return s
	}
	return o
}

// proseOutline shortens a user or custom message; images become a mention.
func proseOutline(c session.Content, sum bool) string {
	text := strings.Join(strings.Fields(c.Text(" ")), " ")
	images := 0
	for _, b := range c.Blocks {
		if b.Type == "image" {
			images++
		}
	}
	s := clip(text, pick(sum, summaryText, outlineText))
	if images > 0 {
		s = strings.TrimSpace(s + " " + plural(images, "image"))
	}
	if s == "" {
		s = "(empty)"
	}
	return s
}

// assistantContent keeps the assistant's tool calls, with shortened arguments,
// after a shortened text; thinking is left out.
func assistantContent(d session.MessageData, text string, sum bool) jsontext.Value {
	if text == "" {
		text = clip(strings.Join(strings.Fields(d.Content.Text(" ")), " "), pick(sum, summaryText, outlineText))
	}
	var blocks []jsontext.Value
	var calls int
	for _, b := range d.Content.Blocks {
		if b.Type == "toolCall" {
			calls++
		}
	}
	if text == "" && calls == 0 {
		text = "(reasoning only)"
	}
	if text != "" {
		blocks = append(blocks, marshal(textBlock{Type: "text", Text: text}))
	}
	for _, b := range d.Content.Blocks {
		if b.Type != "toolCall" {
			continue
		}
		blocks = append(blocks, object([]member{
			{"type", marshal("toolCall")}, {"id", marshal(b.ID)}, {"name", marshal(b.Name)},
			{"arguments", shortArgs(b.Name, jsontext.Value(b.Arguments), sum)},
		}))
	}
	return marshal(blocks)
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// shortArgs keeps a tool call's arguments an object, as providers require,
// with long values shortened; a summary keeps only the key argument.
func shortArgs(tool string, raw jsontext.Value, sum bool) jsontext.Value {
	ms, err := members(raw)
	if err != nil || raw.Kind() != '{' {
		return jsontext.Value("{}")
	}
	key := keyArg(tool, argsOf(ms))
	var out []member
	for _, m := range ms {
		if sum && m.name != key {
			continue
		}
		v := m.value
		limit := pick(sum, argSummary, argOutline)
		if v.Kind() == '"' {
			var s string
			_ = unmarshal(v, &s)
			if len(s) > limit {
				v = marshal(clip(s, limit) + fmt.Sprintf(" (%s)", size(len(s))))
			}
		} else if len(v) > limit {
			v = marshal(fmt.Sprintf("(%s of JSON)", size(len(v))))
		}
		out = append(out, member{m.name, v})
	}
	return object(out)
}

func argsOf(ms []member) map[string]jsontext.Value {
	out := make(map[string]jsontext.Value, len(ms))
	for _, m := range ms {
		out[m.name] = m.value
	}
	return out
}

// keyArgNames are the arguments that say what a tool call was about, most telling first.
var keyArgNames = []string{"command", "cmd", "pattern", "query", "url", "path", "file_path", "filePath", "file", "dir", "directory"}

// keyArg returns the name of the argument that best says what a call was about.
func keyArg(tool string, args map[string]jsontext.Value) string {
	for _, k := range keyArgNames {
		if v, ok := args[k]; ok && v.Kind() == '"' {
			return k
		}
	}
	// Otherwise the first string argument in name order, so the choice is stable.
	best := ""
	for k, v := range args {
		if v.Kind() == '"' && (best == "" || k < best) {
			best = k
		}
	}
	return best
}

// strArg is str clipped for an outline's first line.
// A short argument is kept exactly: a pattern's spaces matter.
func strArg(args map[string]jsontext.Value, names ...string) string {
	s := str(args, names...)
	if len(s) > 80 {
		return clip(s, 80)
	}
	return s
}

func str(args map[string]jsontext.Value, names ...string) string {
	for _, n := range names {
		if v, ok := args[n]; ok && v.Kind() == '"' {
			var s string
			_ = unmarshal(v, &s)
			return s
		}
	}
	return ""
}

// toolOutline names the tool, its key argument, the size of what came back and
// whether it failed: `read src/main.go: 120 lines`,
// `bash "go test ./...": failed, 2 of 40 tests`. An outline adds the first
// lines (or, for a failure, the failing lines).
func toolOutline(tool string, args map[string]jsontext.Value, text string, isError bool, sum bool) string {
	head := toolHead(tool, args, text, isError)
	if sum {
		return clip(head, summaryText)
	}
	if lines := telling(text, isError); len(lines) > 0 {
		head += "\n" + strings.Join(lines, "\n")
	}
	return head
}

func toolHead(tool string, args map[string]jsontext.Value, text string, isError bool) string {
	lines := countLines(text)
	failed, code := isError, 0
	if m := find(exitRE, "exit", tail(text, 512)); m != nil {
		code, _ = strconv.Atoi(m[1])
		failed = failed || code != 0
	}
	status := func(ok string) string {
		if failed {
			if code != 0 {
				return fmt.Sprintf("failed (exit %d): %s", code, firstLine(text))
			}
			return "failed: " + firstLine(text)
		}
		return ok
	}
	switch tool {
	case "read", "read_file", "view", "cat":
		from := ""
		if off, ok := args["offset"]; ok && off.Kind() == '0' {
			from = " from line " + string(off)
		}
		return fmt.Sprintf("%s %s: %s", tool, strArg(args, "path", "file_path", "file"), status(plural(lines, "line")+from))
	case "edit", "edit_file", "write", "write_file", "multi_edit", "str_replace":
		ok := "ok"
		if c := str(args, "content"); c != "" {
			ok = size(len(c))
		}
		return fmt.Sprintf("%s %s: %s", tool, strArg(args, "path", "file_path", "file"), status(ok))
	case "ls", "list_dir", "list":
		return fmt.Sprintf("%s %s: %s", tool, orDot(strArg(args, "path", "dir")), status(plural(lines, "entry")))
	case "grep", "search", "rg":
		n := lines
		if strings.HasPrefix(strings.TrimSpace(text), "No matches") {
			n = 0
		}
		return fmt.Sprintf("%s %q in %s: %s", tool, strArg(args, "pattern", "query"), orDot(strArg(args, "path")), status(plural(n, "match")))
	case "find", "glob":
		n := lines
		if strings.HasPrefix(strings.TrimSpace(text), "No files") {
			n = 0
		}
		return fmt.Sprintf("%s %q in %s: %s", tool, strArg(args, "pattern"), orDot(strArg(args, "path")), status(plural(n, "file")))
	case "bash", "run_command", "shell", "exec":
		return fmt.Sprintf("%s %q: %s", tool, clip(str(args, "command", "cmd"), 60), runStatus(text, failed, code, lines))
	}
	key := ""
	if k := keyArg(tool, args); k != "" {
		key = " " + clip(str(args, k), 60)
	}
	if strings.Contains(tool, "test") || strings.Contains(tool, "check") {
		return fmt.Sprintf("%s%s: %s", tool, key, runStatus(text, failed, code, lines))
	}
	return fmt.Sprintf("%s%s: %s", tool, key, status(plural(lines, "line")))
}

// runStatus describes a command's outcome, with test counts when the output has them.
func runStatus(text string, failed bool, code, lines int) string {
	t := tests(text)
	if t.failed > 0 {
		failed = true
	}
	s := "ok"
	if failed {
		s = "failed"
		if code != 0 {
			s = fmt.Sprintf("failed (exit %d)", code)
		}
	}
	switch {
	case t.total > 0 && t.failed > 0:
		return fmt.Sprintf("%s, %d of %d tests", s, t.failed, t.total)
	case t.total > 0:
		return fmt.Sprintf("%s, %d tests passed", s, t.total)
	}
	return fmt.Sprintf("%s, %s", s, plural(lines, "line"))
}

// outputOutline shortens a user's own bash run (pi's bashExecution).
func outputOutline(out string, failed bool, sum bool) string {
	s := runStatus(out, failed, 0, countLines(out))
	if sum {
		return s
	}
	if lines := telling(out, failed); len(lines) > 0 {
		s += "\n" + strings.Join(lines, "\n")
	}
	return s
}

func exitFailure(d session.MessageData) bool {
	return d.Cancelled || (d.ExitCode != nil && *d.ExitCode != 0)
}

var (
	exitRE = regexp.MustCompile(`(?:Command exited with code|exit code:?|exit status) (\d+)`)
	// Test runners' summaries: go test -v, cargo, pytest, jest/vitest.
	cargoRE      = regexp.MustCompile(`test result: \w+\. (\d+) passed; (\d+) failed`)
	pytestFailRE = regexp.MustCompile(`(\d+) failed`)
	pytestPassRE = regexp.MustCompile(`(\d+) passed`)
	jestRE       = regexp.MustCompile(`Tests:\s+(?:(\d+) failed, )?(?:\d+ \w+, )*(\d+) total`)
)

type testCount struct{ failed, total int }

// find and findAll run a regular expression only where its anchor word
// appears: most outputs have none, and outlines are made by the thousand.
func find(re *regexp.Regexp, anchor, text string) []string {
	if !strings.Contains(text, anchor) {
		return nil
	}
	return re.FindStringSubmatch(text)
}

func findAll(re *regexp.Regexp, anchor, text string) [][]string {
	if !strings.Contains(text, anchor) {
		return nil
	}
	return re.FindAllStringSubmatch(text, -1)
}

func tests(text string) testCount {
	full := text
	text = tail(text, 4096) // runners print their summaries last
	if m := find(jestRE, "Tests:", text); m != nil {
		f, _ := strconv.Atoi(m[1])
		t, _ := strconv.Atoi(m[2])
		return testCount{f, t}
	}
	if ms := findAll(cargoRE, "test result:", text); ms != nil {
		var c testCount
		for _, m := range ms {
			p, _ := strconv.Atoi(m[1])
			f, _ := strconv.Atoi(m[2])
			c.failed += f
			c.total += p + f
		}
		return c
	}
	p := strings.Count(full, "--- PASS: ")
	f := strings.Count(full, "--- FAIL: ")
	if p+f > 0 {
		return testCount{f, p + f}
	}
	if strings.Contains(text, "passed") || strings.Contains(text, "failed") {
		// pytest's last line: "== 2 failed, 38 passed in 1.2s =="
		last := lastLineWith(text, " in ")
		if strings.Contains(last, "==") {
			var c testCount
			if m := pytestFailRE.FindStringSubmatch(last); m != nil {
				c.failed, _ = strconv.Atoi(m[1])
			}
			if m := pytestPassRE.FindStringSubmatch(last); m != nil {
				p, _ := strconv.Atoi(m[1])
				c.total = p + c.failed
			}
			c.total = max(c.total, c.failed)
			return c
		}
	}
	return testCount{}
}

// tail returns about the last n bytes of s, starting at a character boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func lastLineWith(text, sub string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-5; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}

// telling returns the few lines of an output most worth keeping: for a
// failure the lines that say what failed, else the first lines.
func telling(text string, failed bool) []string {
	all := strings.Split(text, "\n")
	if !failed && len(all) > 50 {
		all = all[:50]
	}
	var out []string
	if failed || strings.Contains(text, "--- FAIL") {
		for _, l := range all {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "FAIL") || strings.Contains(strings.ToLower(t), "error") || strings.HasPrefix(t, "panic:") {
				out = append(out, clip(t, outlineLine))
				if len(out) == outlineLines {
					return out
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, l := range all {
		if t := strings.TrimRight(l, " \t\r"); strings.TrimSpace(t) != "" {
			out = append(out, clip(t, outlineLine))
			if len(out) == outlineLines {
				break
			}
		}
	}
	return out
}

func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return clip(t, 60)
		}
	}
	return "no output"
}

func countLines(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	switch {
	case strings.HasSuffix(word, "y"):
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	case strings.HasSuffix(word, "ch"):
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// size prints a byte count the way people read it.
func size(n int) string {
	switch {
	case n < 1000:
		return plural(n, "byte")
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// clip shortens s to at most n bytes of valid UTF-8, at a word boundary when
// one is near, and marks the cut with "…".
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexAny(s[:cut], " \t\n"); i > cut*3/4 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " \t\n") + "…"
}
