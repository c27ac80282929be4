package session

import (
	"bytes"
	"math"
	"slices"
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
	nodes := make(map[*node]*TreeNode, len(l.entries))
	var build func(ns []*node) []*TreeNode
	build = func(ns []*node) []*TreeNode {
		out := make([]*TreeNode, 0, len(ns))
		for _, n := range ns {
			t := &TreeNode{Entry: n.e}
			if ls, ok := l.labels[n.e.ID]; ok {
				t.Label, t.LabelTimestamp = ls.label, ls.timestamp
			}
			nodes[n] = t
			out = append(out, t)
		}
		return out
	}
	// Iterative, so a chain of a million entries does not grow the stack.
	roots := build(l.roots)
	stack := slices.Clone(l.roots)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids := slices.Clone(n.children)
		sortByTime(kids)
		nodes[n].Children = build(kids)
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

// jsTime is new Date(ts).getTime() for the ISO-8601 forms timestamps take; NaN
// for anything else.
func jsTime(ts string) float64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return math.NaN()
	}
	return float64(t.UnixMilli())
}

// WriteJSON writes the node as {"entry":…,"children":[…],"label":…,"labelTimestamp":…}.
func (t *TreeNode) WriteJSON(b *bytes.Buffer) {
	b.WriteString(`{"entry":`)
	b.Write(t.Entry.raw)
	b.WriteString(`,"children":[`)
	for i, c := range t.Children {
		if i > 0 {
			b.WriteByte(',')
		}
		c.WriteJSON(b)
	}
	b.WriteByte(']')
	if t.Label != "" {
		b.WriteString(`,"label":`)
		b.Write(mustValue(t.Label))
		if t.LabelTimestamp != "" {
			b.WriteString(`,"labelTimestamp":`)
			b.Write(mustValue(t.LabelTimestamp))
		}
	}
	b.WriteByte('}')
}
