// Package statusbar prints the one-line context status that `arbor stats`
// starts with and the chat's footer shows after every turn:
//
//	[████████░░░░░░░░░░░░] 12.3k/183.6k tokens (6.7%) │ 171.3k remaining │ 10 messages
//
// The bar is green under 60% of the prompt budget, yellow from 60% to 80%,
// red above. It holds no text from a session, only numbers, so it needs no
// sanitizing. The number formats (Tokens, Thousands, Count) are the ones the
// command prints everywhere.
package statusbar

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/arborlog/arbor/window"
)

// Width is the number of cells between the bar's brackets.
const Width = 20

// Band is the colour of a utilization.
type Band int

// The bands.
const (
	Green  Band = iota // under 60%
	Yellow             // 60% to 80%
	Red                // above 80%
)

// BandOf returns the band of a utilization in percent.
func BandOf(pct float64) Band {
	switch {
	case pct > 80:
		return Red
	case pct >= 60:
		return Yellow
	}
	return Green
}

// sgr is the ANSI colour of each band (the terminal's own green, yellow, red).
var sgr = [...]string{Green: "32", Yellow: "33", Red: "31"}

// Bar draws the utilization as [████░░░░], coloured by its band when color is set.
func Bar(pct float64, color bool) string { return bar(pct, Width, color) }

func bar(pct float64, width int, color bool) string {
	filled := int(pct*float64(width)/100 + 0.5)
	filled = min(width, max(0, filled))
	bar := "[" + strings.Repeat("█", filled) + strings.Repeat("░", width-filled) + "]"
	if color {
		bar = "\x1b[" + sgr[BandOf(pct)] + "m" + bar + "\x1b[0m"
	}
	return bar
}

// Line is the whole status line of s: the bar, the tokens used of the prompt
// budget, the utilization, what remains and the messages in the context.
func Line(s window.Stats, color bool) string {
	return fmt.Sprintf("%s %s/%s tokens (%s%%) │ %s remaining │ %s", Bar(s.UtilizationPercent, color),
		Tokens(s.EstimatedUsed), Tokens(s.PromptBudget), Percent(s.UtilizationPercent),
		Tokens(s.EstimatedRemaining), Count(s.MessageCount, "message"))
}

// Fit is Line for a footer of width columns: it leaves out the messages,
// then what remains, then narrows the bar (to 5 cells), until the line fits;
// "" when even that does not fit.
func Fit(s window.Stats, color bool, width int) string {
	used := fmt.Sprintf(" %s/%s tokens (%s%%)", Tokens(s.EstimatedUsed), Tokens(s.PromptBudget), Percent(s.UtilizationPercent))
	tails := []string{
		fmt.Sprintf(" │ %s remaining │ %s", Tokens(s.EstimatedRemaining), Count(s.MessageCount, "message")),
		fmt.Sprintf(" │ %s remaining", Tokens(s.EstimatedRemaining)),
		"",
	}
	for _, tail := range tails {
		if Width+2+cells(used+tail) <= width {
			return bar(s.UtilizationPercent, Width, color) + used + tail
		}
	}
	if w := width - 2 - cells(used); w >= 5 {
		return bar(s.UtilizationPercent, w, color) + used
	}
	return ""
}

// cells is the columns of text made of single-width characters (the
// figures, the words, │).
func cells(s string) int { return utf8.RuneCountInString(s) }

// Percent prints a percentage with at most one decimal: 6.7, 50, 100.
func Percent(pct float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", pct), "0"), ".")
}

// Tokens prints a token count as 950, 12.3k or 1.2M.
func Tokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1000000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
}

// Thousands prints an integer with thousands separators: 12,000.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Count writes "1 line", "2 lines", "3 entries", "12,000 messages".
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return Thousands(n) + " " + word[:len(word)-1] + "ies"
	}
	return Thousands(n) + " " + word + "s"
}
