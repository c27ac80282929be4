package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/redact"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window"
	"github.com/go-json-experiment/json/jsontext"
)

var (
	//go:embed page.tmpl
	pageTemplate string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	// page is parsed on the first export, not at start: every arbor command
	// links this package, and most never write a page.
	page = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("page").Parse(pageTemplate))
	})
	// csp allows only the page's own script and style (by hash), images from
	// data: and blob: URLs, and nothing else: no inline handlers, no remote
	// loads, no forms, no frames.
	csp = sync.OnceValue(func() string {
		return "default-src 'none'; script-src '" + hash(pageJS) + "'; style-src '" + hash(pageCSS) +
			"'; img-src data: blob:; base-uri 'none'; form-action 'none'"
	})
)

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

// pageFields fill page.tmpl.
type pageFields struct {
	Title string
	CSP   string
	CSS   template.CSS
	JS    template.JS
	// Data is the session as JSON with <, >, &, U+2028 and U+2029 escaped, so
	// nothing in it can end the script element or be read as markup.
	Data template.JS
}

// HTML writes one self-contained page showing the session: its tree in a
// sidebar and the conversation of the selected path (the leaf's first). See
// the package documentation for what the page does and why it is safe.
func HTML(w io.Writer, l *session.Log, o Options) error {
	return writeHTML(w, l, o, csp())
}

func writeHTML(w io.Writer, l *session.Log, o Options, policy string) error {
	e, err := leaf(l, o)
	if err != nil {
		return err
	}
	usage := make(chan window.APIUsage, 1)
	go func() { usage <- window.FileUsage(l) }()
	title := l.SessionName()
	if title == "" {
		title = "Session " + l.Header().ID
	}
	if o.Redact != nil {
		title, _ = o.Redact.Redact(title)
	}
	// The page is made with a mark where the data goes, and the data, as
	// large as the session file, is written there as it is made: it is
	// never held whole. The mark holds a NUL and a '<', which no other field
	// can put in the page as they are (escaped in HTML, constant elsewhere).
	var frame bytes.Buffer
	err = page().Execute(&frame, pageFields{
		Title: title + " · arbor",
		CSP:   policy,
		CSS:   template.CSS(pageCSS),
		JS:    template.JS(pageJS),
		Data:  template.JS(dataMark),
	})
	if err != nil {
		return err
	}
	before, after, ok := bytes.Cut(frame.Bytes(), []byte(dataMark))
	if !ok || bytes.Contains(after, []byte(dataMark)) {
		return errors.New("export: the page template does not hold its data once")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(before)
	writePageData(bw, l, e, o, usage)
	bw.Write(after)
	return bw.Flush()
}

// dataMark is where pageFields' Data goes in the page.
const dataMark = "<\x00arbor page data\x00>"

// writePageData writes the JSON the page reads: the header, the entries in tree
// preorder (so a parent always comes before its children) with the index of
// each one's parent as arbor's tree has it (loops cut, unknown parents made
// roots), labels, cursors, the leaf, compaction coverage and the usage 'arbor
// stats' sums. It is escaped for a script element (escapeScript) as it is
// written, and redacted first if o.Redact. A write error is the writer's (a
// bufio.Writer keeps it).
func writePageData(b *bufio.Writer, l *session.Log, leafEntry *session.Entry, o Options, usage <-chan window.APIUsage) {
	var onPath map[string]bool
	if o.BranchOnly && leafEntry != nil {
		onPath = map[string]bool{}
		for _, x := range l.PathTo(leafEntry.ID) {
			onPath[x.ID] = true
		}
	}
	dropped := func(e *session.Entry) bool {
		if onPath != nil && !onPath[e.ID] {
			return true
		}
		return o.NoTools && e.Type == session.TypeMessage && (e.Role() == session.RoleToolResult || e.Role() == session.RoleBashExecution)
	}

	type item struct {
		n      *session.TreeNode
		parent int // index of the nearest exported ancestor, -1 for none
	}
	var (
		order   []*session.TreeNode
		parents []int
		labels  = map[string]string{}
		stack   []item
	)
	roots := l.Tree()
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{roots[i], -1})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p := it.parent
		if !dropped(it.n.Entry) {
			p = len(order)
			order = append(order, it.n)
			parents = append(parents, it.parent)
			if it.n.Label != "" {
				labels[it.n.Entry.ID] = it.n.Label
			}
		}
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.n.Children[i], p})
		}
	}

	w := dataWriter{b: b, redact: o.Redact}
	writeRaw, writeJSON := w.raw, w.json
	h := l.Header()
	b.WriteString(`{"version":1,"header":`)
	writeRaw(h.Raw(), func() any {
		return map[string]any{"type": "session", "id": h.ID, "timestamp": h.Timestamp, "cwd": h.Cwd}
	})
	b.WriteString(`,"file":`)
	writeJSON(filepath.Base(o.Source))
	b.WriteString(`,"name":`)
	writeJSON(l.SessionName())
	b.WriteString(`,"leaf":`)
	if leafEntry != nil {
		writeJSON(leafEntry.ID)
	} else {
		b.WriteString(`null`)
	}
	b.WriteString(`,"cursors":`)
	writeJSON(l.Cursors())
	b.WriteString(`,"labels":`)
	writeJSON(labels)
	b.WriteString(`,"options":`)
	writeJSON(map[string]bool{"noTools": o.NoTools, "branchOnly": o.BranchOnly, "redacted": o.Redact != nil})
	// The table of tool-argument shapes, so the page reads Claude Code's and
	// Codex's calls as the tree does without a copy of its own.
	b.WriteString(`,"tools":`)
	writeJSON(toolargs.Table())
	b.WriteString(`,"covers":{`)
	firstCover := true
	for _, n := range order {
		if n.Entry.Type != session.TypeCompaction {
			continue
		}
		first, last, count := replaced(l, n.Entry)
		if count == 0 {
			continue
		}
		if !firstCover {
			b.WriteByte(',')
		}
		firstCover = false
		writeJSON(n.Entry.ID)
		b.WriteByte(':')
		writeJSON([]string{first, last, itoa(count)})
	}
	b.WriteString(`},"parents":[`)
	for i, p := range parents {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(itoa(p))
	}
	b.WriteString(`],"entries":[`)
	for i, n := range order {
		if i > 0 {
			b.WriteString(",\n")
		}
		e := n.Entry
		raw := e.Raw()
		if o.NoTools && e.Role() == session.RoleAssistant && bytes.Contains(raw, []byte(`"toolCall"`)) {
			raw = withoutArguments(raw)
		}
		writeRaw(raw, func() any {
			return map[string]any{"type": e.Type, "id": e.ID, "parentId": e.ParentID, "timestamp": e.Timestamp, "arborUnreadable": true}
		})
	}
	b.WriteString(`],"stats":`)
	writeJSON(map[string]any{"apiUsage": <-usage})
	b.WriteString("}")
}

