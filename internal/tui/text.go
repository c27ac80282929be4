package tui

import (
	"os"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/charmbracelet/x/ansi"
)

// clean is the one way text from a session reaches the screen: termtext.Line,
// arbor's one printer for untrusted text. Control characters (C0, DEL, C1, so
// ESC too), bidirectional controls, line or paragraph separators and bytes
// that are not UTF-8 are shown escaped (\x1b, \u202e, \xff), so a file cannot
// move the cursor, restyle, reorder or split a line.
func clean(s string) string { return termtext.Line(s) }

// typed is a key press or a paste made safe for a text field, as editable
// makes a session's text: the fields drop control characters themselves but
// draw bidirectional controls and line separators as they are, so a pasted
// U+202E would reverse what the field shows. What a terminal would act on is
// put in the field escaped (\u202e); a pasted carriage return still ends a
// line. Browser and Chat pass every message through it first.
func typed(msg tea.Msg) tea.Msg {
	switch m := msg.(type) {
	case tea.KeyPressMsg:
		m.Text = editable(m.Text)
		return m
	case tea.PasteMsg:
		m.Content = editable(strings.ReplaceAll(strings.ReplaceAll(m.Content, "\r\n", "\n"), "\r", "\n"))
		return m
	}
	return msg
}

// oneLine puts a session's text on one line (runs of white space become one
// space) and cleans it.
func oneLine(s string) string { return clean(strings.Join(strings.Fields(s), " ")) }

// fit cuts styled text to width columns, marking a cut with "…", and pads it
// to exactly width.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > width {
		s = ansi.Truncate(s, width, "…")
	}
	if pad := width - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// lipWidth is the columns styled text takes.
func lipWidth(s string) int { return ansi.StringWidth(s) }

// shortHome writes a path under the home folder with ~.
func shortHome(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if p == home || strings.HasPrefix(p, home+string(filepath.Separator)) {
		return "~" + p[len(home):]
	}
	return p
}

// noBlink keeps a text field's cursor still: a blinking cursor redraws the
// screen twice a second for nothing.
func noBlink(in *textinput.Model) {
	s := in.Styles()
	s.Cursor.Blink = false
	in.SetStyles(s)
}

// scroller is a selection in a list of n rows shown h at a time from top.
type scroller struct{ sel, top int }

// move moves the selection by d rows, within the list, and the window so
// that it shows the selection.
func (s *scroller) move(d, n, h int) {
	s.sel = min(max(s.sel+d, 0), max(n-1, 0))
	if s.sel < s.top {
		s.top = s.sel
	}
	if s.sel >= s.top+h {
		s.top = s.sel - h + 1
	}
	s.top = max(0, min(s.top, n-h))
}
