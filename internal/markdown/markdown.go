// Package markdown renders a model's Markdown for the terminal (the chat's
// replies): headings, emphasis, lists, quotes, tables and links with
// glamour, code blocks highlighted with chroma, word-wrapped to a width, in
// colours for a dark or a light background, or plain (NO_COLOR).
//
// # Untrusted text
//
// A reply is text from a provider, so it is made safe before it is parsed
// and again after it is rendered:
//
//   - before: CRLF becomes LF, then termtext.Block escapes every control
//     character but newline and tab (ESC shows as \x1b), and a character
//     reference that would decode to such a character (&#27;, &#x9b;, &rlm;)
//     loses its meaning (its & is escaped), so Markdown cannot produce one;
//   - after: the output keeps only the colour and style sequences (CSI … m)
//     the renderer wrote; any other escape sequence, such as the OSC 8
//     hyperlinks glamour makes of links, is dropped, and a stray control
//     character is shown escaped. Links are shown as their text and URL.
//
// # Streaming
//
// A reply is re-rendered at every delta while it streams, so rendering must
// cost what changed, not the whole reply. The text is cut into top-level
// blocks at blank lines that are followed by a line that starts in the first
// column outside a fenced code block; those cuts never move as text is
// appended, so a Renderer keeps the rendering of every block but the last
// and renders only the last again (and the blocks new since the last call).
// The whole reply is always rendered block by block, joined by one blank
// line, so the final rendering is the same as the streamed one. What is lost
// by rendering blocks apart: a reference link whose definition is in another
// block shows as written, and a list whose items are separated by blank
// lines is drawn as lists of one item (numbers kept).
package markdown

import (
	"html"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"github.com/arborlog/arbor/internal/termtext"
)

// Options choose how Markdown is drawn.
type Options struct {
	Width int  // columns to wrap at (80 when 0)
	Dark  bool // colours for a dark background
	Color bool // false: no colours or styles at all (NO_COLOR, a terminal without colour)
}

// Renderer renders Markdown, remembering the blocks of the last text it
// rendered. It is for one goroutine.
type Renderer struct {
	opt    Options
	tr     *glamour.TermRenderer
	blocks []block // the blocks of the last text, rendered
	last   string  // the last text and its rendering, for a redraw
	out    string
}

type block struct{ src, out string }

// New returns a renderer.
func New(o Options) (*Renderer, error) {
	if o.Width <= 0 {
		o.Width = 80
	}
	// Without colour, the dark style still gives the layout (bullets, rules,
	// table borders); its colours are dropped from the output.
	st, theme := styles.DarkStyleConfig, "monokai"
	if o.Color && !o.Dark {
		st, theme = styles.LightStyleConfig, "github"
	}
	// Code is highlighted with one of chroma's own styles: glamour registers
	// its "charm" style once per process, so the first renderer's background
	// (dark or light) would colour the code of every later one.
	st.CodeBlock.Chroma, st.CodeBlock.Theme = nil, theme
	// The chat places the text; blocks are joined here, so the document adds
	// no margin and no blank lines around itself.
	zero := uint(0)
	st.Document.Margin = &zero
	st.Document.BlockPrefix, st.Document.BlockSuffix = "", ""
	tr, err := glamour.NewTermRenderer(glamour.WithStyles(st), glamour.WithWordWrap(o.Width), glamour.WithChromaFormatter(formatter(o)))
	if err != nil {
		return nil, err
	}
	return &Renderer{opt: o, tr: tr}, nil
}

func formatter(o Options) string {
	if !o.Color {
		return "noop"
	}
	return "terminal256"
}

// Options returns the options the renderer was made with.
func (r *Renderer) Options() Options { return r.opt }

// Render draws text, untrusted Markdown, for the terminal. Called again with
// the same text grown at its end, it renders only the blocks that changed.
func (r *Renderer) Render(text string) string {
	if text == r.last && r.blocks != nil {
		return r.out
	}
	srcs := Blocks(Sanitize(text))
	kept := 0
	for kept < len(srcs)-1 && kept < len(r.blocks) && r.blocks[kept].src == srcs[kept] {
		kept++
	}
	r.blocks = r.blocks[:kept]
	for _, src := range srcs[kept:] {
		r.blocks = append(r.blocks, block{src: src, out: r.renderBlock(src)})
	}
	outs := make([]string, 0, len(r.blocks))
	for _, b := range r.blocks {
		if b.out != "" {
			outs = append(outs, b.out)
		}
	}
	r.last, r.out = text, strings.Join(outs, "\n\n")
	if r.blocks == nil {
		r.blocks = []block{} // the empty text is rendered too
	}
	return r.out
}

