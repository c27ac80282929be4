package termtext

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text · 漢字 👍🏽 C:\\dir", "plain text · 漢字 👍🏽 C:\\dir"},
		{"\x1b[2Jgone", `\x1b[2Jgone`},
		{"\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\a`},
		{"\x1b]0;title\x1b\\", `\x1b]0;title\x1b\`},
		{"over\rwrite", `over\rwrite`},
		{"two\nlines\tand tab", `two\nlines\tand tab`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"abc\u202eevil", `abc\u202eevil`},
		{"\u2066\u2069\u200e\u200f\u061c", `\u2066\u2069\u200e\u200f\u061c`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`},
		{"bad \xff\xc3 utf8", `bad \xff\xc3 utf8`},
		{"real \ufffd stays", "real \ufffd stays"},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBlockKeepsNewlineAndTab(t *testing.T) {
	in := "first\n\tsecond\r\n\x1b[31mred\u202e"
	want := "first\n\tsecond\\r\n\\x1b[31mred\\u202e"
	if got := Block(in); got != want {
		t.Errorf("Block(%q) = %q, want %q", in, got, want)
	}
}

// Every forbidden character is written as strconv.Quote writes it.
func TestEscapesAsStrconvQuote(t *testing.T) {
	for r := rune(0); r <= 0x2100; r++ {
		if !Forbidden(r) {
			continue
		}
		want := strconv.Quote(string(r))
		if got := Line(string(r)); got != want[1:len(want)-1] {
			t.Errorf("Line(%U) = %s, want %s", r, got, want)
		}
	}
	for c := 0x80; c <= 0xff; c++ {
		want := strconv.Quote(string([]byte{byte(c)}))
		if got := Line(string([]byte{byte(c)})); got != want[1:len(want)-1] {
			t.Errorf("Line(byte %#x) = %s, want %s", c, got, want)
		}
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\x1b]52;c;aGk=\x07", "a\u202eb", "\xff\xfe", "\u2028\n\t\r", "\u009b", "back\\slash"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, block := Line(s), Block(s)
		check(t, "Line", s, line, false)
		check(t, "Block", s, block, true)
		if strings.IndexFunc(s, Forbidden) < 0 && utf8.ValidString(s) {
			if line != s {
				t.Fatalf("Line changed printable text %q to %q", s, line)
			}
		}
		// Every backslash in the output starts an escape unless the input had
		// one, so output of backslash-free input reads back exactly: distinct
		// inputs print distinctly.
		if !strings.Contains(s, `\`) {
			for _, out := range []string{line, block} {
				if back := unescape(t, out); back != s {
					t.Fatalf("%q printed as %q reads back as %q", s, out, back)
				}
			}
		}
	})
}

func check(t *testing.T, name, in, out string, block bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q is not UTF-8", name, in, out)
	}
	for _, r := range out {
		if Forbidden(r) && !(block && (r == '\n' || r == '\t')) {
			t.Fatalf("%s(%q) = %q holds %U", name, in, out, r)
		}
	}
}

func unescape(t *testing.T, out string) string {
	t.Helper()
	q := strings.NewReplacer(`"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(out)
	s, err := strconv.Unquote(`"` + q + `"`)
	if err != nil {
		t.Fatalf("%q does not read back: %v", out, err)
	}
	return s
}

func BenchmarkLinePlain(b *testing.B) {
	s := strings.Repeat("an ordinary line of session text, 漢字 included. ", 100)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Line(s)
	}
}

// TestWidthASCII: printable ASCII counts one column a character however a
// string mixes it with wide, zero-width and control characters (Width skips
// the Unicode tables for it).
func TestWidthASCII(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0}, {"hello, world", 12}, {"~ !", 3}, {"漢字", 4}, {"ab漢字cd", 8},
		{"e\u0301", 1}, {"a\u200bb", 2}, {"\x1b[2J", 4}, {"tab\there", 8}, {"😀 ok", 5},
	} {
		if got := Width(tc.s); got != tc.want {
			t.Errorf("Width(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	for c := rune(0x20); c < 0x7f; c++ {
		if got := Width(string(c) + "漢"); got != 3 {
			t.Errorf("Width(%q) = %d, want 3", string(c)+"漢", got)
		}
	}
}
