// Package termtext makes untrusted text safe to print on a terminal. Everything
// a session file, a provider or a user supplied (names, ids, labels, paths,
// message text, tool output, snippets, error messages quoting them) reaches a
// terminal only through Line or Block.
//
// The rule: a character a terminal would act on instead of showing is printed
// as the escape Go's strconv.Quote writes for it, never emitted. That covers
//
//   - C0 control characters (U+0000–U+001F, including ESC, CR and BEL) and DEL:
//     \a \b \f \n \r \t \v, else \xHH;
//   - C1 control characters (U+0080–U+009F, such as the one-byte CSI U+009B): \u00HH;
//   - bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
//     U+061C) and the line and paragraph separators U+2028, U+2029: \uHHHH;
//   - bytes that are not UTF-8: \xHH.
//
// Line escapes newline and tab too, for one-line fields (a name, a list cell,
// an error message); Block keeps them, for multi-line text (a message body, a
// tool's output). Text without any of these passes unchanged, so the output
// of text that has no backslash can be read back exactly. --json output does
// not go through here: JSON escapes what it must and stays exact.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every character a terminal would act on, newline and tab
// included, replaced by its visible escape.
func Line(s string) string { return escape(s, false) }

// Block returns s with every character a terminal would act on, except newline
// and tab, replaced by its visible escape.
func Block(s string) string { return escape(s, true) }

// Forbidden reports whether r must never reach a terminal as it is.
// Newline and tab are forbidden too; Block lets them through.
func Forbidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func escape(s string, block bool) string {
	i := firstUnsafe(s, block)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case !Forbidden(r), block && (r == '\n' || r == '\t'):
			b.WriteString(s[i : i+n])
		case r < 0x20:
			if e := short[r]; e != "" {
				b.WriteString(e)
			} else {
				writeHex(&b, `\x`, uint32(r), 2)
			}
		case r == 0x7f:
			b.WriteString(`\x7f`)
		default:
			writeHex(&b, `\u`, uint32(r), 4)
		}
		i += n
	}
	return b.String()
}

// firstUnsafe returns the offset of the first byte escape would change, or -1.
func firstUnsafe(s string, block bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(block && (c == '\n' || c == '\t')) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || Forbidden(r) {
			return i
		}
		i += n
	}
	return -1
}

var short = [0x20]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`}

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hex[v>>uint(shift)&0xf])
	}
}

// Width is the number of terminal columns s takes (s as printed, so after
// Line or Block).
func Width(s string) int {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f { // printable ASCII: one column each
		i++
	}
	w := i
	for _, r := range s[i:] {
		w += runeWidth(r)
	}
	return w
}

// Truncate returns the longest prefix of s that fits in width columns.
func Truncate(s string, width int) string {
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > width {
			return s[:i]
		}
		w += runeWidth(r)
	}
	return s
}

// runeWidth is the number of terminal columns r takes: 0 for combining marks
// and format characters, 2 for East Asian wide and emoji, 1 otherwise.
func runeWidth(r rune) int {
	switch {
	case r >= 0x20 && r < 0x7f: // printable ASCII, most of what is shown
		return 1
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