// renderBlock renders one block without the blank lines around it.
func (r *Renderer) renderBlock(src string) string {
	out, err := r.tr.Render(src)
	if err != nil {
		// glamour fails only when writing fails; show the text as it is.
		out = src
	}
	lines := strings.Split(clean(out, r.opt.Color), "\n")
	for i, ln := range lines {
		lines[i] = trimRight(ln)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// Sanitize makes untrusted text safe to parse as Markdown while keeping its
// meaning: CRLF becomes LF, control characters but newline and tab are
// escaped (termtext.Block), and character references that decode to one are
// disarmed.
func Sanitize(text string) string {
	text = termtext.Block(strings.ReplaceAll(text, "\r\n", "\n"))
	if !strings.Contains(text, "&") {
		return text
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '&')
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		text = text[i:]
		if ref, ok := reference(text); ok && forbidden(html.UnescapeString(ref)) {
			b.WriteString("&amp;")
			text = text[1:]
			continue
		}
		b.WriteByte('&')
		text = text[1:]
	}
}

// reference returns the character reference text starts with (&name; &#n;
// &#xh;), if it is one.
func reference(text string) (string, bool) {
	end := strings.IndexByte(text, ';')
	if end < 2 || end > 40 {
		return "", false
	}
	body := text[1:end]
	for i, c := range body {
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (i == 0 && c == '#')
		if !ok {
			return "", false
		}
	}
	return text[:end+1], true
}

// forbidden reports whether decoded text holds a character a terminal would
// act on (newline and tab aside).
func forbidden(s string) bool {
	for _, c := range s {
		if c != '\n' && c != '\t' && termtext.Forbidden(c) {
			return true
		}
	}
	return false
}

// Blocks cuts Markdown into top-level blocks: at a blank line followed by a
// line that starts in the first column, outside a fenced code block. Blank
// lines between blocks are dropped. The cuts of a text are cuts of every
// text that starts with it, whatever is appended.
func Blocks(text string) []string {
	var (
		out   []string
		start = 0
		fence string // the opening fence of the code block we are in
		blank = false
	)
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if end >= 0 {
			next = pos + end + 1
		}
		line := text[pos:next]
		content := strings.TrimRight(line, "\n")
		switch {
		case fence != "":
			if closes(content, fence) {
				fence = ""
			}
		default:
			if blank && content != "" && content[0] != ' ' && content[0] != '\t' && pos > start {
				if b := strings.Trim(text[start:pos], "\n"); b != "" {
					out = append(out, b)
				}
				start = pos
			}
			fence = opens(content)
		}
		blank = fence == "" && strings.TrimSpace(content) == ""
		pos = next
	}
	if b := strings.Trim(text[start:], "\n"); b != "" {
		out = append(out, b)
	}
	return out
}

// opens returns the fence a line opens (``` or ~~~, three or more, indented
// at most three spaces), or "".
func opens(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.ContainsRune(t[n:], '`')) {
		return ""
	}
	return t[:n]
}

// closes reports whether a line closes the fenced block opened by fence.
func closes(line, fence string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == fence[0] {
		n++
	}
	return n >= len(fence) && strings.TrimSpace(t[n:]) == ""
}

// clean keeps the SGR sequences (ESC [ params m) of rendered text when sgr
// is set, drops every other escape sequence (OSC 8 hyperlinks among them),
// and escapes any other control character but newline and tab.
func clean(s string, sgr bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != 0x1b {
			j := i + 1
			for j < len(s) && s[j] != 0x1b {
				j++
			}
			b.WriteString(termtext.Block(s[i:j]))
			i = j
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '[': // CSI: keep it if it is SGR
			j := i + 2
			for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
				j++
			}
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
				j++
			}
			if j < len(s) {
				if s[j] == 'm' && sgr {
					b.WriteString(s[i : j+1])
				}
				j++
			}
			i = j
		case i+1 < len(s) && (s[i+1] == ']' || s[i+1] == 'P' || s[i+1] == '_' || s[i+1] == '^'): // OSC, DCS, APC, PM: drop
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			switch {
			case j >= len(s):
			case s[j] == 0x07:
				j++
			default:
				j += 2
			}
			i = j
		default:
			b.WriteString(termtext.Block(s[i : i+1]))
			i++
		}
	}
	return b.String()
}

// trimRight drops the spaces, styled or not, that pad a rendered line to
// the width, and closes the styles of what is left.
func trimRight(line string) string {
	end, styled := 0, false // the end of the last visible character
	for i := 0; i < len(line); {
		if line[i] == 0x1b && i+1 < len(line) && line[i+1] == '[' {
			j := strings.IndexByte(line[i:], 'm')
			if j < 0 {
				break
			}
			styled = true
			i += j + 1
			continue
		}
		if line[i] != ' ' {
			end = i + 1
		}
		i++
	}
	if !styled {
		return line[:end]
	}
	if end == 0 {
		return ""
	}
	// keep the sequences right after the last character (they may close it)
	for end < len(line) && line[end] == 0x1b {
		j := strings.IndexByte(line[end:], 'm')
		if j < 0 {
			break
		}
		end += j + 1
	}
	return line[:end] + "\x1b[m"
}
