package catalog

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a parsed search: either words and phrases that must all occur in
// one entry, or a regular expression (pi's session picker syntax).
type Query struct {
	Terms []Term         // every term must match
	Regex *regexp.Regexp // re:<pattern>, case-insensitive; Terms is then empty

	needs []string // lower-case ASCII strings every match of Regex contains
}

// Term is a word or a quoted phrase, as the tokens it matches in order. A
// prefix term (a word ending in *, or the query's last word) matches any token
// that starts with its last token.
type Term struct {
	Tokens []string
	Prefix bool
}

// ErrEmptyQuery is returned for a query with nothing to search for.
var ErrEmptyQuery = errors.New("catalog: nothing to search for")

// ParseQuery parses what the user typed, as pi's session picker does:
// "re:<pattern>" is a case-insensitive regular expression; otherwise words
// separated by white space, and "quoted phrases", all of which must match. With
// unbalanced quotes the quotes are ignored. Words are matched by their letters
// and digits: "main.go" is the phrase "main go"; "migrat*" matches migration.
//
// The last word matches as a prefix, so that a query typed a key at a time
// finds what the half-typed word will be: "greet" finds greeting. A last word
// ending in $ (greet$), or quoted ("greet"), matches whole words only.
func ParseQuery(s string) (Query, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "re:"); ok {
		pat := strings.TrimSpace(rest)
		if pat == "" {
			return Query{}, fmt.Errorf("%w: empty regular expression after the re: prefix", ErrEmptyQuery)
		}
		re, err := regexp.Compile("(?i)" + pat)
		if err != nil {
			return Query{}, fmt.Errorf("catalog: bad regular expression %q: %w", pat, err)
		}
		return Query{Regex: re, needs: literals(pat)}, nil
	}
	var q Query
	lastOpen := false // the last term is a bare word, typed perhaps in part
	for _, w := range splitQuery(s) {
		t := Term{Tokens: tokens(w.text)}
		if !w.phrase && strings.HasSuffix(w.text, "*") {
			t.Prefix = true
		}
		if len(t.Tokens) == 0 {
			continue
		}
		q.Terms = append(q.Terms, t)
		lastOpen = !w.phrase && !strings.HasSuffix(w.text, "$")
	}
	if len(q.Terms) == 0 {
		return Query{}, fmt.Errorf("%w in %q: words are matched by their letters and digits; use re:<pattern> for punctuation", ErrEmptyQuery, s)
	}
	if lastOpen {
		q.Terms[len(q.Terms)-1].Prefix = true
	}
	return q, nil
}

type word struct {
	text   string
	phrase bool
}

// splitQuery is pi's token mode: quotes delimit phrases; unbalanced quotes
// make it fall back to plain white-space splitting.
func splitQuery(s string) []word {
	var out []word
	var buf strings.Builder
	inQuote := false
	flush := func(phrase bool) {
		v := strings.TrimSpace(buf.String())
		buf.Reset()
		if v != "" {
			out = append(out, word{v, phrase})
		}
	}
	for _, r := range s {
		switch {
		case r == '"':
			flush(inQuote)
			inQuote = !inQuote
		case !inQuote && unicode.IsSpace(r):
			flush(false)
		default:
			buf.WriteRune(r)
		}
	}
	if inQuote {
		out = out[:0]
		for _, f := range strings.Fields(s) {
			out = append(out, word{f, false})
		}
		return out
	}
	flush(false)
	return out
}

// fts returns the query in SQLite FTS5 syntax.
func (q Query) fts() string {
	parts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		p := `"` + strings.Join(t.Tokens, " ") + `"`
		if t.Prefix {
			p += "*"
		}
		parts[i] = p
	}
	return strings.Join(parts, " AND ")
}

// Match reports whether text matches the query, and where (byte ranges, for a
// snippet and highlighting). It is the definition the index agrees with.
func (q Query) Match(text string) ([][2]int, bool) {
	if q.Regex != nil {
		loc := q.Regex.FindStringIndex(text)
		if loc == nil {
			return nil, false
		}
		return [][2]int{{loc[0], loc[1]}}, true
	}
	ts := tokenize(text)
	var hits [][2]int
	for _, t := range q.Terms {
		found := false
		for i := 0; i+len(t.Tokens) <= len(ts); i++ {
			if t.matchAt(ts, i) {
				found = true
				hits = append(hits, [2]int{ts[i].start, ts[i+len(t.Tokens)-1].end})
			}
		}
		if !found {
			return nil, false
		}
	}
	return hits, true
}

func (t Term) matchAt(ts []tokenSpan, i int) bool {
	last := len(t.Tokens) - 1
	for k, tok := range t.Tokens {
		got := ts[i+k].tok
		if k == last && t.Prefix {
			if !strings.HasPrefix(got, tok) {
				return false
			}
		} else if got != tok {
			return false
		}
	}
	return true
}

// literals returns strings that every match of the regular expression must
// contain, lower-cased, for a cheap test of a raw line before the line is
// decoded and the expression runs. Only literals whose case-insensitive matches
// are all ASCII are returned ('k' and 's' also match the Kelvin sign and the
// long s), and none holding a character JSON may escape (", \, / and control
// characters): in a line without \u escapes such a literal appears as it is.
func literals(pattern string) []string {
	re, err := syntax.Parse("(?i)"+pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	var parts []*syntax.Regexp
	switch re.Op {
	case syntax.OpLiteral:
		parts = []*syntax.Regexp{re}
	case syntax.OpConcat:
		parts = re.Sub
	default:
		return nil
	}
	var out []string
	for _, p := range parts {
		if p.Op != syntax.OpLiteral || len(p.Rune) < 3 {
			continue
		}
		lit := strings.ToLower(string(p.Rune))
		if plainASCII(lit) {
			out = append(out, lit)
		}
	}
	return out
}

func plainASCII(s string) bool {
	for _, c := range []byte(s) {
		if c >= utf8.RuneSelf || c < 0x20 || c == 'k' || c == 's' || c == '"' || c == '\\' || c == '/' {
			return false
		}
	}
	return true
}
