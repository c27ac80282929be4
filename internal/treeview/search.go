package treeview

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a search of the tree's rows: words that a row must all hold, in
// its id, its label or what it says, whatever their case.
type Query []string

// ParseQuery splits what the user typed into a Query; an empty Query
// matches every row.
func ParseQuery(s string) Query { return Query(strings.Fields(strings.ToLower(s))) }

// Narrows reports whether every row q matches is matched by prev too, so
// that a search typed further need only look at prev's rows: each word of
// prev is held by a word of q (typing on adds words or extends the last one).
func (q Query) Narrows(prev Query) bool {
	for _, p := range prev {
		held := false
		for _, w := range q {
			if strings.Contains(w, p) {
				held = true
				break
			}
		}
		if !held {
			return false
		}
	}
	return true
}

// Search appends to dst the rows q matches, in drawing order, folded or not.
// Rows are matched where the View keeps them, one at a time: nothing is made
// per row, so searching a million rows costs what it finds, and nothing when
// dst is the array of an earlier layout.
func (v *View) Search(dst []Row, q Query) []Row {
	var ln Line
	v.walk(nil, func(r Row) {
		if v.matches(r, q, &ln) {
			dst = append(dst, r)
		}
	})
	return dst
}

// Narrow keeps the rows of rows that q matches, in place: a search typed
// further (q.Narrows the query that found rows) looks only at what was found.
func (v *View) Narrow(rows []Row, q Query) []Row {
	var ln Line
	out := rows[:0]
	for _, r := range rows {
		if v.matches(r, q, &ln) {
			out = append(out, r)
		}
	}
	return out
}

// matches reports whether r holds every word of q; ln is a Line to reuse.
// A word holds no space, so it lies within one of the row's texts or in none:
// they are matched one by one rather than joined.
func (v *View) matches(r Row, q Query, ln *Line) bool {
	if len(q) == 0 {
		return true
	}
	*ln = (*ln)[:0]
	v.said(ln, r.i)
	for _, w := range q {
		if !containsLower(r.Node.Entry.ID, w) && !containsLower(r.Node.Label, w) && !spansHold(*ln, w) {
			return false
		}
	}
	return true
}

func spansHold(ln Line, w string) bool {
	for _, s := range ln {
		if containsLower(s.Text, w) {
			return true
		}
	}
	return false
}

// containsLower reports whether strings.ToLower(s) contains w, w being lower
// case already, without making the lower-cased copy: s is lowered a rune at
// a time as it is compared, at the places it can start.
func containsLower(s, w string) bool {
	if w == "" {
		return true
	}
	c := w[0]
	if c >= utf8.RuneSelf || c == 'k' || c == 'i' {
		// A rune other than ASCII may lower to it (U+212A to k, U+0130 to
		// i): every rune is a place to start.
		for i := 0; i < len(s); {
			if hasPrefixLower(s[i:], w) {
				return true
			}
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
		return false
	}
	// Only the byte c or its upper case can start a match: found with
	// IndexByte, each kept until passed so s is scanned once for each.
	up := c
	if 'a' <= c && c <= 'z' {
		up = c - 'a' + 'A'
	}
	lo, hi := -1, -1
	for i := 0; i < len(s); i++ {
		if lo < i && lo != len(s) {
			lo = nextByte(s, i, c)
		}
		if hi < i && hi != len(s) {
			hi = nextByte(s, i, up)
		}
		i = min(lo, hi)
		if i == len(s) {
			return false
		}
		if hasPrefixLower(s[i:], w) {
			return true
		}
	}
	return false
}

// nextByte is the index of the first c in s from i on, len(s) when none.
func nextByte(s string, i int, c byte) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}

// hasPrefixLower reports whether strings.ToLower(s) begins with w. Like
// strings.ToLower, it lowers each rune of s on its own, a byte that is not
// UTF-8 standing for U+FFFD.
func hasPrefixLower(s, w string) bool {
	for len(w) > 0 {
		if len(s) == 0 {
			return false
		}
		if c := s[0]; c < utf8.RuneSelf && w[0] < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[0] {
				return false
			}
			s, w = s[1:], w[1:]
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		t, m := utf8.DecodeRuneInString(w)
		if unicode.ToLower(r) != t {
			return false
		}
		s, w = s[n:], w[m:]
	}
	return true
}
