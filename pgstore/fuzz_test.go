package pgstore

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/catalog"
)

// FuzzSearchable: whatever a session line holds, the searchable text is valid
// UTF-8 without NUL (a text column takes it), and the tsvector literal names
// every token of that text, each quoted so that it cannot end the literal.
func FuzzSearchable(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"it's a \\"test\\" of O'Brien\\u0000"}}`))
	f.Add([]byte(`{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"x\\\\y 'z'"},{"type":"toolCall","name":"bash","arguments":{"cmd":"ls -la"}}]}}`))
	f.Add([]byte("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\xff\xfe bad utf8\"}}"))
	f.Fuzz(func(t *testing.T, line []byte) {
		text, lex := searchable(line)
		if text == nil {
			if lex != nil {
				t.Fatal("lexemes without text")
			}
			return
		}
		if !utf8.ValidString(*text) || strings.ContainsRune(*text, 0) {
			t.Fatalf("text %q is not valid for a text column", *text)
		}
		if lex == nil {
			return
		}
		for _, tok := range catalog.Tokens(*text) {
			if !strings.Contains(*lex, quoteLexeme(tok)+":") {
				t.Fatalf("token %q missing from %s", tok, *lex)
			}
		}
		// Outside quotes the literal holds only lexeme separators and positions.
		in := false
		for i := 0; i < len(*lex); i++ {
			c := (*lex)[i]
			switch {
			case c == '\\' && in:
				i++
			case c == '\'':
				if in && i+1 < len(*lex) && (*lex)[i+1] == '\'' {
					i++
				} else {
					in = !in
				}
			case !in && !strings.ContainsRune(" :,0123456789", rune(c)):
				t.Fatalf("stray %q in %s", c, *lex)
			}
		}
		if in {
			t.Fatalf("unterminated quote in %s", *lex)
		}
	})
}
