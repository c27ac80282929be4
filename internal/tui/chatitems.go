package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/arborlog/arbor/internal/markdown"
	"github.com/arborlog/arbor/internal/statusbar"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/session"
	"github.com/charmbracelet/x/ansi"
)

type itemKind int

const (
	kindUser      itemKind = iota
	kindAssistant          // reply text
	kindThinking
	kindTool    // a tool call, with its result once it came
	kindSummary // a compaction or branch summary
	kindNote    // the chat's own line: a command's result
	kindError
)

// item is one block of the conversation on screen. Its text is as the
// session or the provider gave it (untrusted); render cleans it.
type item struct {
	kind      itemKind
	text      string
	title     string // a summary's kind
	tool      string // a tool call's name
	callID    string
	args      string // the call's arguments (JSON)
	result    string // the tool's output
	partial   string // while it runs: the end of its output so far (bash)
	hasResult bool
	isErr     bool
	running   bool
	streaming bool
	// anchor is, for a note of the chat, the entry that was the leaf when
	// it was made ("" for none); pending while a run appends (the log is
	// not read then), it is settled when the run ends.
	anchor  string
	pending bool

	// lines caches render at a width and with the toggles of that time.
	lines []string
	key   renderKey
}

type renderKey struct {
	width               int
	thinking, tools, ok bool
	dark, color         bool
}

func (it *item) dirty() { it.key.ok = false }

