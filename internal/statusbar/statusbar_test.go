package statusbar

import (
	"testing"

	"github.com/arborlog/arbor/window"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		s     window.Stats
		color bool
		want  string
	}{
		{window.Stats{PromptBudget: 24600, EstimatedUsed: 12300, EstimatedRemaining: 12300, UtilizationPercent: 50, MessageCount: 12}, false,
			"[██████████░░░░░░░░░░] 12.3k/24.6k tokens (50%) │ 12.3k remaining │ 12 messages"},
		{window.Stats{PromptBudget: 183600, EstimatedUsed: 12300, EstimatedRemaining: 171300, UtilizationPercent: 6.7, MessageCount: 1}, false,
			"[█░░░░░░░░░░░░░░░░░░░] 12.3k/183.6k tokens (6.7%) │ 171.3k remaining │ 1 message"},
		{window.Stats{PromptBudget: 1000, EstimatedUsed: 650, EstimatedRemaining: 350, UtilizationPercent: 65, MessageCount: 1200}, true,
			"\x1b[33m[█████████████░░░░░░░]\x1b[0m 650/1k tokens (65%) │ 350 remaining │ 1,200 messages"},
		{window.Stats{PromptBudget: 2_000_000, EstimatedUsed: 2_400_000, UtilizationPercent: 120}, true,
			"\x1b[31m[████████████████████]\x1b[0m 2.4M/2M tokens (120%) │ 0 remaining │ 0 messages"},
	} {
		if got := Line(tc.s, tc.color); got != tc.want {
			t.Errorf("Line(%+v)\n got %q\nwant %q", tc.s, got, tc.want)
		}
	}
}

func TestBands(t *testing.T) {
	for _, tc := range []struct {
		pct  float64
		band Band
		code string
	}{{0, Green, "32"}, {59.9, Green, "32"}, {60, Yellow, "33"}, {80, Yellow, "33"}, {80.1, Red, "31"}} {
		if got := BandOf(tc.pct); got != tc.band {
			t.Errorf("BandOf(%v) = %v, want %v", tc.pct, got, tc.band)
		}
		if got := Bar(tc.pct, true); got[:5] != "\x1b["+tc.code+"m" {
			t.Errorf("Bar(%v) = %q, want colour %s", tc.pct, got, tc.code)
		}
	}
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Tokens(950), "950"}, {Tokens(12_345), "12.3k"}, {Tokens(32_000), "32k"}, {Tokens(1_260_000), "1.3M"},
		{Thousands(-1234567), "-1,234,567"}, {Thousands(999), "999"},
		{Count(3, "entry"), "3 entries"}, {Count(1, "entry"), "1 entry"}, {Count(12000, "message"), "12,000 messages"},
		{Percent(6.66), "6.7"}, {Percent(50), "50"}, {Percent(0.04), "0"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestFit narrows the line for a footer, dropping from its end first.
func TestFit(t *testing.T) {
	s := window.Stats{PromptBudget: 32000, EstimatedUsed: 12300, EstimatedRemaining: 19700, UtilizationPercent: 38.4, MessageCount: 12}
	full := Line(s, false)
	for _, tc := range []struct {
		width int
		want  string
	}{
		{200, full},
		{len([]rune(full)), full},
		{len([]rune(full)) - 1, "[████████░░░░░░░░░░░░] 12.3k/32k tokens (38.4%) │ 19.7k remaining"},
		{50, "[████████░░░░░░░░░░░░] 12.3k/32k tokens (38.4%)"},
		{40, "[█████░░░░░░░░] 12.3k/32k tokens (38.4%)"},
		{32, "[██░░░] 12.3k/32k tokens (38.4%)"},
		{31, ""},
	} {
		got := Fit(s, false, tc.width)
		if got != tc.want {
			t.Errorf("width %d:\n got %q\nwant %q", tc.width, got, tc.want)
		}
		if n := len([]rune(got)); n > tc.width {
			t.Errorf("width %d: %d columns", tc.width, n)
		}
	}
	if got := Fit(s, true, 50); got != "\x1b[32m[████████░░░░░░░░░░░░]\x1b[0m 12.3k/32k tokens (38.4%)" {
		t.Errorf("coloured: %q", got)
	}
}
