package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/session/jsonl"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé 漢字 🚀", "plain text, ünïcödé 漢字 🚀"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"bell\x07 tab\t nl\n cr\r del\x7f", `bell\a tab\t nl\n cr\r del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"rtl\u202eevil\u202c \u2066iso\u2069 \u200f", `rtl\u202eevil\u202c \u2066iso\u2069 \u200f`},
		{"line\u2028sep\u2029para", `line\u2028sep\u2029para`},
		{"bad \xff utf8", `bad \xff utf8`},
	} {
		if got := clean(tc.in); got != tc.want {
			t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzClean: whatever a session holds, what reaches the screen is valid UTF-8
// without a control character, bidi control or line separator.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "a\x1b]8;;http://x\x07b", "\u202e\u2028\xc0", "\u009b2J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := clean(s)
		if !utf8.ValidString(out) {
			t.Fatalf("clean(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if termtext.Forbidden(r) {
				t.Fatalf("clean(%q) = %q keeps %U", s, out, r)
			}
		}
	})
}

// TestHostileName: a session named with escape sequences is shown escaped in
// the picker, the preview and the tree.
func TestHostileName(t *testing.T) {
	f := newFixture(t)
	s, err := jsonl.Open(f.example)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetSessionName("evil\x1b]0;pwned\x07\u202e name"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	h := newHarness(t, BrowseOptions{}, 100, 30)
	screens := []string{h.b.View().Content}
	h.keys("enter")
	screens = append(screens, h.b.View().Content)
	for _, sc := range screens {
		if strings.Contains(sc, "\x1b]0;") || strings.Contains(sc, "\u202e") || strings.Contains(sc, "\x07") {
			t.Errorf("the screen carries the name's control sequences: %q", sc)
		}
		if !strings.Contains(sc, `evil\x1b]0;pwned\a\u202e name`) {
			t.Errorf("the screen does not show the name escaped:\n%s", sc)
		}
	}
}
