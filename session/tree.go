package session

import (
	"bytes"
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
		slices.SortStableFunc(kids, func(a, b *node) int { return compareTime(a.e.Timestamp, b.e.Timestamp) })
		nodes[n].Children = build(kids)
		stack = append(stack, kids...)
	}
	return roots
}

func compareTime(a, b string) int {
	ta, ea := time.Parse(time.RFC3339Nano, a)
	tb, eb := time.Parse(time.RFC3339Nano, b)
	if ea != nil || eb != nil {
		return 0 // JavaScript's comparator yields NaN: the order stays as it was
	}
	return ta.Compare(tb)
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
