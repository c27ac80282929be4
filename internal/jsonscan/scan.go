// Package jsonscan holds the byte-level pieces of arbor's JSON scanners: white
// space, literals, numbers and strings, checked exactly as JSON.parse checks them
// (invalid UTF-8 is not an error). The session loader and the catalog's listing
// scanner build their validating walks from these, so both accept the same lines.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// MaxDepth bounds nesting, as encoding/json does, so hostile input cannot exhaust the stack.
const MaxDepth = 10000

// SkipSpace returns the offset of the first byte at or after i that is not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Literal checks that lit (true, false or null) starts at i and returns the offset after it.
func Literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Number expects a number to start at i (b[i] is '-' or a digit) and returns the offset after it.
func Number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		start := i + 1
		if i = digits(b, start); i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = digits(b, start); i == start {
			return i, false
		}
	}
	return i, true
}

// ExactInteger returns the offset after the JSON number at i of b when it is
// an integer of up to 15 digits, not -0: a float64 holds it exactly, and
// both encoding/json and JavaScript write it back as it is written. ok is
// false for any other number (a fraction, an exponent, more digits, a
// leading zero) and for anything else.
func ExactInteger(b []byte, i int) (int, bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	start := j
	j = digits(b, start)
	switch n := j - start; {
	case n == 0 || n > 15 || b[start] == '0' && (n > 1 || start > i): // no digit, too many to stay exact, a leading zero, -0
		return j, false
	case j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E'):
		return j, false
	}
	return j, true
}

// Keyword returns true, false or null when b holds it at i, and the offset
// after it.
func Keyword(b []byte, i int) (string, int, bool) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if end, ok := Literal(b, i, lit); ok {
			return lit, end, true
		}
	}
	return "", i, false
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// String expects b[i] == '"' and returns the offset after the closing quote.
func String(b []byte, i int) (int, bool) {
	j, _, ok := StringEscaped(b, i)
	return j, ok
}

// StringEscaped is String that also reports whether the string holds an escape.
func StringEscaped(b []byte, i int) (int, bool, bool) {
	i++
	escaped := false
	for {
		i = skipPlain(b, i)
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return i, escaped, false
		}
		switch b[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			escaped = true
			if i+1 >= len(b) {
				return i, escaped, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, escaped, false
				}
				for _, h := range b[i+2 : i+6] {
					if !IsHex(h) {
						return i, escaped, false
					}
				}
				i += 6
			default:
				return i, escaped, false
			}
		default: // a control character
			return i, escaped, false
		}
	}
}

// skipPlain skips eight bytes at a time while none of them is a quote, a
// backslash or a control character, and returns the offset of the first such
// byte, or of the last few bytes of b: message text is most of a session file,
// and this is where scanning spends its time.
func skipPlain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		q := v ^ ('"' * ones)
		bs := v ^ ('\\' * ones)
		// The high bit of the first byte that is < 0x20, == '"' or == '\\' is
		// set, and no bit below it. (A borrow from that byte may set bits of the
		// bytes after it, which are not looked at.)
		if m := ((v - 0x20*ones) | (q - ones) | (bs - ones)) &^ (v | q | bs) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}
