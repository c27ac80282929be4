package compaction

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/arborlog/arbor/internal/js"
	"github.com/arborlog/arbor/internal/jsonscan"
)

// pi measures text in JavaScript string lengths (UTF-16 code units) and
// serializes tool arguments with JSON.stringify; the plan depends on both, so
// they are reproduced here exactly.

// jsLen is JavaScript's s.length: the number of UTF-16 code units.
func jsLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// jsLess orders strings as JavaScript's default sort does: by UTF-16 code units.
func jsLess(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return slices.Compare(utf16.Encode([]rune{ra}), utf16.Encode([]rune{rb}))
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

var decodeOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// jsStringify is JSON.stringify(JSON.parse(raw)): compact, keys in JavaScript's
// property order (array-index keys ascending first, then the others in order of
// first appearance, the last duplicate's value winning), strings escaped as
// JavaScript escapes them and numbers printed as JavaScript prints them.
// It reports false when raw is not valid JSON.
func jsStringify(raw jsontext.Value) (string, bool) {
	var b strings.Builder
	if !writeJS(&b, raw) {
		return "", false
	}
	return b.String(), true
}

// jsStringifiedLen is jsLen(jsStringify(raw)) for the JSON most tool
// arguments are, measured without making the string: strings without
// escapes, integers of up to 15 digits (JavaScript writes them back as they
// are), true, false, null, and objects whose keys are not repeated and no
// array index (so JavaScript keeps their order). ok is false for anything
// else, which jsStringify measures.
func jsStringifiedLen(raw []byte) (int, bool) {
	n, end, ok := plainJSLen(raw, jsonscan.SkipSpace(raw, 0))
	return n, ok && jsonscan.SkipSpace(raw, end) == len(raw)
}

// plainJSLen is jsStringifiedLen of the value at i of b, and where it ends.
func plainJSLen(b []byte, i int) (n, end int, ok bool) {
	if i >= len(b) {
		return 0, i, false
	}
	switch c := b[i]; {
	case c == '"':
		s, end, ok := jsonscan.PlainAt(b, i)
		return jsLen(s) + 2, end, ok
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		n, i = 1, jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return 2, i + 1, true
		}
		keys := make([]string, 0, 8)
		for {
			if c == '{' {
				key, j, ok := jsonscan.PlainAt(b, i)
				if _, index := arrayIndex(key); !ok || index || slices.Contains(keys, key) {
					return 0, j, false
				}
				keys = append(keys, key)
				if i = jsonscan.SkipSpace(b, j); i >= len(b) || b[i] != ':' {
					return 0, i, false
				}
				n += jsLen(key) + 3 // the quotes and the colon
				i = jsonscan.SkipSpace(b, i+1)
			}
			m, j, ok := plainJSLen(b, i)
			if !ok {
				return 0, j, false
			}
			n += m
			switch i = jsonscan.SkipSpace(b, j); {
			case i >= len(b):
				return 0, i, false
			case b[i] == closer:
				return n + 1, i + 1, true
			case b[i] != ',':
				return 0, i, false
			}
			n++
			i = jsonscan.SkipSpace(b, i+1)
		}
	case c == 't' || c == 'f' || c == 'n':
		lit, end, ok := jsonscan.Keyword(b, i)
		return len(lit), end, ok
	case c == '-' || '0' <= c && c <= '9':
		end, ok := jsonscan.ExactInteger(b, i) // JavaScript writes it back as it is
		return end - i, end, ok
	}
	return 0, i, false
}

func writeJS(b *strings.Builder, raw jsontext.Value) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw.Kind() {
	case '{':
		members, ok := jsMembers(raw)
		if !ok {
			return false
		}
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSString(b, m.key)
			b.WriteByte(':')
			if !writeJS(b, m.val) {
				return false
			}
		}
		b.WriteByte('}')
	case '[':
		var elems []jsontext.Value
		if json.Unmarshal(raw, &elems, decodeOptions) != nil {
			return false
		}
		b.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				b.WriteByte(',')
			}
			if !writeJS(b, e) {
				return false
			}
		}
		b.WriteByte(']')
	case '"':
		var s string
		if json.Unmarshal(raw, &s, decodeOptions) != nil {
			return false
		}
		writeJSString(b, s)
	case '0':
		var f float64
		if json.Unmarshal(raw, &f, decodeOptions) != nil {
			return false
		}
		b.WriteString(js.JSONNumber(f))
	case 't', 'f', 'n':
		b.Write(raw)
	default:
		return false
	}
	return true
}

// kv is one property of a JavaScript object parsed from JSON.
type kv struct {
	key string
	val jsontext.Value
}

// jsMembers returns an object's properties in the order JavaScript iterates
// them after JSON.parse: array-index keys ascending first, then the others in
// order of first appearance, the last duplicate's value winning.
func jsMembers(raw jsontext.Value) ([]kv, bool) {
	var members []kv
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		key := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		if i := slices.IndexFunc(members, func(m kv) bool { return m.key == key }); i >= 0 {
			members[i].val = val.Clone()
		} else {
			members = append(members, kv{key, val.Clone()})
		}
	}
	slices.SortStableFunc(members, func(x, y kv) int {
		xi, xok := arrayIndex(x.key)
		yi, yok := arrayIndex(y.key)
		switch {
		case xok && yok:
			return int(xi - yi)
		case xok:
			return -1
		case yok:
			return 1
		}
		return 0
	})
	return members, true
}

// arrayIndex reports whether a property key is an array index (a canonical
// integer below 2³²−1), which JavaScript orders before every other key.
func arrayIndex(k string) (int64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	var n int64
	for i := 0; i < len(k); i++ { // digits only: no error made for every other key
		if k[i] < '0' || k[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(k[i]-'0')
	}
	return n, n < math.MaxUint32
}

func writeJSString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
