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

// entryText returns the searchable text of a scanned line, or "" when it has none.
func entryText(l *line) string {
	if !l.object {
		return ""
	}
	if typ, _ := l.str(mustField(l, -1, "type")); typ != "message" {
		return ""
	}
	mi := l.fieldIndex("message")
	if mi < 0 || l.b[l.members[mi].val.start] != '{' {
		return ""
	}
	role, _ := l.str(mustField(l, mi, "role"))
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	switch role {
	case "user", "assistant", "toolResult", "custom":
		content, ok := l.field(mi, "content")
		if !ok {
			return ""
		}
		b := l.b
		if b[content.start] == '"' {
			s, _ := unquote(b[content.start:content.end])
			add(s)
			break
		}
		if b[content.start] != '[' {
			return ""
		}
		elements(b, content, func(e span) {
			if b[e.start] != '{' {
				return
			}
			var typ string
			var text, thinking, name, args span
			objectMembers(b, e, func(k string, v span) {
				switch k {
				case "type":
					typ, _ = unquote(b[v.start:v.end])
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
			str := func(s span) string {
				if s.end == 0 || b[s.start] != '"' {
					return ""
				}
				v, _ := unquote(b[s.start:s.end])
				return v
			}
			switch typ {
			case "text":
				add(str(text))
			case "thinking":
				add(str(thinking))
			case "toolCall":
				add(str(name))
				if args.end != 0 {
					add(jsonStrings(b, args))
				}
			}
		})
	case "bashExecution":
		add(l.strField(mi, "command"))
		add(l.strField(mi, "output"))
	}
	return strings.Join(parts, "\n")
}

func (l *line) strField(parent int32, key string) string {
	v, ok := l.field(parent, key)
	if !ok {
		return ""
	}
	s, _ := l.str(v)
	return s
}

// jsonStrings returns the string values (not the keys) inside a JSON value, one per line.
func jsonStrings(b []byte, v span) string {
	var parts []string
	var walk func(v span)
	walk = func(v span) {
		switch b[v.start] {
		case '"':
			s, _ := unquote(b[v.start:v.end])
			parts = append(parts, s)
		case '[':
			elements(b, v, walk)
		case '{':
			objectMembers(b, v, func(_ string, m span) { walk(m) })
		default:
			parts = append(parts, string(b[v.start:v.end]))
		}
	}
	walk(v)
	return strings.Join(parts, "\n")
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
