package session

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"
)

// TreeNode is one entry of the tree with its children and label (pi's getTree).
type TreeNode struct {
	Entry          *Entry
	Children       []*TreeNode
	Label          string
	LabelTimestamp string
}

// Tree returns every indexed entry as a tree: roots in file order, each node's
// children sorted by timestamp with ties in file order. An entry whose parent is
// itself, unknown, or on a loop that was cut is a root.
func (l *Log) Tree() []*TreeNode {
	l.mu.Lock()
	defer l.mu.Unlock()
	all := make([]TreeNode, len(l.entries)) // indexed by node position: one allocation
	at := func(n *node) *TreeNode {
		t := &all[n.pos]
		t.Entry = n.e
		if ls, ok := l.labels[n.e.ID]; ok {
			t.Label, t.LabelTimestamp = ls.label, ls.timestamp
		}
		return t
	}
	roots := make([]*TreeNode, len(l.roots))
	for i, r := range l.roots {
		roots[i] = at(r)
	}
	// Iterative, so a chain of a million entries does not grow the stack.
	stack := slices.Clone(l.roots)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.kid == nil {
			continue
		}
		t := &all[n.pos]
		if n.kid.next == nil { // one child: the common case, no list to make
			t.Children = []*TreeNode{at(n.kid)}
			stack = append(stack, n.kid)
			continue
		}
		kids := n.kids()
		sortByTime(kids)
		t.Children = make([]*TreeNode, len(kids))
		for i, k := range kids {
			t.Children[i] = at(k)
		}
		stack = append(stack, kids...)
	}
	return roots
}

// sortByTime orders children as pi's getTree does: Array.prototype.sort with
// the comparator new Date(a).getTime() - new Date(b).getTime(). With valid
// timestamps that is a stable sort by millisecond. A timestamp JavaScript
// cannot parse makes the comparator NaN, which V8 reads as 0: "equal" to
// everything, an inconsistent order whose outcome depends on V8's algorithm.
// For the lists V8 sorts without merging (fewer than 64) this is that
// algorithm: one natural run, then binary insertion.
func sortByTime(ns []*node) {
	if len(ns) < 2 {
		return
	}
	ms := make(map[*node]float64, len(ns))
	valid := true
	for _, n := range ns {
		ms[n] = jsTime(n.e.Timestamp)
		valid = valid && !math.IsNaN(ms[n])
	}
	cmp := func(a, b *node) float64 {
		if d := ms[a] - ms[b]; !math.IsNaN(d) {
			return d
		}
		return 0 // V8 reads a NaN from the comparator as 0
	}
	if valid || len(ns) >= 64 {
		slices.SortStableFunc(ns, func(a, b *node) int {
			switch d := cmp(a, b); {
			case d < 0:
				return -1
			case d > 0:
				return 1
			}
			return 0
		})
		return
	}
	// V8's CountAndMakeRun: an ascending (order >= 0) or strictly descending
	// (order < 0) run, reversed if descending.
	run := 2
	desc := cmp(ns[1], ns[0]) < 0
	for i := 2; i < len(ns); i++ {
		o := cmp(ns[i], ns[i-1])
		if desc && o >= 0 || !desc && o < 0 {
			break
		}
		run++
	}
	if desc {
		slices.Reverse(ns[:run])
	}
	// V8's BinaryInsertionSort of the rest.
	for start := run; start < len(ns); start++ {
		pivot := ns[start]
		left, right := 0, start
		for left < right {
			mid := left + (right-left)/2
			if cmp(pivot, ns[mid]) < 0 {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(ns[left+1:start+1], ns[left:start])
		ns[left] = pivot
	}
}

// jsTime is new Date(ts).getTime() (V8's) for ECMAScript's date-time string
// format: what toISOString writes and its shorter forms (date-only forms are
// UTC, a date-time without an offset is local time), with a lower-case t or z,
// a space for the T, an offset without its colon, any number of fraction
// digits, 24:00, and days past the month's end rolling over as V8 lets them.
// Other strings, which V8 reads with legacy heuristics, give NaN.
func jsTime(ts string) float64 {
	// The usual form, 2026-11-29T19:00:03.461Z, through the library.
	if len(ts) >= 20 && ts[4] == '-' && ts[7] == '-' && ts[10] == 'T' && ts[13] == ':' && ts[16] == ':' &&
		ts[len(ts)-1] == 'Z' && !strings.Contains(ts, ",") {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return float64(t.UnixMilli())
		}
	}
	p := dateParser{s: ts}
	year, ok := p.year()
	if !ok {
		return math.NaN()
	}
	month, day := 1, 1
	if p.eat('-') {
		if month, ok = p.digits(2); !ok || month < 1 || month > 12 {
			return math.NaN()
		}
		if p.eat('-') {
			if day, ok = p.digits(2); !ok || day < 1 || day > 31 {
				return math.NaN()
			}
		}
	}
	if p.done() {
		return float64(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).UnixMilli())
	}
	if !p.eat('T') && !p.eat('t') && !p.eat(' ') {
		return math.NaN()
	}
	hour, ok1 := p.digits(2)
	colon := p.eat(':')
	minute, ok2 := p.digits(2)
	if !ok1 || !colon || !ok2 || hour > 24 || minute > 59 {
		return math.NaN()
	}
	sec, ms := 0, 0
	if p.eat(':') {
		if sec, ok = p.digits(2); !ok || sec > 59 {
			return math.NaN()
		}
		if p.eat('.') {
			n := 0
			for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; n++ {
				if n < 3 {
					ms = ms*10 + int(p.s[p.i]-'0')
				}
				p.i++
			}
			if n == 0 {
				return math.NaN()
			}
			for ; n < 3; n++ {
				ms *= 10
			}
		}
	}
	if hour == 24 && (minute != 0 || sec != 0 || ms != 0) {
		return math.NaN()
	}
	loc := time.Local
	switch {
	case p.eat('Z') || p.eat('z'):
		loc = time.UTC
	case p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-'):
		sign := 1
		if p.s[p.i] == '-' {
			sign = -1
		}
		p.i++
		oh, ok1 := p.digits(2)
		p.eat(':')
		om, ok2 := p.digits(2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return math.NaN()
		}
		loc = time.FixedZone("", sign*(oh*3600+om*60))
	}
	if !p.done() {
		return math.NaN()
	}
	return float64(time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), loc).UnixMilli())
}

