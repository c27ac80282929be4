package compaction

import (
	"strings"
	"testing"
)

// wholeClip is clip as it was first written: the whole string made runes.
func wholeClip(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// FuzzClip checks clip and clipLine against the whole-string cut they avoid
// making: the same text for every input, invalid UTF-8 and white space
// of every kind included.
func FuzzClip(f *testing.F) {
	for _, s := range []string{"", " ", "abc", "  a \t b\n\nc  ", "héllo wörld", "\xff\xfe x", "a\u0085b\u00a0c", strings.Repeat("word ", 50),
		"a  b", "a\vb", "a\fb", "a\x01b", "ab c", "abcde", " abc", "abc ", "a\x85"} {
		for _, n := range []int{0, 1, 3, 5, 80} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(0, n%200)
		if got, want := clip(s, n), wholeClip(s, n); got != want {
			t.Errorf("clip(%q, %d) = %q; want %q", s, n, got, want)
		}
		if got, want := clipLine(s, n), wholeClip(strings.Join(strings.Fields(s), " "), n); got != want {
			t.Errorf("clipLine(%q, %d) = %q; want %q", s, n, got, want)
		}
	})
}
