package session

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// fromEntries builds a log over entries that belong to a new, not yet written session.
func fromEntries(h Header, entries []*Entry) *Log {
	l := emptyLog(h)
	l.index(entries)
	l.report = Report{Version: h.Version, Entries: len(l.entries)}
	return l
}

// Branched returns a new session holding only the path root→leafID (SPEC §6.1,
// pi's createBranchedSession): label entries on the path are dropped and the
// labels of path entries are re-emitted as new label entries after it, with
// their original timestamps. Entries lose any cursor field: the new session is
// one line of work on its main cursor. opts set the new header (WithParent).
func (l *Log) Branched(leafID string, opts ...HeaderOption) (*Log, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.byID[leafID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, leafID)
	}
	nl := New(l.header.Cwd, opts...)
	var path []*Entry
	onPath := map[string]bool{}
	for _, pn := range l.path(n) {
		if pn.e.Type == TypeLabel {
			continue
		}
		path = append(path, withoutCursor(pn.e))
		onPath[pn.e.ID] = true
	}
	parent := ""
	if len(path) > 0 {
		parent = path[len(path)-1].ID
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
	return fromEntries(nl.header, path), nil
}

// Copy returns a new session holding every entry of l, on every branch, as
// forkFrom does when a session moves to another project. l is already migrated,
// so an old file becomes a proper version 3 session (pi copies it unmigrated).
func (l *Log) Copy(cwd string, opts ...HeaderOption) *Log {
	l.mu.Lock()
	defer l.mu.Unlock()
	nl := New(cwd, opts...)
	return fromEntries(nl.header, append([]*Entry(nil), l.entries...))
}

func parentValue(id string) jsontext.Value {
	if id == "" {
		return jsontext.Value("null")
	}
	return mustValue(id)
}

func withoutCursor(e *Entry) *Entry {
	if e.Cursor == "" {
		return e
	}
	ms, err := objectMembers(e.raw)
	if err != nil {
		return e
	}
	ne := *e
	ne.Cursor = ""
	ne.setRaw(buildObject(without(ms, "cursor")))
	return &ne
}