type dateParser struct {
	s string
	i int
}

func (p *dateParser) done() bool { return p.i == len(p.s) }

func (p *dateParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dateParser) digits(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

// year reads YYYY or an expanded ±YYYYYY year (-000000 is not a year).
func (p *dateParser) year() (int, bool) {
	if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		neg := p.s[p.i] == '-'
		p.i++
		y, ok := p.digits(6)
		if !ok || (neg && y == 0) {
			return 0, false
		}
		if neg {
			y = -y
		}
		return y, true
	}
	return p.digits(4)
}

// WriteJSON writes the node as {"entry":…,"children":[…],"label":…,"labelTimestamp":…}.
func (t *TreeNode) WriteJSON(b *bytes.Buffer) { _ = WriteTreeJSON(b, []*TreeNode{t}, false) }

// WriteTreeJSON writes nodes as WriteJSON does each, separated by commas and,
// with array, inside [ ]. It walks the tree with a stack of its own, so a chain
// of a million entries neither deepens the call stack nor has to be held as
// text: w may be a buffered writer on the output. It returns w's first error.
func WriteTreeJSON(w interface {
	Write([]byte) (int, error)
	WriteString(string) (int, error)
}, nodes []*TreeNode, array bool) error {
	var err error
	write := func(b []byte) {
		if err == nil {
			_, err = w.Write(b)
		}
	}
	writeString := func(s string) {
		if err == nil {
			_, err = w.WriteString(s)
		}
	}
	// Each frame is a list of siblings still to write; a node is closed (its
	// children's ] and its label) when its list runs out.
	type frame struct {
		rest  []*TreeNode
		owner *TreeNode // whose children rest are; nil for the top level
	}
	if array {
		writeString("[")
	}
	stack := []frame{{rest: nodes}}
	first := true
	for len(stack) > 0 && err == nil {
		f := &stack[len(stack)-1]
		if len(f.rest) == 0 {
			if t := f.owner; t != nil {
				writeString("]")
				if t.Label != "" {
					writeString(`,"label":`)
					write(mustValue(t.Label))
					if t.LabelTimestamp != "" {
						writeString(`,"labelTimestamp":`)
						write(mustValue(t.LabelTimestamp))
					}
				}
				writeString("}")
			}
			stack = stack[:len(stack)-1]
			first = false
			continue
		}
		t := f.rest[0]
		f.rest = f.rest[1:]
		if !first {
			writeString(",")
		}
		writeString(`{"entry":`)
		write(t.Entry.raw)
		writeString(`,"children":[`)
		stack = append(stack, frame{rest: t.Children, owner: t})
		first = true
	}
	if array {
		writeString("]")
	}
	return err
}
