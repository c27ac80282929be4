package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
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

// hostileTyped is what a user can type or paste that the text fields would
// draw as it is: bidirectional controls and line separators (the fields drop
// C0 and C1 themselves). Pasted, the ESC and the BEL are shown escaped too.
const hostileTyped = "abc\u202eRTL\u2066iso\u200f\u061c\u2028sep"

// assertDrawn fails when a screen, the styles (SGR) taken off, holds a
// character a terminal would act on other than newline.
func assertDrawn(t *testing.T, what, screen string) {
	t.Helper()
	for _, r := range sgr.ReplaceAllString(screen, "") {
		if r != '\n' && termtext.Forbidden(r) {
			t.Errorf("%s holds %U: %q", what, r, screen)
			return
		}
	}
}

// TestHostileTyping: what the user types or pastes into the chat's editor,
// the picker's search or the tree's label field is shown escaped, as a
// session's text is (the editor keeps the escaped text: a prompt the user
// recalls from the history is put there escaped the same way).
func TestHostileTyping(t *testing.T) {
	const seen = `abc\u202eRTL\u2066iso\u200f\u061c\u2028sep`
	h := newChat(t)
	h.typeText(hostileTyped)
	h.send(tea.PasteMsg{Content: " pasted\x1b]52;c;ZXZpbA==\x07" + hostileTyped + "\r\nnext\rlast"})
	want := seen + ` pasted\x1b]52;c;ZXZpbA==\a` + seen + "\nnext\nlast"
	if got := h.c.editor.Value(); got != want {
		t.Errorf("the editor holds %q, want %q", got, want)
	}
	assertDrawn(t, "the chat", h.c.View().Content)
	golden(t, "chat-typed-hostile", h.screen())

	f := newFixture(t)
	b := newHarness(t, BrowseOptions{}, 100, 30)
	b.typeText(hostileTyped)
	b.send(tea.PasteMsg{Content: hostileTyped})
	if got := b.b.picker.query.Value(); got != seen+seen {
		t.Errorf("the picker's search holds %q, want %q", got, seen+seen)
	}
	assertDrawn(t, "the picker", b.b.View().Content)
	golden(t, "picker-typed-hostile", b.screen(f))
}