// replaced returns the first and the last entry a compaction replaced, and
// how many, as compaction.Covers counts them (a test holds the two equal):
// the entries of its branch from where the previous compaction kept (or the
// root) to its own first kept entry, compactions left out. Covers also
// estimates the branch's tokens, which on a long session with many
// compactions would cost seconds; this walks the branch only.
func replaced(l *session.Log, c *session.Entry) (first, last string, n int) {
	path := l.PathTo(c.ID)
	path = path[:len(path)-1]
	start := 0
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			start = i + 1
			if j := indexOf(path, firstKept(path[i])); j >= 0 {
				start = j
			}
			break
		}
	}
	end := indexOf(path, firstKept(c))
	if end < 0 {
		end = len(path)
	}
	for _, x := range path[min(start, end):end] {
		if x.Type != session.TypeCompaction {
			if n == 0 {
				first = x.ID
			}
			last = x.ID
			n++
		}
	}
	return first, last, n
}

func firstKept(c *session.Entry) string {
	var v struct {
		FirstKeptEntryID string `json:"firstKeptEntryId"`
	}
	_ = json.Unmarshal(c.Raw(), &v)
	return v.FirstKeptEntryID
}

func indexOf(path []*session.Entry, id string) int {
	for i, e := range path {
		if e.ID == id {
			return i
		}
	}
	return -1
}

func itoa(i int) string { return strconv.Itoa(i) }

// dataWriter writes the page's JSON: every piece redacted if asked (redact
// keeps JSON valid) and escaped for a script element.
type dataWriter struct {
	b      *bufio.Writer
	redact *redact.Redactor
}

// raw copies a raw JSON object, or writes the fallback's JSON when the raw
// bytes are not a valid JSON object (the page must always parse).
func (w dataWriter) raw(raw []byte, fallback func() any) {
	if !jsontext.Value(raw).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) || jsontext.Value(raw).Kind() != '{' {
		w.json(fallback())
		return
	}
	if w.redact != nil {
		raw, _ = w.redact.JSON(raw)
	}
	appendEscaped(w.b, raw)
}

func (w dataWriter) json(v any) {
	out, err := json.Marshal(v) // escapes <, >, &, U+2028 and U+2029
	if err != nil {
		out = []byte("null")
	}
	if w.redact != nil {
		out, _ = w.redact.JSON(out)
	}
	w.b.Write(out)
}

// withoutArguments drops the arguments of an assistant message's tool calls
// (--no-tools). Anything that does not decode is returned unchanged.
func withoutArguments(raw []byte) []byte {
	var e map[string]any
	if json.Unmarshal(raw, &e) != nil {
		return raw
	}
	m, _ := e["message"].(map[string]any)
	blocks, _ := m["content"].([]any)
	for _, blk := range blocks {
		if bm, ok := blk.(map[string]any); ok && bm["type"] == "toolCall" {
			delete(bm, "arguments")
		}
	}
	out, err := json.Marshal(e)
	if err != nil {
		return raw
	}
	return out
}

// escapeScript makes JSON safe inside a script element: <, > and & become
// \u003c, \u003e and \u0026 (so no </script> or <!-- can appear), and U+2028
// and U+2029 become \u2028 and \u2029. In valid JSON these characters only
// occur inside strings, where the escapes mean the same.
func escapeScript(b []byte) []byte {
	var out bytes.Buffer
	appendEscaped(&out, b)
	return out.Bytes()
}

// writer is where appendEscaped writes: a bytes.Buffer or a bufio.Writer.
type writer interface {
	Write([]byte) (int, error)
}

// special marks the bytes escapeScript looks at.
var special = [256]bool{'<': true, '>': true, '&': true, 0xE2: true}

func appendEscaped(out writer, b []byte) {
	const hex = "0123456789abcdef"
	last := 0
	for i := 0; i < len(b); i++ {
		if !special[b[i]] {
			continue
		}
		c := b[i]
		var esc [6]byte
		switch {
		case c != 0xE2:
			esc = [6]byte{'\\', 'u', '0', '0', hex[c>>4], hex[c&15]}
		case i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			esc = [6]byte{'\\', 'u', '2', '0', '2', '8' + (b[i+2] - 0xA8)}
		default:
			continue
		}
		out.Write(b[last:i])
		out.Write(esc[:])
		if c == 0xE2 {
			i += 2
		}
		last = i + 1
	}
	out.Write(b[last:])
}

// DefaultName is the file name an export of the session file at path gets
// when none is given: the session file's name with the format's extension.
func DefaultName(path string, f Format) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return base + f.Ext()
}