// message is what the conversation shows of a message entry.
type message struct {
	Role         string          `json:"role"`
	Content      session.Content `json:"content"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	ToolCallID   string          `json:"toolCallId"`
	ToolName     string          `json:"toolName"`
	IsError      bool            `json:"isError"`
	Command      string          `json:"command"`  // bashExecution
	Output       string          `json:"output"`   // bashExecution
	ExitCode     *int            `json:"exitCode"` // bashExecution
	Summary      string          `json:"summary"`  // branchSummary, compactionSummary
	CustomType   string          `json:"customType"`
	notes        []string        // what an importer kept beside the message (toolargs.SourceNotes)
}

func decodeJSON(raw []byte, v any) bool { return json.Unmarshal(raw, v) == nil }

func decodeMessage(raw []byte) (message, bool) {
	var m message
	return m, len(raw) > 0 && decodeJSON(raw, &m)
}

// itemsOfBranch is the conversation of the log's active branch, root first,
// with the chat's notes among it: each after the entry that was the leaf
// when it was made (those made before any entry first, in order). Notes made
// on entries off the branch are not shown.
func itemsOfBranch(l *session.Log, notes []*item) []*item {
	after := map[string][]*item{}
	for _, n := range notes {
		after[n.anchor] = append(after[n.anchor], n)
	}
	out := slices.Clone(after[""])
	leaf := l.Leaf()
	if leaf == nil {
		return out
	}
	for _, e := range l.PathTo(leaf.ID) {
		out = appendEntry(out, e)
		out = append(out, after[e.ID]...)
	}
	return out
}

// appendEntry adds what an entry of the branch shows; a tool result joins
// its call.
func appendEntry(out []*item, e *session.Entry) []*item {
	switch e.Type {
	case session.TypeMessage:
		if m, ok := decodeMessage(e.MessageRaw()); ok {
			m.notes = toolargs.SourceNotes(e.Raw())
			out = appendMessage(out, m)
		}
	case session.TypeCompaction, session.TypeBranchSummary:
		var s struct {
			Summary string `json:"summary"`
		}
		if e.Decode(&s) == nil {
			title := "compaction"
			if e.Type == session.TypeBranchSummary {
				title = "summary of the branch left"
			}
			out = append(out, &item{kind: kindSummary, title: title, text: s.Summary})
		}
	}
	return out
}

// appendMessage adds what a message shows; a tool result joins its call.
func appendMessage(items []*item, m message) []*item {
	switch m.Role {
	case session.RoleUser:
		return append(items, &item{kind: kindUser, text: contentText(m.Content)})
	case session.RoleAssistant:
		for _, b := range m.Content.AsBlocks() {
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) != "" {
					items = append(items, &item{kind: kindAssistant, text: b.Text})
				}
			case "thinking":
				if strings.TrimSpace(b.Thinking) != "" {
					items = append(items, &item{kind: kindThinking, text: b.Thinking})
				}
			case "toolCall":
				items = append(items, &item{kind: kindTool, tool: b.Name, callID: b.ID, args: string(b.Arguments)})
			}
		}
		switch m.StopReason {
		case session.StopError:
			items = append(items, &item{kind: kindError, text: m.ErrorMessage})
		case session.StopAborted:
			items = append(items, &item{kind: kindNote, text: "(stopped; the partial reply is kept)"})
		}
		return items
	case session.RoleToolResult:
		it := findTool(items, m.ToolCallID)
		if it == nil {
			it = &item{kind: kindTool, tool: m.ToolName, callID: m.ToolCallID}
			items = append(items, it)
		}
		it.result, it.hasResult, it.isErr, it.running, it.partial = resultText(m), true, m.IsError, false, ""
		it.dirty()
		return items
	case "bashExecution":
		out := m.Output
		if m.ExitCode != nil && *m.ExitCode != 0 {
			out += fmt.Sprintf("\n(exit code %d)", *m.ExitCode)
		}
		args, _ := json.Marshal(map[string]string{"command": m.Command})
		return append(items, &item{kind: kindTool, tool: "bash", args: string(args), result: out, hasResult: true,
			isErr: m.ExitCode != nil && *m.ExitCode != 0})
	case "branchSummary", "compactionSummary":
		return append(items, &item{kind: kindSummary, title: "summary", text: m.Summary})
	case "custom":
		if t := contentText(m.Content); t != "" {
			return append(items, &item{kind: kindNote, text: t})
		}
	}
	return items
}

// contentText is a message's text; images are named, not drawn.
func contentText(c session.Content) string {
	var parts []string
	for _, b := range c.AsBlocks() {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image "+b.MimeType+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// resultText is a tool result's text, with each image as a note of its type
// and size and what an importer kept beside it (a Claude Code tool_reference).
func resultText(m message) string {
	var parts []string
	for _, b := range m.Content.AsBlocks() {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, toolargs.ImageNote(b.MimeType, b.Data))
		}
	}
	return strings.Join(append(parts, m.notes...), "\n")
}

// findTool finds the call with this id among the last items.
func findTool(items []*item, id string) *item {
	if id == "" {
		return nil
	}
	for i := len(items) - 1; i >= 0 && i >= len(items)-200; i-- {
		if items[i].kind == kindTool && items[i].callID == id {
			return items[i]
		}
	}
	return nil
}

// userPrompts are the prompts of the session, oldest first: the editor's
// history (Up and Down), made editable.
func userPrompts(l *session.Log) []string {
	var out []string
	for _, e := range l.Entries() {
		if e.Type != session.TypeMessage || e.Role() != session.RoleUser {
			continue
		}
		if m, ok := decodeMessage(e.MessageRaw()); ok {
			if t := editable(contentText(m.Content)); strings.TrimSpace(t) != "" && (len(out) == 0 || out[len(out)-1] != t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// lastAnswer is the text of the last reply on screen (/copy).
func lastAnswer(items []*item) string {
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].kind == kindAssistant {
			return items[i].text
		}
	}
	return ""
}

// markdown is the renderer of replies at width: one for the reply being
// streamed (it redraws only its last block at each delta), one for the rest.
// Both are made again when the width or the colours change.
func (c *Chat) markdown(width int, live bool) (*markdown.Renderer, error) {
	o := markdown.Options{Width: width, Dark: c.dark, Color: c.color}
	if o != c.mdKey || c.md == nil {
		c.md, c.mdLive, c.mdFailed = nil, nil, nil
		c.mdKey = o
		if c.md, c.mdFailed = markdown.New(o); c.mdFailed == nil {
			c.mdLive, c.mdFailed = markdown.New(o)
		}
	}
	if c.mdFailed != nil {
		return nil, c.mdFailed
	}
	if live {
		return c.mdLive, nil
	}
	return c.md, nil
}

// toolPreview is how many lines of a tool's output show until ctrl+o.
const toolPreview = 5

// render draws the item at width; the result is cached until the width, the
// toggles or the item change.
func (c *Chat) render(it *item, width int) []string {
	k := renderKey{width: width, thinking: c.showThinking, tools: c.showTools, ok: true, dark: c.dark, color: c.color}
	if it.key == k && !it.running { // a running tool's spinner turns
		return it.lines
	}
	it.lines, it.key = c.draw(it, width), k
	return it.lines
}

func (c *Chat) draw(it *item, width int) []string {
	th := c.th
	var out []string
	body := func(text string, indent string, st func(string) string) {
		for _, l := range wrapText(text, width-len(indent)) {
			out = append(out, indent+st(l))
		}
	}
	plain := func(s string) string { return s }
	switch it.kind {
	case kindUser:
		bar := th.accent.Render("▌ ")
		for _, l := range wrapText(it.text, width-2) {
			out = append(out, bar+th.title.Render(l))
		}
	case kindAssistant:
		if md, err := c.markdown(width, it.streaming); err == nil {
			// Sanitize keeps tabs, which a terminal would move the cursor by: spaces.
			out = append(out, strings.Split(strings.ReplaceAll(md.Render(it.text), "\t", "    "), "\n")...)
		} else {
			body(it.text, "", plain)
		}
	case kindThinking:
		if c.showThinking {
			body(it.text, "  ", func(s string) string { return th.muted.Italic(true).Render(s) })
		} else {
			n := len(strings.Split(strings.TrimRight(it.text, "\n"), "\n"))
			out = append(out, th.muted.Italic(true).Render(fmt.Sprintf("∴ thinking (%s, ctrl+t shows)", statusbar.Count(n, "line"))))
		}
	case kindTool:
		head := th.special.Render("⚙ "+clean(orDefault(it.tool, "tool"))) + " " + th.muted.Render(oneLine(toolArgs(it.tool, it.args)))
		if it.running {
			head += " " + c.spin.View()
		}
		out = append(out, ansi.Truncate(head, width, "…"))
		if it.running && !it.hasResult && it.partial != "" {
			// The last lines of what it printed so far; the result replaces them.
			lines, cut := lastLines(it.partial, toolPreview, width-2)
			if cut {
				out = append(out, "  "+th.muted.Render("…"))
			}
			for _, l := range lines {
				out = append(out, "  "+th.muted.Render(l))
			}
		}
		if it.hasResult {
			st := th.muted
			if it.isErr {
				st = th.failure
			}
			lines := wrapText(strings.TrimRight(it.result, "\n"), width-2)
			if !c.showTools && len(lines) > toolPreview {
				more := len(lines) - toolPreview
				lines = append(lines[:toolPreview:toolPreview], fmt.Sprintf("… %s more (ctrl+o shows all)", statusbar.Count(more, "line")))
			}
			for _, l := range lines {
				out = append(out, "  "+st.Render(l))
			}
		}
	case kindSummary:
		out = append(out, th.warning.Render("≡ "+it.title))
		body(it.text, "  ", func(s string) string { return th.muted.Render(s) })
	case kindNote:
		body(it.text, "", func(s string) string { return th.muted.Render(s) })
	case kindError:
		body(it.text, "", func(s string) string { return th.failure.Render(s) })
	}
	return out
}

// lastLines is the end of text, wrapped at width: its last n lines, and
// whether there was more before them. Only the end is wrapped: a running
// command's output is drawn again at every frame.
func lastLines(text string, n, width int) ([]string, bool) {
	text = strings.TrimRight(text, "\n")
	raw := strings.Split(text, "\n")
	cut := len(raw) > n
	raw = raw[max(len(raw)-n, 0):]
	lines := wrapText(strings.Join(raw, "\n"), width)
	if len(lines) > n {
		lines, cut = lines[len(lines)-n:], true
	}
	return lines, cut
}

// toolArgs shows a call's arguments on one line: the command or path when
// there is one, else the JSON. Another agent's tools (Claude Code's "Bash",
// Codex's "shell") are read through toolargs' table.
func toolArgs(name, args string) string {
	if !toolargs.Pi(name) {
		if s := toolargs.Summary(name, []byte(args)); s != "" {
			return s
		}
	}
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) == nil {
		for _, k := range []string{"command", "path", "pattern"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
	}
	return args
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// wrapText cleans untrusted text (termtext.Block: newlines and tabs stay)
// and wraps it to width.
func wrapText(text string, width int) []string {
	width = max(width, 10)
	text = strings.ReplaceAll(termtext.Block(text), "\t", "    ")
	return strings.Split(ansi.Wrap(text, width, ""), "\n")
}
