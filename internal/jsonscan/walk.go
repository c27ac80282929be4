package jsonscan

import (
	"unicode/utf8"
	"unsafe"
)

// The walks below read JSON text already checked (a loaded session's lines):
// they find where values end without checking them again.

// SkipValue returns the offset after the JSON value at i of b, known to be valid.
func SkipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, ok := String(b, i)
				if !ok {
					return j, false
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, true
		}
		i++
	}
	return i, true
}

// Members calls fn with the name (as written, without its quotes) and the
// value of each member of the JSON object obj, known to be valid, in order,
// until fn returns false. It returns false then, when obj is not an object,
// or when a name has an escape (so that a caller matching names as written
// never misses one).
func Members(obj []byte, fn func(name, value []byte) bool) bool {
	_, ok := MembersAt(obj, 0, func(name []byte, at int) (int, bool) {
		end, ok := SkipValue(obj, at)
		return end, ok && fn(name, obj[at:end])
	})
	return ok
}

// MembersAt is Members of the object at offset i of b, for a caller that
// reads a value where it starts: fn gets the offset of each value in b and
// returns the offset after it, having read it (or SkipValue), so that a
// value read is walked once rather than first skipped. It returns the offset
// after the object.
func MembersAt(b []byte, i int, fn func(name []byte, at int) (int, bool)) (int, bool) {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		if b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		end, escaped, ok := StringEscaped(b, i)
		if !ok || escaped {
			return i, false
		}
		name := b[i+1 : end-1]
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		vend, ok := fn(name, SkipSpace(b, i+1))
		if !ok {
			return vend, false
		}
		i = SkipSpace(b, vend)
	}
	return i + 1, i < len(b)
}

// Elements calls fn with each element of the JSON array arr, known to be
// valid, until fn returns false; it returns false then or when arr is not an array.
func Elements(arr []byte, fn func(value []byte) bool) bool {
	_, ok := ElementsAt(arr, 0, func(at int) (int, bool) {
		end, ok := SkipValue(arr, at)
		return end, ok && fn(arr[at:end])
	})
	return ok
}

// ElementsAt is Elements of the array at offset i of b, fn reading each
// element where it starts as MembersAt's does. It returns the offset after
// the array.
func ElementsAt(b []byte, i int, fn func(at int) (int, bool)) (int, bool) {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return i, false
	}
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		if b[i] == ',' {
			i = SkipSpace(b, i+1)
		}
		end, ok := fn(i)
		if !ok {
			return end, false
		}
		i = SkipSpace(b, end)
	}
	return i + 1, i < len(b)
}

// Plain is the string a JSON string value without escapes holds, as a window
// on v (no copy: v must never be modified); ok is false for any other value,
// an escape or invalid UTF-8, which only the decoder reads right.
func Plain(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	end, escaped, ok := StringEscaped(v, 0)
	if !ok || escaped || end != len(v) {
		return "", false
	}
	s := v[1 : len(v)-1]
	if !utf8.Valid(s) {
		return "", false
	}
	if len(s) == 0 {
		return "", true
	}
	return unsafe.String(&s[0], len(s)), true
}

// PlainAt is Plain of the JSON string at i of b, and the offset after it.
func PlainAt(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	end, ok := String(b, i)
	if !ok {
		return "", end, false
	}
	s, ok := Plain(b[i:end])
	return s, end, ok
}

// Bool is the JSON true or false v holds; ok is false for any other value.
func Bool(v []byte) (b, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Seen is the set of fields an object walk has met, one bit each, so that
// the walk can give up on a repeated field (which the decoder reads otherwise).
type Seen uint32

// First marks bit and reports whether it was not marked before.
func (s *Seen) First(bit uint32) bool {
	if uint32(*s)&bit != 0 {
		return false
	}
	*s |= Seen(bit)
	return true
}
