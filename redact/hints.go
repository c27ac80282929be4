package redact

import "strings"

// ruleBits is a set of rule indexes (a rule table holds at most 128 hinted rules).
type ruleBits [2]uint64

func (b *ruleBits) set(i int)     { b[i>>6] |= 1 << (i & 63) }
func (b ruleBits) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b *ruleBits) or(o ruleBits) { b[0] |= o[0]; b[1] |= o[1] }
func (b ruleBits) empty() bool    { return b[0] == 0 && b[1] == 0 }

const maxHinted = 128

// hintMatcher finds the hints of every rule in one pass over a text, ASCII
// case folded (an Aho–Corasick automaton over the bytes hints use), so a
// text of a megabyte costs one table lookup a byte however many rules
// there are. Lines without a hint are never given to a regular expression.
type hintMatcher struct {
	class [256]uint8 // byte → column; 0 for bytes no hint holds
	width int
	next  []uint16  // state*width + class → state
	final []bool    // the states where a hint ends
	out   [][]int32 // state → the hints that end there
	hints []hint
}

// hint is a lowercase literal of a rule. When around is set, the hint
// counts only where the text before and after it on its line passes (a
// name's word followed by = or :).
type hint struct {
	text   string
	rule   int
	around func(before, after string) bool
}

// newHintMatcher builds the automaton.
func newHintMatcher(hints []hint) *hintMatcher {
	m := &hintMatcher{hints: hints}
	n := 1
	for _, h := range hints {
		for i := 0; i < len(h.text); i++ {
			if m.class[h.text[i]] == 0 {
				m.class[h.text[i]] = uint8(n)
				n++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		m.class[c] = m.class[c+'a'-'A']
	}
	m.width = n
	// The trie, with -1 for a missing edge.
	goTo := [][]int32{newRow(n)}
	out := [][]int32{nil}
	for k, h := range hints {
		st := int32(0)
		for i := 0; i < len(h.text); i++ {
			c := m.class[h.text[i]]
			if goTo[st][c] < 0 {
				goTo[st][c] = int32(len(goTo))
				goTo = append(goTo, newRow(n))
				out = append(out, nil)
			}
			st = goTo[st][c]
		}
		out[st] = append(out[st], int32(k))
	}
	// Breadth first: each state's failure link and its missing edges taken
	// from it, which turns the trie into a complete automaton.
	fail := make([]int32, len(goTo))
	queue := []int32{}
	for c := range n {
		if s := goTo[0][c]; s < 0 {
			goTo[0][c] = 0
		} else {
			queue = append(queue, s)
		}
	}
	// Column 0 (bytes no hint uses) always goes back to the root.
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		out[st] = append(out[st], out[fail[st]]...)
		for c := 1; c < n; c++ {
			if s := goTo[st][c]; s >= 0 {
				fail[s] = goTo[fail[st]][c]
				queue = append(queue, s)
			} else {
				goTo[st][c] = goTo[fail[st]][c]
			}
		}
		goTo[st][0] = 0
	}
	if len(goTo) > 1<<16 {
		panic("redact: hints too long for the automaton")
	}
	m.next = make([]uint16, len(goTo)*n)
	m.final = make([]bool, len(goTo))
	m.out = out
	for st, row := range goTo {
		for c, to := range row {
			m.next[st*n+c] = uint16(to)
		}
		m.final[st] = out[st] != nil
	}
	return m
}

func newRow(n int) []int32 {
	row := make([]int32, n)
	for i := range row {
		row[i] = -1
	}
	return row
}

// lineHit is a line of the text (end includes its newline) and the rules
// whose hints it holds.
type lineHit struct {
	start, end int
	rules      ruleBits
}

// rulesAt returns the rules of the hints that end at s[i].
func (m *hintMatcher) rulesAt(s string, i int, out []int32) ruleBits {
	var b ruleBits
	for _, k := range out {
		h := &m.hints[k]
		if h.around == nil {
			b.set(h.rule)
			continue
		}
		start := i + 1 - len(h.text)
		before := s[strings.LastIndexByte(s[:start], '\n')+1 : start]
		after := s[i+1:]
		if end := strings.IndexByte(after, '\n'); end >= 0 {
			after = after[:end]
		}
		if h.around(before, after) {
			b.set(h.rule)
		}
	}
	return b
}

// lines returns the lines of s that hold a hint, in order, with their rules.
func (m *hintMatcher) lines(s string, hits []lineHit) []lineHit {
	st, w := 0, m.width
	for i := 0; i < len(s); i++ {
		st = int(m.next[st*w+int(m.class[s[i]])])
		if !m.final[st] {
			continue
		}
		rules := m.rulesAt(s, i, m.out[st])
		if rules.empty() {
			continue
		}
		if k := len(hits) - 1; k >= 0 && i < hits[k].end {
			hits[k].rules.or(rules)
			continue
		}
		start := strings.LastIndexByte(s[:i], '\n') + 1
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += i + 1
		}
		hits = append(hits, lineHit{start, end, rules})
	}
	return hits
}

// any reports whether s holds a hint.
func (m *hintMatcher) any(s string) bool {
	st, w := 0, m.width
	for i := 0; i < len(s); i++ {
		st = int(m.next[st*w+int(m.class[s[i]])])
		if m.final[st] && !m.rulesAt(s, i, m.out[st]).empty() {
			return true
		}
	}
	return false
}
