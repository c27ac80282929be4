package session

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// fromEntries builds a log over entries that belong to a new, not yet written session.
func fromEntries(h Header, c config, entries []*Entry) *Log {
	l := emptyLog(h, c)
	l.index(entries)
	l.report = Report{Version: h.Version, Entries: len(l.entries)}
	return l
}

// Branched returns a new session holding only the path root→leafID (SPEC §6.1,
// pi's createBranchedSession): label entries on the path are dropped and the
// labels of path entries are re-emitted as new label entries after it, with
// their original timestamps, in the order pi's label map holds them. Unlike
// pi's, the new session's context from its last path entry equals the old
// one's from leafID: dropping a label re-links the entry after it. Entries lose any cursor field: the new session is
// one line of work on its main cursor. opts set the new header (WithParent) and
// its store: a store given here writes every entry of the new session at its
// first write.
func (l *Log) Branched(leafID string, opts ...Option) (*Log, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.byID[leafID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, leafID)
	}
	if n.e.IsMarker() {
		return nil, fmt.Errorf("%w: %s", ErrIsMarker, leafID)
	}
	c := configure(opts)
	if c.project.IsZero() {
		c.project = l.header.Project // the same folder: the same project
	}
	h := c.newHeader(l.header.Cwd)
	var path []*Entry
	onPath := map[string]bool{}
	nodes := l.path(n)
	// A compaction that keeps from a dropped label keeps from the entry after it,
	// which gives the same context.
	next := map[string]string{}
	after := ""
	for i := len(nodes) - 1; i >= 0; i-- {
		if e := nodes[i].e; e.Type == TypeLabel {
			next[e.ID] = after
		} else {
			after = e.ID
		}
	}
	parent := ""
	for _, pn := range nodes {
		if pn.e.Type == TypeLabel {
			continue
		}
		// An entry whose parent was a dropped label hangs from the entry before
		// it (pi leaves it pointing at the missing label, which cuts the branch
		// off from its start).
		path = append(path, rewrite(pn.e, parent, next))
		onPath[pn.e.ID] = true
		parent = pn.e.ID
	}
	used := func(id string) bool { return onPath[id] }
	for _, target := range l.lorder {
		if !onPath[target] {
			continue
		}
		ls := l.labels[target]
		id := randomID(used)
		head := []member{{"type", mustValue(TypeLabel)}, {"id", mustValue(id)}, {"parentId", parentValue(parent)},
			{"timestamp", mustValue(ls.timestamp)}, {"targetId", mustValue(target)}, {"label", mustValue(ls.label)}}
		le := &Entry{Type: TypeLabel, ID: id, ParentID: parent, Timestamp: ls.timestamp}
		le.setRaw(buildObject(head))
		path = append(path, le)
		onPath[id] = true
		parent = id
	}
	return fromEntries(h, c, path), nil
}

// Copy returns a new session holding every entry of l, on every branch, as
// forkFrom does when a session moves to another project. l is already migrated,
// so an old file becomes a proper version 3 session (pi copies it unmigrated).
func (l *Log) Copy(cwd string, opts ...Option) *Log {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := configure(opts)
	return fromEntries(c.newHeader(cwd), c, append([]*Entry(nil), l.entries...))
}

// ForgetName clears the session name that a copy carried over from its
// source (the latest session_info entry, as pi 1.6.0 reads it), so that a
// fork made with --fork is not found under its source's name. It appends an
// empty session_info, which pi reads as "no name", and does nothing to a
// session without a name.
func (l *Log) ForgetName() error {
	if l.SessionName() == "" {
		return nil
	}
	_, err := l.SetSessionName("")
	return err
}

func parentValue(id string) jsontext.Value {
	if id == "" {
		return jsontext.Value("null")
	}
	return mustValue(id)
}

// rewrite returns e for a branched session: without a cursor field, with the
// given parent, and, for a compaction, with a firstKeptEntryId that named a
// dropped label replaced as next says.
func rewrite(e *Entry, parent string, next map[string]string) *Entry {
	var kept string
	if e.Type == TypeCompaction {
		if id, ok := jsonString(e.rawValue("firstKeptEntryId")); ok {
			kept = next[id]
		}
	}
	if e.Cursor == "" && e.ParentID == parent && kept == "" {
		return e
	}
	ms, err := objectMembers(e.raw)
	if err != nil {
		return e
	}
	ms = without(ms, "cursor")
	for i := range ms {
		switch {
		case ms[i].name == "parentId":
			ms[i].value = parentValue(parent)
		case ms[i].name == "firstKeptEntryId" && kept != "":
			ms[i].value = mustValue(kept)
		}
	}
	ne := *e
	ne.Cursor, ne.ParentID = "", parent
	ne.setRaw(buildObject(ms))
	return &ne
}
