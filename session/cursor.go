package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

type cursor struct {
	id    string
	name  string
	last  *node // the cursor's last entry in file order
	leaf  *node // nil: before the first entry
	res   map[string]Resolution
	order int
}

// Arbor marker types (SPEC §6.2, §6.3): the customType of the custom entries
// that record cursors, leaf moves and resolutions.
const (
	MarkerCursor     = "arbor.cursor"
	MarkerLeaf       = "arbor.leaf"
	MarkerResolution = "arbor.resolution"
)

// Marker is what one of arbor's marker entries records.
type Marker struct {
	Kind   string // MarkerCursor, MarkerLeaf or MarkerResolution
	Cursor string // the cursor it belongs to (MainCursor for the main one)
	// A cursor marker: the name it gives the cursor, if any.
	Name *string
	// A leaf marker: where the leaf was (nil if not recorded), and whether
	// it moved to before the first entry.
	From    *string
	Cleared bool
	// A resolution marker: the entry and the level it sets.
	Target, Level string
}

// Marker decodes a marker entry (IsMarker); ok is false for any other entry.
func (e *Entry) Marker() (m Marker, ok bool) {
	if !e.IsMarker() {
		return Marker{}, false
	}
	var v struct {
		Data struct {
			Name   *string `json:"name"`
			From   *string `json:"from"`
			Target string  `json:"target"`
			Level  string  `json:"level"`
		} `json:"data"`
	}
	_ = unmarshal(e.raw, &v)
	m = Marker{Kind: e.customType(), Cursor: e.Cursor, Target: v.Data.Target, Level: v.Data.Level}
	if m.Cursor == "" {
		m.Cursor = MainCursor
	}
	switch m.Kind {
	case MarkerCursor:
		m.Name = v.Data.Name
	case MarkerLeaf:
		m.From, m.Cleared = v.Data.From, e.ParentID == ""
	}
	return m, true
}

func (l *Log) replayMarker(c *cursor, e *Entry) {
	var v struct {
		Data struct {
			Name   *string `json:"name"`
			Target string  `json:"target"`
			Level  string  `json:"level"`
			Text   string  `json:"text"`
		} `json:"data"`
	}
	if unmarshal(e.raw, &v) != nil {
		return
	}
	switch e.customType() {
	case MarkerCursor:
		if v.Data.Name != nil {
			c.name = strings.TrimSpace(*v.Data.Name)
		}
	case MarkerResolution:
		if v.Data.Target != "" {
			c.setResolution(v.Data.Target, Resolution{Level: Level(v.Data.Level), Text: v.Data.Text})
		}
	}
}

func cursorID(e *Entry) string {
	if e.Cursor == "" {
		return MainCursor
	}
	return e.Cursor
}

// cursor returns the cursor with this id, adding it to the roster if it is new.
func (l *Log) cursor(id string) *cursor {
	c, ok := l.cursors[id]
	if !ok {
		c = &cursor{id: id, order: len(l.corder)}
		l.cursors[id] = c
		l.corder = append(l.corder, id)
	}
	return c
}

// BranchTo moves the active cursor's leaf to an existing entry (persisted).
func (l *Log) BranchTo(id string) error { return l.Cursor("").BranchTo(id) }

// ResetLeaf moves the active cursor to before the first entry, so the next
// append starts a new root (persisted, unlike pi's).
func (l *Log) ResetLeaf() error { return l.Cursor("").ResetLeaf() }

// Cursor is a handle on one cursor of a log. Appends through it extend its own
// branch; several cursors can be used at once from different goroutines.
type Cursor struct {
	l  *Log
	id string // "" means whichever cursor is active at the time of the call
}

// Cursor returns a handle on the cursor with this id or name ("" for the active one).
// Operations on an unknown cursor fail with ErrNoCursor.
func (l *Log) Cursor(idOrName string) *Cursor {
	if idOrName == "" {
		return &Cursor{l: l}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.findCursor(idOrName); c != nil {
		return &Cursor{l: l, id: c.id}
	}
	return &Cursor{l: l, id: idOrName}
}

func (l *Log) findCursor(idOrName string) *cursor {
	if c, ok := l.cursors[idOrName]; ok {
		return c
	}
	for _, id := range l.corder {
		if c := l.cursors[id]; c.name != "" && c.name == idOrName {
			return c
		}
	}
	return nil
}

func (c *Cursor) cid() string {
	if c.id == "" {
		return c.l.active
	}
	return c.id
}

// ID returns the cursor's id.
func (c *Cursor) ID() string {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return c.cid()
}

// Log returns the log the cursor belongs to.
func (c *Cursor) Log() *Log { return c.l }

// marker appends an arbor marker under parent (nil: the cursor's leaf).
func (l *Log) marker(cid, kind string, parent *string, data []member) (*Entry, error) {
	return l.appendOn(cid, TypeCustom, parent, []member{{"customType", mustValue(kind)}, {"data", buildObject(data)}})
}

func leafID(n *node) jsontext.Value {
	if n == nil {
		return jsontext.Value("null")
	}
	return mustValue(n.e.ID)
}

// BranchTo moves the cursor's leaf to an existing entry, recording the move so it
// survives a restart.
func (c *Cursor) BranchTo(id string) error {
	_, err := c.l.locked(func() (*Entry, error) {
		cid := c.cid()
		cur, ok := c.l.cursors[cid]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoCursor, cid)
		}
		n, ok := c.l.byID[id]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if n.e.IsMarker() {
			return nil, fmt.Errorf("%w: %s", ErrIsMarker, id)
		}
		return c.l.marker(cid, MarkerLeaf, &id, []member{{"from", leafID(cur.leaf)}})
	})
	return err
}

