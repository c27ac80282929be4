package catalog

import (
	"strings"
	"unicode"
)

// doc is the searchable text of one entry: what the user wrote, what the
// assistant wrote and thought, the arguments of its tool calls, and what the
// tools returned.
type doc struct {
	off  int64 // byte offset of the entry's line in the file
	text string
}

// entryText returns the searchable text of a scanned line, or "" when it has
// none: its pieces of text, one per line.
func entryText(l *line) string { return string(appendEntryText(nil, l)) }

// appendEntryText is entryText written over buf[:0], whose memory it reuses.
func appendEntryText(buf []byte, l *line) []byte {
	t := textBuf(buf[:0])
	if !l.object || !l.strIs(mustField(l, -1, "type"), "message") {
		return t
	}
	mi := l.fieldIndex("message")
	if mi < 0 || l.b[l.members[mi].val.start] != '{' {
		return t
	}
	role := mustField(l, mi, "role")
	b := l.b
	switch {
	case l.strIs(role, "user"), l.strIs(role, "assistant"), l.strIs(role, "toolResult"), l.strIs(role, "custom"):
		content, ok := l.field(mi, "content")
		if !ok {
			return t
		}
		if b[content.start] == '"' {
			t.add(b, content)
			break
		}
		if b[content.start] != '[' {
			return t
		}
		elements(b, content, func(e span) {
			if b[e.start] != '{' {
				return
			}
			var typ, text, thinking, name, args span
			objectMembers(b, e, func(k string, v span) {
				switch k {
				case "type":
					typ = v
				case "text":
					text = v
				case "thinking":
					thinking = v
				case "name":
					name = v
				case "arguments":
					args = v
				}
			})
			switch {
			case l.strIs(typ, "text"):
				t.add(b, text)
			case l.strIs(typ, "thinking"):
				t.add(b, thinking)
			case l.strIs(typ, "toolCall"):
				t.add(b, name)
				if args.end != 0 {
					t.values(b, args)
				}
			}
		})
	case l.strIs(role, "bashExecution"):
		if v, ok := l.field(mi, "command"); ok {
			t.add(b, v)
		}
		if v, ok := l.field(mi, "output"); ok {
			t.add(b, v)
		}
	}
	return t
}

// textMax bounds the text of one entry that is searched and indexed: its
// first 4 MiB. A single 200 MB line would otherwise cost its size several
// times over in the text and in FTS5's pending terms (6 GB for the index's
// first build); the words of such an entry past its first 4 MiB are not found.
const textMax = 4 << 20

// textBuf collects pieces of text separated by newlines, skipping empty ones,
// up to about textMax bytes.
type textBuf []byte

// add appends the string value at v (nothing when v is not a string).
func (t *textBuf) add(b []byte, v span) {
	if v.end == 0 || b[v.start] != '"' || v.end-v.start == 2 || len(*t) >= textMax {
		return
	}
	if len(*t) > 0 {
		*t = append(*t, '\n')
	}
	*t = appendUnquotedMax(*t, b[v.start:v.end], textMax)
}

// values appends the string values (not the keys) inside a JSON value, and
// its numbers and literals as they are written.
func (t *textBuf) values(b []byte, v span) {
	switch b[v.start] {
	case '"':
		t.add(b, v)
	case '[':
		elements(b, v, func(e span) { t.values(b, e) })
	case '{':
		objectMembers(b, v, func(_ string, m span) { t.values(b, m) })
	default:
		if len(*t) >= textMax {
			return
		}
		if len(*t) > 0 {
			*t = append(*t, '\n')
		}
		*t = append(*t, b[v.start:v.end]...)
	}
}

func (l *line) strField(parent int32, key string) string {
	v, ok := l.field(parent, key)
	if !ok {
		return ""
	}
	s, _ := l.str(v)
	return s
}

// A token is what the full-text index matches: a maximal run of letters,
// digits and private-use characters, compared in lower case. This is SQLite's
// unicode61 tokenizer with remove_diacritics 0, which the index uses.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// tokenSpan is a token's place in a text, in bytes.
type tokenSpan struct {
	start, end int
	tok        string
}

// tokenize splits s into lower-cased tokens with their byte positions.
func tokenize(s string) []tokenSpan {
	var out []tokenSpan
	start := -1
	for i, r := range s {
		if isTokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, tokenSpan{start, i, strings.ToLower(s[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, tokenSpan{start, len(s), strings.ToLower(s[start:])})
	}
	return out
}

// tokens returns just the lower-cased tokens of s.
func tokens(s string) []string {
	ts := tokenize(s)
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.tok
	}
	return out
}
