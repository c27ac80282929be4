package treeview

import (
	"bytes"
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// lazyTextSize is the message size from which the tree reads a user
// message's text only as far as a row shows it, instead of decoding it whole.
const lazyTextSize = 1 << 20

// lazyUser reads a large user message for the tree into m: its fields but its
// content decoded as message would decode them, and its text as a prefixFunc
// that unquotes only as much as it is asked for. It returns false, m
// untouched, when the message is not such a message (message then decodes it
// whole).
func lazyUser(e *session.Entry, m *msgView) bool {
	if e.Role() != session.RoleUser || len(e.Raw()) < lazyTextSize {
		return false
	}
	// The message as the loader found it, walked once: the line was checked
	// when the file was loaded, so values are skipped, not checked again.
	raw := e.MessageRaw()
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	ms, _, ok := objectMembersAt(raw, 0)
	if !ok {
		return false
	}
	// The fields but the content, decoded together as message decodes them.
	head := []byte{'{'}
	var content []byte
	var blocks [][]rawMember
	for _, m := range ms {
		if m.name == "content" {
			content, blocks = m.value, m.objects // the last one wins, as in JSON.parse
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
		return false
	}
	v.text = contentTextPrefix(content, blocks)
	v.image = func() bool { return contentHasImage(blocks) }
	*m = v
	return true
}

// contentHasImage reports whether a content array, split into its blocks,
// has a block of type image.
func contentHasImage(blocks [][]rawMember) bool {
	for _, b := range blocks {
		if blockType(b) == "image" {
			return true
		}
	}
	return false
}

// blockType is the type of a content block as written, "" when it is not a string.
func blockType(ms []rawMember) string {
	var typ []byte
	for _, m := range ms {
		if m.name == "type" {
			typ = m.value
		}
	}
	return stringValue(typ)
}

// rawMember is one member of a JSON object, as it lies in the text.
type rawMember struct {
	name    string // unquoted
	rawName []byte // as written, quotes included
	value   []byte
	objects [][]rawMember // for an array value: the members of each object in it
}

// objectMembersAt splits the JSON object at i of b, known to be valid, into
// its members without decoding their values, and returns the offset after it.
// The objects in an array value are split too, in the same pass.
func objectMembersAt(b []byte, i int) ([]rawMember, int, bool) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return nil, i, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	var out []rawMember
	for i < len(b) && b[i] != '}' {
		if b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return nil, i, false
		}
		end, ok := jsonscan.String(b, i)
		if !ok {
			return nil, i, false
		}
		rawName := b[i:end]
		name, _ := jsontext.AppendUnquote(nil, rawName) // invalid UTF-8 becomes U+FFFD, as the decoder reads it
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, i, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		m := rawMember{name: string(name), rawName: rawName}
		var vend int
		if i < len(b) && b[i] == '[' {
			m.objects, vend, ok = arrayObjects(b, i)
		} else {
			vend, ok = jsonscan.SkipValue(b, i)
		}
		if !ok {
			return nil, i, false
		}
		m.value = b[i:vend]
		out = append(out, m)
		i = jsonscan.SkipSpace(b, vend)
	}
	if i >= len(b) {
		return nil, i, false
	}
	return out, i + 1, true
}

// arrayObjects walks the array at i of b: the members of each object in it,
// in order, and the offset after it.
func arrayObjects(b []byte, i int) ([][]rawMember, int, bool) {
	var out [][]rawMember
	i = jsonscan.SkipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		if b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
		var end int
		var ok bool
		if i < len(b) && b[i] == '{' {
			var ms []rawMember
			ms, end, ok = objectMembersAt(b, i)
			out = append(out, ms)
		} else {
			end, ok = jsonscan.SkipValue(b, i)
		}
		if !ok {
			return nil, i, false
		}
		i = jsonscan.SkipSpace(b, end)
	}
	if i >= len(b) {
		return nil, i, false
	}
	return out, i + 1, true
}