// ResetLeaf moves the cursor to before the first entry: its context is empty and the
// next append starts a new root. Nothing is deleted.
func (c *Cursor) ResetLeaf() error {
	_, err := c.l.locked(func() (*Entry, error) {
		cid := c.cid()
		cur, ok := c.l.cursors[cid]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoCursor, cid)
		}
		root := ""
		return c.l.marker(cid, MarkerLeaf, &root, []member{{"from", leafID(cur.leaf)}})
	})
	return err
}

// Rename sets this cursor's name ("" clears it). Names are unique: a name that
// another cursor holds, or that is another cursor's id, is refused.
func (c *Cursor) Rename(name string) error {
	name = strings.TrimSpace(name)
	_, err := c.l.locked(func() (*Entry, error) {
		cid := c.cid()
		if other := c.l.findCursor(name); name != "" && other != nil && other.id != cid {
			return nil, fmt.Errorf("session: a cursor named %q exists already", name)
		}
		active := c.l.active
		e, err := c.l.marker(cid, MarkerCursor, nil, []member{{"name", mustValue(name)}})
		if err != nil {
			return nil, err
		}
		return e, c.l.keepActive(active)
	})
	return err
}

// keepActive follows a marker written through another cursor than active, the
// one that was active before it. Such a marker sits under its own cursor's
// leaf; marking active's leaf again keeps the file's last line on the active
// branch, where pi and a reopen continue, so that naming a cursor or setting
// its resolutions does not switch to it. The caller holds l.mu.
func (l *Log) keepActive(active string) error {
	last := l.entries[len(l.entries)-1]
	if cursorID(last) == active {
		return nil
	}
	act := l.cursors[active]
	_, err := l.marker(active, MarkerLeaf, ptrTo(idOf(act.leaf)), []member{{"from", leafID(act.leaf)}})
	return err
}

func ptrTo(s string) *string { return &s }

// idOf returns n's entry id, or "" for no entry.
func idOf(n *node) string {
	if n == nil {
		return ""
	}
	return n.e.ID
}

// CursorInfo describes one cursor of the roster.
type CursorInfo struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Leaf   string `json:"leaf"` // "" when the cursor is before the first entry
	Active bool   `json:"active"`
}

// NewCursor creates a cursor at the active cursor's leaf (rho's fork), named
// name unless it is blank, and returns a handle on it. The active cursor does
// not change. It is not a new session: Branched and Copy make those.
func (l *Log) NewCursor(name string) (*Cursor, error) {
	e, err := l.locked(func() (*Entry, error) {
		from := l.cursors[l.active]
		id := randomID(func(id string) bool { _, ok := l.cursors[id]; return ok })
		data := []member{}
		if strings.TrimSpace(name) != "" {
			if l.findCursor(strings.TrimSpace(name)) != nil {
				return nil, fmt.Errorf("session: a cursor named %q exists already", strings.TrimSpace(name))
			}
			data = append(data, member{"name", mustValue(strings.TrimSpace(name))})
		}
		l.cursor(id)
		parent := ""
		if from.leaf != nil {
			parent = from.leaf.e.ID
		}
		// An arbor.cursor marker never changes the active cursor (see replay).
		e, err := l.marker(id, MarkerCursor, &parent, data)
		if err != nil {
			delete(l.cursors, id)
			l.corder = slices.DeleteFunc(l.corder, func(c string) bool { return c == id })
			return nil, err
		}
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return &Cursor{l: l, id: e.Cursor}, nil
}

// Switch makes another cursor the active one, recording it so a reopen restores it.
func (l *Log) Switch(idOrName string) error {
	_, err := l.locked(func() (*Entry, error) {
		c := l.findCursor(idOrName)
		if c == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoCursor, idOrName)
		}
		if c.id == l.active {
			return nil, nil
		}
		parent := ""
		if c.leaf != nil {
			parent = c.leaf.e.ID
		}
		return l.marker(c.id, MarkerLeaf, &parent, []member{{"from", leafID(c.leaf)}})
	})
	return err
}

// Cursors returns the roster: main first, then the others in order of creation.
func (l *Log) Cursors() []CursorInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]CursorInfo, 0, len(l.corder))
	for _, id := range l.corder {
		c := l.cursors[id]
		ci := CursorInfo{ID: id, Name: c.name, Active: id == l.active}
		if c.leaf != nil {
			ci.Leaf = c.leaf.e.ID
		}
		out = append(out, ci)
	}
	return out
}

// Active returns the id of the active cursor.
func (l *Log) Active() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}
