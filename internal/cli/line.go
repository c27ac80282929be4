package cli

import (
	"strings"
	"unicode"

	"github.com/arborlog/arbor/internal/treeview"
)

// ansi colours the styles of a tree row.
var ansi = map[treeview.Style]string{treeview.Dim: "\x1b[2m", treeview.Accent: "\x1b[36m", treeview.Success: "\x1b[32m", treeview.Warning: "\x1b[33m", treeview.Muted: "\x1b[90m", treeview.Failure: "\x1b[31m", treeview.Special: "\x1b[35m"}

// render cuts a line to width display columns (marking a cut with "…") and
// colours it when color is set.
func render(ln treeview.Line, width int, color bool) string {
	var b strings.Builder
	total := 0
	for _, s := range ln {
		total += textWidth(printable(s.Text))
	}
	budget := -1
	if width > 0 && total > width {
		budget = width - 1
	}
	for _, s := range ln {
		text := printable(s.Text)
		cut := false
		if budget >= 0 {
			if textWidth(text) > budget {
				text = truncateWidth(text, budget)
				cut = true
			}
			budget -= textWidth(text)
		}
		if color && s.Style != treeview.Plain && text != "" {
			b.WriteString(ansi[s.Style] + text + "\x1b[0m")
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

// printable replaces what a terminal would act on instead of showing (escape
// sequences, other control characters, bidirectional overrides) with U+FFFD,
// so text from a session file cannot restyle or reorder the screen.
func printable(s string) string {
	bad := func(r rune) bool {
		return unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
	}
	if strings.IndexFunc(s, bad) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if bad(r) {
			return '\uFFFD'
		}
		return r
	}, s)
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
