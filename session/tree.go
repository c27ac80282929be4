package session

import (
	"bytes"
	"github.com/arborlog/arbor/internal/js"
	"math"
	"slices"
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
	// Every node's Children, cut from one array: an entry is the child of at
	// most one node, so a million one-child lists are not a million allocations.
	kidsOf := make([]*TreeNode, len(l.entries))
	children := func(n int) []*TreeNode {
		c := kidsOf[:n:n] // a caller's append copies rather than writes into a neighbour's list
		kidsOf = kidsOf[n:]
		return c
	}
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
			t.Children = children(1)
			t.Children[0] = at(n.kid)
			stack = append(stack, n.kid)
			continue
		}
		kids := n.kids()
		sortByTime(kids)
		t.Children = children(len(kids))
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

// jsTime is new Date(ts).getTime(), NaN where JavaScript gives NaN.
func jsTime(ts string) float64 {
	if ms, ok := js.Date(ts); ok {
		return float64(ms)
	}
	return math.NaN()
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
