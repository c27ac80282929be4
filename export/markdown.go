package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/arborlog/arbor/internal/inorder"
	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/session"
)

// Markdown writes the path to the leaf as readable Markdown: a title and the
// session's facts, a heading per message, tool calls and results in fenced
// blocks, thinking, compactions and branch summaries as quotes. Bookkeeping
// entries (labels, arbor's markers, custom data) are left out. With o.NoTools
// tool calls keep only their names and results are left out; with o.Redact
// secrets are masked.
func Markdown(w io.Writer, l *session.Log, o Options) error {
	e, err := leaf(l, o)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	h := l.Header()
	title := l.SessionName()
	if title == "" {
		title = "Session " + h.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLineText(title))
	fmt.Fprintf(&b, "- Session: %s\n", code(h.ID))
	if h.Cwd != "" {
		fmt.Fprintf(&b, "- Folder: %s\n", code(h.Cwd))
	}
	if h.Timestamp != "" {
		fmt.Fprintf(&b, "- Started: %s\n", h.Timestamp)
	}
	var path []*session.Entry
	if e != nil {
		path = l.PathTo(e.ID)
		fmt.Fprintf(&b, "- Leaf: %s\n", code(e.ID))
	}
	b.WriteString("\n")
	// Entry by entry, redacted each on its own (redaction is fast on small
	// texts), a run of entries on each core: the output is never held whole.
	bw := bufio.NewWriterSize(w, 1<<16)
	redacted := func(out []byte) []byte {
		if o.Redact != nil {
			if s, n := o.Redact.Redact(string(out)); n > 0 {
				return []byte(s)
			}
		}
		return out
	}
	bw.Write(redacted(b.Bytes()))
	err = inorder.Do(len(path), markdownRun, func(lo, hi int) []byte {
		var out, b bytes.Buffer
		var sc session.MessageScanner
		for _, x := range path[lo:hi] {
			markdownEntry(&b, x, &sc, o)
			out.Write(redacted(b.Bytes()))
			b.Reset()
		}
		return out.Bytes()
	}, func(out []byte) error {
		_, err := bw.Write(out)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// markdownRun is how many entries a core renders at a time.
const markdownRun = 1024

func markdownEntry(b *bytes.Buffer, e *session.Entry, sc *session.MessageScanner, o Options) {
	switch e.Type {
	case session.TypeMessage:
		markdownMessage(b, e, sc, o)
	case session.TypeCompaction:
		var c struct {
			Summary      string  `json:"summary"`
			TokensBefore float64 `json:"tokensBefore"`
		}
		_ = json.Unmarshal(e.Raw(), &c)
		fmt.Fprintf(b, "> **Compaction** (%s tokens before)\n>\n%s", fmt.Sprint(int(c.TokensBefore)), quote(c.Summary))
	case session.TypeBranchSummary:
		var s struct {
			FromID  string `json:"fromId"`
			Summary string `json:"summary"`
		}
		_ = json.Unmarshal(e.Raw(), &s)
		fmt.Fprintf(b, "> **Summary of another branch** (ending at %s)\n>\n%s", code(s.FromID), quote(s.Summary))
	case session.TypeModelChange:
		var m struct {
			Provider string `json:"provider"`
			ModelID  string `json:"modelId"`
		}
		_ = json.Unmarshal(e.Raw(), &m)
		fmt.Fprintf(b, "*Model changed to %s.*\n\n", code(m.Provider+"/"+m.ModelID))
	case session.TypeCustomMessage:
		var m struct {
			CustomType string          `json:"customType"`
			Display    bool            `json:"display"`
			Content    session.Content `json:"content"`
		}
		if json.Unmarshal(e.Raw(), &m) == nil && m.Display {
			fmt.Fprintf(b, "## %s\n\n%s\n\n", oneLineText(m.CustomType), strings.TrimSpace(contentMarkdown(m.Content)))
		}
	}
}

func markdownMessage(b *bytes.Buffer, e *session.Entry, sc *session.MessageScanner, o Options) {
	d, ok, err := sc.Message(e.MessageRaw())
	if !ok || err != nil {
		return
	}
	switch d.Role {
	case session.RoleUser:
		fmt.Fprintf(b, "## User\n\n%s\n\n", strings.TrimSpace(contentMarkdown(d.Content)))
	case session.RoleAssistant:
		head := "## Assistant"
		if d.Model != "" {
			head += " (" + oneLineText(d.Model) + ")"
		}
		b.WriteString(head + "\n\n")
		for _, blk := range d.Content.Blocks {
			switch blk.Type {
			case "text":
				if t := strings.TrimSpace(blk.Text); t != "" {
					b.WriteString(t + "\n\n")
				}
			case "thinking":
				if t := strings.TrimSpace(blk.Thinking); t != "" {
					fmt.Fprintf(b, "> **Thinking**\n>\n%s", quote(t))
				}
			case "toolCall":
				head := "**Tool call** " + code(blk.Name)
				// pi's calls show their arguments below as they always have;
				// another agent's (Claude Code's "Bash") says here what it runs.
				if !o.NoTools && !toolargs.Pi(blk.Name) {
					if s := toolargs.Summary(blk.Name, blk.Arguments); s != "" {
						head += " " + code(oneLineText(s))
					}
				}
				b.WriteString(head + "\n\n")
				if !o.NoTools && len(blk.Arguments) > 0 {
					var v any
					args := string(blk.Arguments)
					if json.Unmarshal(blk.Arguments, &v) == nil {
						args = indentJSON(v, args)
					}
					b.WriteString(fence("json", args))
				}
			}
		}
		if d.Content.IsString && strings.TrimSpace(d.Content.String) != "" {
			b.WriteString(strings.TrimSpace(d.Content.String) + "\n\n")
		}
		if failed(d.StopReason) {
			msg := d.StopReason
			if d.ErrorMessage != "" {
				msg += ": " + d.ErrorMessage
			}
			fmt.Fprintf(b, "*Stopped: %s*\n\n", oneLineText(msg))
		}
	case session.RoleToolResult:
		if o.NoTools {
			return
		}
		head := "**Result** " + code(d.ToolName)
		if d.IsError {
			head += " (error)"
		}
		b.WriteString(head + "\n\n")
		if toolargs.Pi(d.ToolName) {
			b.WriteString(fence("text", contentMarkdown(d.Content))) // as exports have always shown it
		} else {
			b.WriteString(fence("text", resultMarkdown(d.Content, e.Raw())))
		}
	case session.RoleBashExecution:
		if o.NoTools {
			fmt.Fprintf(b, "**Shell** %s\n\n", code(d.Command))
			return
		}
		out := "$ " + d.Command + "\n" + d.Output
		if d.ExitCode != nil && *d.ExitCode != 0 {
			out += fmt.Sprintf("\n(exit code %v)", *d.ExitCode)
		}
		b.WriteString("**Shell**\n\n" + fence("sh", out))
	case session.RoleCustom:
		if d.Display {
			fmt.Fprintf(b, "## %s\n\n%s\n\n", oneLineText(d.CustomType), strings.TrimSpace(contentMarkdown(d.Content)))
		}
	}
}

// failed reports an assistant message that ended other than by stopping or
// calling a tool (as 'arbor tree' marks them).
func failed(stopReason string) bool {
	return stopReason != "" && stopReason != "stop" && stopReason != "toolUse"
}

// resultMarkdown is a tool result's text, with each image as a note of its
// type and size and each block an importer kept beside it (a Claude Code
// tool_reference) as what it holds: inside a fence, as plain text.
func resultMarkdown(c session.Content, entry []byte) string {
	if c.IsString {
		return c.String
	}
	parts := contentParts(c, func(blk session.Block) string {
		return oneLineText(toolargs.ImageNote(blk.MimeType, blk.Data))
	})
	for _, n := range toolargs.SourceNotes(entry) {
		parts = append(parts, oneLineText(n))
	}
	return strings.Join(parts, "\n\n")
}

// contentMarkdown is a content's text, with images as a note.
func contentMarkdown(c session.Content) string {
	return strings.Join(contentParts(c, func(blk session.Block) string {
		return fmt.Sprintf("*[image %s]*", oneLineText(blk.MimeType))
	}), "\n\n")
}

// contentParts is a content's text blocks, and each image as image renders it.
func contentParts(c session.Content, image func(session.Block) string) []string {
	if c.IsString {
		return []string{c.String}
	}
	var parts []string
	for _, blk := range c.Blocks {
		switch blk.Type {
		case "text":
			parts = append(parts, blk.Text)
		case "image":
			parts = append(parts, image(blk))
		}
	}
	return parts
}

// fence wraps s in a code fence longer than any run of backticks in it.
func fence(lang, s string) string {
	f := strings.Repeat("`", max(3, backticks(s)+1))
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f + "\n\n"
}

// code is s as an inline code span.
func code(s string) string {
	s = oneLineText(s)
	f := strings.Repeat("`", backticks(s)+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return f + s + f
}

// backticks is the length of the longest run of backticks in s.
func backticks(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// quote prefixes every line of s with "> ", and ends with a blank line.
func quote(s string) string {
	var b strings.Builder
	for _, ln := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString(strings.TrimRight("> "+ln, " ") + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// indentJSON is v as indented JSON, with &, < and > left as they are: a
// command's "&&" and "2>" read as typed, not as \u0026\u0026 and 2\u003e. On
// failure it returns fallback.
func indentJSON(v any, fallback string) string {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fallback
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
