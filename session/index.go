package session

import (
	"slices"
	"strings"

	"github.com/arborlog/arbor/internal/js"
	"github.com/go-json-experiment/json/jsontext"
)

type node struct {
	e      *Entry
	parent *node // nil for a root; the parent link after loops are cut
	kid    *node // the first child in file order
	next   *node // the next sibling in file order
	pos    int   // position in Log.entries
}

// appendChild links c as n's last child.
func (n *node) appendChild(c *node) {
	if n.kid == nil {
		n.kid = c
		return
	}
	k := n.kid
	for k.next != nil {
		k = k.next
	}
	k.next = c
}

// kids returns n's children in file order.
func (n *node) kids() []*node {
	var out []*node
	for k := n.kid; k != nil; k = k.next {
		out = append(out, k)
	}
	return out
}

type labelState struct {
	label, timestamp string
}

// index builds the tree over entries read from a file. Called once, before the log is shared.
func (l *Log) index(entries []*Entry) {
	if len(l.byID) == 0 {
		l.byID = make(map[string]*node, len(entries))
	}
	nodes := make([]*node, 0, len(entries))
	slab := make([]node, len(entries)) // one allocation for every node
	for _, e := range entries {
		if e.ID == "" {
			l.report.BadLines = append(l.report.BadLines, e.Line)
			continue
		}
		if _, dup := l.byID[e.ID]; dup {
			l.report.DuplicateIDs = append(l.report.DuplicateIDs, e.ID)
			continue
		}
		n := &slab[len(nodes)]
		n.e, n.pos = e, len(l.entries)
		l.entries = append(l.entries, e)
		l.byID[e.ID] = n
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		switch p := n.e.ParentID; {
		case p == "":
		case p == n.e.ID:
			l.report.Cycles = append(l.report.Cycles, n.e.ID) // a loop of one: a root, as in pi
		default:
			if pn, ok := l.byID[p]; ok {
				n.parent = pn
			} else {
				l.report.Orphans = append(l.report.Orphans, n.e.ID)
			}
		}
	}
	l.cutLoops(nodes)
	slices.Sort(l.report.BadLines)
	// Children are linked last to first, so each list is in file order
	// without walking it.
	for i := len(nodes) - 1; i >= 0; i-- {
		if n := nodes[i]; n.parent != nil {
			n.next, n.parent.kid = n.parent.kid, n
		}
	}
	for _, n := range nodes {
		if n.parent == nil {
			l.roots = append(l.roots, n)
		}
		l.replay(n)
	}
	l.report.Entries = len(l.entries)
	sortByPosition(l.report.Orphans, l)
	sortByPosition(l.report.Cycles, l)
	for _, c := range l.cursors {
		c.leaf = resolveLeaf(c.last)
	}
}

// cutLoops breaks every parent cycle at the entry of the cycle that comes first in
// the file: in an append-only log a parent precedes its child, so that entry's
// parent link is the one that cannot be right. nodes are in file order, and
// pos indexes them.
func (l *Log) cutLoops(nodes []*node) {
	const onWalk, done = 1, 2
	state := make([]uint8, len(l.entries))
	var walk []*node
	for _, start := range nodes {
		walk = walk[:0]
		n := start
		for n != nil && state[n.pos] == 0 {
			state[n.pos] = onWalk
			walk = append(walk, n)
			n = n.parent
		}
		if n != nil && state[n.pos] == onWalk { // n is on this walk: a loop from n back to n
			first := n
			for m := n.parent; m != n; m = m.parent {
				if m.pos < first.pos {
					first = m
				}
			}
			first.parent = nil
			l.report.Cycles = append(l.report.Cycles, first.e.ID)
		}
		for _, w := range walk {
			state[w.pos] = done
		}
	}
}

// sortByPosition orders ids by file position, so reports are stable.
func sortByPosition(ids []string, l *Log) {
	slices.SortStableFunc(ids, func(a, b string) int { return l.byID[a].pos - l.byID[b].pos })
}

// resolveLeaf returns the nearest entry at or above n that is not a marker.
func resolveLeaf(n *node) *node {
	for n != nil && n.e.IsMarker() {
		n = n.parent
	}
	return n
}

// replay applies an indexed entry's effect on labels, the name and cursors, in file order.
func (l *Log) replay(n *node) {
	e := n.e
	switch e.Type {
	case TypeLabel:
		// As pi replays them: a label that is not truthy clears, any other sets
		// (a label that is not a string is kept as JavaScript would print it).
		var v struct {
			TargetID jsontext.Value `json:"targetId"`
			Label    jsontext.Value `json:"label"`
		}
		if unmarshal(e.raw, &v) != nil {
			break
		}
		if target, ok := jsonString(v.TargetID); ok {
			label := ""
			if js.Truthy(v.Label) {
				label = jsTemplate(v.Label)
			}
			l.setLabel(target, label, e.Timestamp)
		}
	case TypeSessionInfo:
		var v struct {
			Name string `json:"name"`
		}
		_ = unmarshal(e.raw, &v) // a name that is not a string clears it, as in pi
		l.name = strings.TrimSpace(v.Name)
	case TypeMessage:
		if e.msgRole() == RoleAssistant || e.msgRole() == RoleUser {
			l.hasConversation = true
		}
	}
	c := l.cursor(cursorID(e))
	c.last = n
	if e.IsMarker() {
		l.replayMarker(c, e)
	}
	if !(e.IsMarker() && e.customType() == MarkerCursor) {
		l.active = c.id
	}
}

func (l *Log) setLabel(target, label, ts string) {
	if label == "" {
		if _, ok := l.labels[target]; ok {
			delete(l.labels, target)
			l.lorder = slices.DeleteFunc(l.lorder, func(t string) bool { return t == target })
		}
		return
	}
	if _, ok := l.labels[target]; !ok {
		l.lorder = append(l.lorder, target)
	}
	l.labels[target] = labelState{label, ts}
}

// ingest indexes entries another program appended to the file (read by the
// store's Refresh), as a reopen would: each moves its cursor's leaf.
func (l *Log) ingest(entries []*Entry) {
	for _, e := range entries {
		if e.ID == "" {
			continue
		}
		if _, dup := l.byID[e.ID]; dup {
			l.report.DuplicateIDs = append(l.report.DuplicateIDs, e.ID)
			continue
		}
		l.add(e)
	}
}

// add links a new entry into the index and applies its effects. Appended
// entries always have a known or null parent, so no loop can form.
func (l *Log) add(e *Entry) *node {
	n := &node{e: e, pos: len(l.entries)}
	l.entries = append(l.entries, e)
	l.byID[e.ID] = n
	if p, ok := l.byID[e.ParentID]; ok && e.ParentID != e.ID {
		n.parent = p
		p.appendChild(n)
	} else {
		if e.ParentID != "" {
			l.report.Orphans = append(l.report.Orphans, e.ID)
		}
		l.roots = append(l.roots, n)
	}
	l.replay(n)
	c := l.cursors[cursorID(e)]
	c.leaf = resolveLeaf(c.last)
	l.report.Entries = len(l.entries)
	return n
}