// contentTextPrefix is the prefixFunc of Content.Text("") of a content value
// as written: a string, or an array whose objects (blocks, split by
// arrayObjects) of type text carry text. n counts bytes as written, so it
// gives at least n/6 bytes of text.
func contentTextPrefix(content []byte, blocks [][]rawMember) prefixFunc {
	return func(n int) (string, bool) {
		if len(content) == 0 || content[0] != '"' && content[0] != '[' {
			return "", true
		}
		if content[0] == '"' {
			s, whole := unquotePrefix(content, n)
			return string(s), whole
		}
		var out []byte
		for _, b := range blocks {
			text, ok := blockText(b)
			if !ok {
				continue
			}
			if n >= 0 && len(out)+len(text) > n+2 {
				s, _ := unquotePrefix(text, n-len(out))
				return string(append(out, s...)), false
			}
			s, _ := unquotePrefix(text, -1)
			out = append(out, s...)
		}
		return string(out), true
	}
}

// blockText is the text of a content block of type text, as written (a JSON
// string); ok is false for other blocks. Like parseBlock, the last type and
// text win and a field that is not a string counts as empty.
func blockText(ms []rawMember) ([]byte, bool) {
	var typ, text []byte
	for _, m := range ms {
		switch m.name {
		case "type":
			typ = m.value
		case "text":
			text = m.value
		}
	}
	if stringValue(typ) != "text" {
		return nil, false
	}
	if len(text) == 0 || text[0] != '"' {
		return []byte(`""`), true
	}
	return text, true
}

// stringValue is the string a JSON value as written holds, "" when it is not a string.
func stringValue(v []byte) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	s, _ := jsontext.AppendUnquote(nil, v)
	return string(s)
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

// quickMessage reads a message entry for the tree into m in one walk of its JSON text,
// without the decoder: the fields of msgHead and, for every role but
// toolResult, the content's string or its blocks' type, text, id, name and
// arguments (what the tree shows; a thinking block's text is skipped). Strings
// point into the entry's line, which is never modified. ok is false when the
// message holds anything the walk might read otherwise than the decoder (an
// escaped name or string, a repeated field, a value of another kind, a second
// "message" in the entry): message then decodes it. The content's blocks are
// read into *blocks, kept for the next message, when blocks is not nil.
func quickMessage(e *session.Entry, m *msgView, blocks *[]session.Block) bool {
	line, raw := e.Raw(), e.MessageRaw()
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	// The envelope around the message: a second "message" there (written
	// plainly or with escapes) would be merged into it by the decoder.
	start := cap(line) - cap(raw)
	if start < 0 || start+len(raw) > len(line) {
		return false
	}
	if bytes.IndexByte(line[:start], '\\') >= 0 || bytes.IndexByte(line[start+len(raw):], '\\') >= 0 ||
		messageKeys(line[:start])+messageKeys(line[start+len(raw):]) != 1 {
		return false
	}
	var content []byte
	var seen jsonscan.Seen
	ok := jsonscan.Members(raw, func(name, value []byte) bool {
		var dst *string
		var bit uint32
		switch string(name) {
		case "role":
			dst, bit = &m.Role, 1
		case "stopReason":
			dst, bit = &m.StopReason, 2
		case "errorMessage":
			dst, bit = &m.ErrorMessage, 4
		case "toolCallId":
			dst, bit = &m.ToolCallID, 8
		case "toolName":
			dst, bit = &m.ToolName, 16
		case "command":
			dst, bit = &m.Command, 32
		case "isError":
			bit = 64
		case "content":
			bit = 128
		default:
			return true
		}
		if !seen.First(bit) {
			return false
		}
		switch {
		case dst != nil:
			s, ok := jsonscan.Plain(value)
			*dst = s
			return ok
		case bit == 64:
			var ok bool
			m.IsError, ok = jsonscan.Bool(value)
			return ok
		default:
			content = value
		}
		return true
	})
	if !ok {
		return false
	}
	if m.Role == session.RoleToolResult || len(content) == 0 {
		return true
	}
	var scratch []session.Block
	if blocks != nil {
		scratch = *blocks
	}
	if m.content, ok = session.ScanContentInto(content, scratch); !ok {
		return false
	}
	if blocks != nil && cap(m.content.Blocks) > cap(scratch) {
		*blocks = m.content.Blocks
	}
	return true
}

// messageKeys counts the "message" names in part of an entry without
// escapes: a "message" followed by a colon (within a string, a quote would be
// escaped).
func messageKeys(part []byte) int {
	n := 0
	for {
		i := bytes.Index(part, []byte(`"message"`))
		if i < 0 {
			return n
		}
		part = part[i+len(`"message"`):]
		if j := jsonscan.SkipSpace(part, 0); j < len(part) && part[j] == ':' {
			n++
		}
	}
}
