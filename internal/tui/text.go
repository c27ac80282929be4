package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/textinput"
	"github.com/charmbracelet/x/ansi"
)

// clean is the one way text from a session reaches the screen. Control
// characters (C0, DEL, C1, so ESC too), bidirectional controls and line or
// paragraph separators are shown escaped (\x1b, \u202e), and invalid UTF-8 as
// U+FFFD, so a file cannot move the cursor, restyle, reorder or split a line.
func clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune('\uFFFD')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeFormat(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
	}
	return b.String()
}

func needsCleaning(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError || unsafeFormat(r) {
			return true
		}
	}
	return false
}

// unsafeFormat reports the bidirectional controls and the line and paragraph
// separators.
func unsafeFormat(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
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
