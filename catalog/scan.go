package catalog

import (
	"bytes"
	"github.com/arborlog/arbor/internal/jsonscan"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a JSON scanner built for listing: one pass over a line both
// validates it (pi skips a line JSON.parse rejects, so arbor must too) and records
// where the members of the top-level object and of its object-valued members are.
// Nothing is decoded until a field is asked for. Strings, which are most of a
// session's bytes, are skipped eight bytes at a time.

// member is one "key": value pair of an object at depth 1 or 2.
type member struct {
	parent     int32 // index of the depth-1 member this one is inside; -1 at depth 1
	key        span  // the key without its quotes
	keyEscaped bool
	nullElem   bool // the value is an array with a null element
	val        span // the whole value, quotes included for strings
}

type span struct{ start, end int32 }

// line is a scanned line: its bytes and the members found in it.
type line struct {
	b       []byte
	members []member
	object  bool // the line is a JSON object (else some other JSON value)
	null    bool // the line is the JSON literal null

	arrayNull bool // the array scanned last had a null element
}

// scanLine validates b as exactly one JSON value surrounded by optional JSON
// white space, recording members of objects down to depth 2. It reports false
// for anything JSON.parse would reject (except invalid UTF-8, which Node replaces
// before parsing).
func (l *line) scan(b []byte) bool {
	l.b = b
	l.members = l.members[:0]
	l.object, l.null = false, false
	if len(b) >= 1<<31 {
		return false
	}
	i := jsonscan.SkipSpace(b, 0)
	if i < len(b) {
		switch b[i] {
		case '{':
			l.object = true
		case 'n':
			l.null = true
		}
	}
	i, ok := l.value(i, 0, -1)
	return ok && jsonscan.SkipSpace(b, i) == len(b)
}

func (l *line) value(i, depth int, parent int32) (int, bool) {
	b := l.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		j, _, ok := jsonscan.StringEscaped(b, i)
		return j, ok
	case c == '{':
		return l.object_(i, depth+1, parent)
	case c == '[':
		return l.array(i, depth+1)
	case c == 't':
		return jsonscan.Literal(b, i, "true")
	case c == 'f':
		return jsonscan.Literal(b, i, "false")
	case c == 'n':
		return jsonscan.Literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return jsonscan.Number(b, i)
	}
	return i, false
}

// object_ scans an object; members at depth 1 and 2 are recorded.
func (l *line) object_(i, depth int, parent int32) (int, bool) {
	if depth > jsonscan.MaxDepth {
		return i, false
	}
	b := l.b
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		ks := i
		var ok, esc bool
		if i, esc, ok = jsonscan.StringEscaped(b, i); !ok {
			return i, false
		}
		ke := i
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		vs := i
		idx := int32(-1)
		if depth <= 2 {
			idx = int32(len(l.members))
			l.members = append(l.members, member{parent: parent, key: span{int32(ks + 1), int32(ke - 1)}, keyEscaped: esc})
		}
		child := int32(-1)
		if depth == 1 {
			child = idx
		}
		if i, ok = l.value(i, depth, child); !ok {
			return i, false
		}
		if idx >= 0 {
			m := &l.members[idx]
			m.val = span{int32(vs), int32(i)}
			m.nullElem = b[vs] == '[' && l.arrayNull
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func (l *line) array(i, depth int) (int, bool) {
	if depth > jsonscan.MaxDepth {
		return i, false
	}
	b := l.b
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		l.arrayNull = false
		return i + 1, true
	}
	null := false
	for {
		var ok bool
		null = null || (i < len(b) && b[i] == 'n')
		if i, ok = l.value(i, depth, -1); !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case ']':
			l.arrayNull = null
			return i + 1, true
		default:
			return i, false
		}
	}
}

// field returns the value of the last member named key inside parent (-1 for
// the top level): JSON.parse keeps the last of duplicate names.
func (l *line) field(parent int32, key string) (span, bool) {
	found := -1
	for i := range l.members {
		m := &l.members[i]
		if m.parent != parent {
			continue
		}
		if l.keyIs(m, key) {
			found = i
		}
	}
	if found < 0 {
		return span{}, false
	}
	return l.members[found].val, true
}

// fieldIndex is field for a depth-1 member, returning its index (to look inside it).
func (l *line) fieldIndex(key string) int32 {
	found := int32(-1)
	for i := range l.members {
		m := &l.members[i]
		if m.parent == -1 && l.keyIs(m, key) {
			found = int32(i)
		}
	}
	return found
}

func (l *line) keyIs(m *member, key string) bool {
	k := l.b[m.key.start:m.key.end]
	if !m.keyEscaped {
		return string(k) == key
	}
	s, _ := unquote(l.b[m.key.start-1 : m.key.end+1])
	return s == key
}

func (l *line) raw(s span) []byte { return l.b[s.start:s.end] }

