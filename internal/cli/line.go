package cli

import (
	"io"
	"strings"

	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/internal/treeview"
)

// ansi colours the styles of a tree row.
var ansi = map[treeview.Style]string{treeview.Dim: "\x1b[2m", treeview.Accent: "\x1b[36m", treeview.Success: "\x1b[32m", treeview.Warning: "\x1b[33m", treeview.Muted: "\x1b[90m", treeview.Failure: "\x1b[31m", treeview.Special: "\x1b[35m"}

// render prints a tree row: each span through termtext.Line, cut to width
// display columns (marking a cut with "…"), coloured when color is set.
func render(ln treeview.Line, width int, color bool) string {
	var b strings.Builder
	renderTo(&b, ln, width, color)
	return b.String()
}

// renderTo is render, written to w: a million rows are not each made a string.
func renderTo(w io.StringWriter, ln treeview.Line, width int, color bool) {
	total := 0
	for _, s := range ln {
		total += termtext.Width(termtext.Line(s.Text))
	}
	budget := -1
	if width > 0 && total > width {
		budget = width - 1
	}
	for _, s := range ln {
		text := termtext.Line(s.Text)
		cut := false
		if budget >= 0 {
			if termtext.Width(text) > budget {
				text = termtext.Truncate(text, budget)
				cut = true
			}
			budget -= termtext.Width(text)
		}
		if color && s.Style != treeview.Plain && text != "" {
			w.WriteString(ansi[s.Style])
			w.WriteString(text)
			w.WriteString("\x1b[0m")
		} else {
			w.WriteString(text)
		}
		if cut {
			w.WriteString("…")
			break
		}
	}
}
