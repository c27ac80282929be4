package cli

import (
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// lazyTextSize is the message size from which the tree reads a user
// message's text only as far as a row shows it, instead of decoding it whole.
const lazyTextSize = 1 << 20

// lazyUser reads a large user message for the tree: its fields but its content
// decoded as message would decode them, and its text as a prefixFunc that
// unquotes only as much as it is asked for. ok is false when the message is
// not such a message (message then decodes it whole).
func lazyUser(e *session.Entry) (*msgView, bool) {
	if e.Role() != session.RoleUser || len(e.Raw()) < lazyTextSize {
		return nil, false
	}
	msg, err := e.Message()
	if err != nil {
		return nil, false
	}
	raw := msg.Raw()
	ms, ok := objectMembers(raw)
	if !ok {
		return nil, false
	}
	// The fields but the content, decoded together as message decodes them.
	head := []byte{'{'}
	var content []byte
	for _, m := range ms {
		if m.name == "content" {
			content = m.value // the last one wins, as in JSON.parse
			continue
		}
		if len(head) > 1 {
			head = append(head, ',')
		}
		head = append(head, m.rawName...)
		head = append(head, ':')
		head = append(head, m.value...)
	}
	head = append(head, '}')
	var v msgView
	if json.Unmarshal(head, &v.msgHead, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) != nil || v.Role != session.RoleUser {
		return nil, false
	}
	v.text = contentTextPrefix(content)
	v.image = func() bool { return contentHasImage(content) }
	return &v, true
}

// contentHasImage reports whether a content value as written is an array
// with a block of type image.
func contentHasImage(content []byte) bool {
	if len(content) == 0 || content[0] != '[' {
		return false
	}
	for i := 1; ; {
		i = jsonscan.SkipSpace(content, i)
		if i >= len(content) || content[i] == ']' {
			return false
		}
		if content[i] == ',' {
			i = jsonscan.SkipSpace(content, i+1)
		}
		end, ok := skipValue(content, i)
		if !ok {
			return false
		}
		if content[i] == '{' && blockType(content[i:end]) == "image" {
			return true
		}
		i = end
	}
}

// blockType is the type of a content block as written, "" when it is not a string.
func blockType(b []byte) string {
	ms, ok := objectMembers(b)
	if !ok {
		return ""
	}
	var typ []byte
	for _, m := range ms {
		if m.name == "type" {
			typ = m.value
		}
	}
	if len(typ) == 0 || typ[0] != '"' {
		return ""
	}
	t, _ := jsontext.AppendUnquote(nil, typ)
	return string(t)
}

// rawMember is one member of a JSON object, as it lies in the text.
type rawMember struct {
	name    string // unquoted
	rawName []byte // as written, quotes included
	value   []byte
}

// objectMembers splits a JSON object known to be valid into its members
// without decoding their values.
func objectMembers(b []byte) ([]rawMember, bool) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	var out []rawMember
	for i < len(b) && b[i] != '}' {
		if b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end, ok := jsonscan.String(b, i)
		if !ok {
			return nil, false
		}
		rawName := b[i:end]
		name, err := jsontext.AppendUnquote(nil, rawName)
		if err != nil {
			return nil, false
		}
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		out = append(out, rawMember{string(name), rawName, b[i:vend]})
		i = jsonscan.SkipSpace(b, vend)
	}
	return out, i < len(b)
}

// skipValue returns the offset after the JSON value at i of b, known to be valid.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return jsonscan.String(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, ok := jsonscan.String(b, i)
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

// contentTextPrefix is the prefixFunc of Content.Text("") of a content value
// as written: a string, or an array whose objects of type text carry text.
// n counts bytes as written, so it gives at least n/6 bytes of text.
func contentTextPrefix(content []byte) prefixFunc {
	return func(n int) (string, bool) {
		if len(content) == 0 {
			return "", true
		}
		switch content[0] {
		case '"':
			s, whole := unquotePrefix(content, n)
			return string(s), whole
		case '[':
		default:
			return "", true
		}
		var out []byte
		i := 1
		for {
			i = jsonscan.SkipSpace(content, i)
			if i >= len(content) || content[i] == ']' {
				return string(out), true
			}
			if content[i] == ',' {
				i = jsonscan.SkipSpace(content, i+1)
			}
			end, ok := skipValue(content, i)
			if !ok {
				return string(out), true
			}
			if content[i] == '{' {
				if text, ok := blockText(content[i:end]); ok {
					if n >= 0 && len(out)+len(text) > n+2 {
						s, _ := unquotePrefix(text, n-len(out))
						return string(append(out, s...)), false
					}
					s, _ := unquotePrefix(text, -1)
					out = append(out, s...)
				}
			}
			i = end
		}
	}
}

// blockText is the text of a content block of type text, as written (a JSON
// string); ok is false for other blocks. Like parseBlock, the last type and
// text win and a field that is not a string counts as empty.
func blockText(b []byte) ([]byte, bool) {
	if blockType(b) != "text" {
		return nil, false
	}
	ms, _ := objectMembers(b)
	var text []byte
	for _, m := range ms {
		if m.name == "text" {
			text = m.value
		}
	}
	if len(text) == 0 || text[0] != '"' {
		return []byte(`""`), true
	}
	return text, true
}

// unquotePrefix unquotes the JSON string q (quotes included) as far as its
// first n bytes as written, cut before an escape or a character they would
// split; n < 0, or n past the end, unquotes all of it. Invalid UTF-8 becomes
// U+FFFD, as the decoder makes it.
func unquotePrefix(q []byte, n int) ([]byte, bool) {
	if n < 0 || n+2 >= len(q) {
		s, _ := jsontext.AppendUnquote(nil, q)
		return s, true
	}
	cut, i := 1, 1
	for i < 1+n {
		cut = i
		if q[i] == '\\' {
			if q[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
		} else {
			i++
		}
	}
	if i <= 1+n {
		cut = i
	}
	for cut > 1 && !utf8.RuneStart(q[cut]) { // escapes are ASCII: this never enters one
		cut--
	}
	buf := make([]byte, cut+1)
	copy(buf, q[:cut])
	buf[cut] = '"'
	s, _ := jsontext.AppendUnquote(nil, buf)
	return s, false
}