// str returns a string value (false when the value is not a string).
func (l *line) str(s span) (string, bool) {
	v := l.raw(s)
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	return unquote(v)
}

// strIs reports whether the value at s is the string want. Unlike str, it
// does not copy the string: a line's type and role are checked for every line.
func (l *line) strIs(s span, want string) bool {
	v := l.raw(s)
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		// Without escapes the string is its bytes: invalid UTF-8, which
		// unquote would replace, cannot equal want anyway.
		return string(v[1:len(v)-1]) == want
	}
	got, _ := unquote(v)
	return got == want
}

// num returns a number value as JSON.parse reads it (false when not a number).
func (l *line) num(s span) (float64, bool) {
	v := l.raw(s)
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	if len(v) <= 15 { // a whole number of up to 15 digits (every Unix ms time) is exact
		n := int64(0)
		digits := true
		for _, c := range v {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			return float64(n), true
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil { // out of range: JSON.parse gives ±Infinity
		return math.Inf(int(1 - 2*boolInt(v[0] == '-'))), true
	}
	return f, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unquote decodes a validated JSON string literal (quotes included). Invalid
// UTF-8 and lone surrogates become U+FFFD, as Node's decoding and JSON.stringify
// leave them when the text is printed again.
func unquote(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	s := q[1 : len(q)-1]
	for _, c := range s {
		if c == '\\' || c >= utf8.RuneSelf {
			return string(appendUnquoted(make([]byte, 0, len(s)), q)), true
		}
	}
	return string(s), true
}

// appendUnquoted appends the decoded text of a validated JSON string literal
// (quotes included) to dst.
func appendUnquoted(dst, q []byte) []byte { return appendUnquotedMax(dst, q, math.MaxInt) }

// appendUnquotedMax is appendUnquoted that stops once dst holds limit bytes:
// a 200 MB string then costs no more than its first limit bytes. It never
// cuts a character, so dst may end up to 3 bytes past limit.
func appendUnquotedMax(dst, q []byte, limit int) []byte {
	s := q[1 : len(q)-1]
	for i := 0; i < len(s) && len(dst) < limit; {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := rune(hex4(s[i+2:]))
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2 := rune(hex4(s[i+2:])); utf16.DecodeRune(r, r2) != utf8.RuneError {
							dst = utf8.AppendRune(dst, utf16.DecodeRune(r, r2))
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // " \ /
				dst = append(dst, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			// Copy the run of plain ASCII at once.
			j, end := i+1, len(s)
			if room := limit - len(dst); room < end-i {
				end = i + room
			}
			for j < end && s[j] != '\\' && s[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n <= 1 {
				n = invalidRun(s[i:])
				dst = utf8.AppendRune(dst, r)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
		}
	}
	return dst
}

func hex4(b []byte) uint16 {
	var v uint16
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint16(c - 'a' + 10)
		default:
			v |= uint16(c - 'A' + 10)
		}
	}
	return v
}

// invalidRun returns how many bytes of an invalid UTF-8 sequence the WHATWG
// decoder (Node's) turns into one U+FFFD: a valid lead byte together with the
// continuation bytes that could still have completed it.
func invalidRun(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c >= 0xE0 && c <= 0xEF:
		need = 2
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c >= 0xF0 && c <= 0xF4:
		need = 3
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}

// elements calls f with the span of each element of an already validated array.
func elements(b []byte, s span, f func(span)) {
	var l line
	l.b = b
	i := jsonscan.SkipSpace(b, int(s.start)+1)
	if i >= int(s.end) || b[i] == ']' {
		return
	}
	for {
		j, ok := l.value(i, 3, -1)
		if !ok {
			return
		}
		f(span{int32(i), int32(j)})
		i = jsonscan.SkipSpace(b, j)
		if i >= int(s.end) || b[i] != ',' {
			return
		}
		i = jsonscan.SkipSpace(b, i+1)
	}
}

// objectMembers calls f with each key and value of an already validated
// object. A key without escapes is a window on b, not a copy: f must not keep it.
func objectMembers(b []byte, s span, f func(key string, v span)) {
	var l line
	l.b = b
	i := jsonscan.SkipSpace(b, int(s.start)+1)
	if i >= int(s.end) || b[i] == '}' {
		return
	}
	for {
		ke, _, ok := jsonscan.StringEscaped(b, i)
		if !ok {
			return
		}
		key, plain := jsonscan.Plain(b[i:ke])
		if !plain {
			key, _ = unquote(b[i:ke])
		}
		i = jsonscan.SkipSpace(b, ke)
		i = jsonscan.SkipSpace(b, i+1)
		j, ok := l.value(i, 3, -1)
		if !ok {
			return
		}
		f(key, span{int32(i), int32(j)})
		i = jsonscan.SkipSpace(b, j)
		if i >= int(s.end) || b[i] != ',' {
			return
		}
		i = jsonscan.SkipSpace(b, i+1)
	}
}
