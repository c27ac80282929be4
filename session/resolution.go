package session

import (
	"fmt"
	"maps"
)

// Level is the fidelity at which a cursor renders an entry (SPEC §6.3).
type Level string

// Resolution levels.
const (
	Full       Level = "full"
	Outlined   Level = "outlined"
	Summarized Level = "summarized"
	Pinned     Level = "pinned"
	Compacted  Level = "compacted"
	Attached   Level = "attached"
)

// Valid reports whether l is one of the six levels.
func (l Level) Valid() bool {
	switch l {
	case Full, Outlined, Summarized, Pinned, Compacted, Attached:
		return true
	}
	return false
}

// Resolution is one cursor's stamp on one entry; Text, when set, is the outline
// or summary to render instead of the generated one.
type Resolution struct {
	Level Level  `json:"level"`
	Text  string `json:"text,omitzero"`
}

func (c *cursor) setResolution(target string, r Resolution) {
	if c.res == nil {
		c.res = map[string]Resolution{}
	}
	c.res[target] = r
}

// DefaultLevel is the level an entry renders at when no cursor stamped it:
// full for what reaches the model, attached for metadata.
func DefaultLevel(e *Entry) Level {
	switch e.Type {
	case TypeMessage, TypeCustomMessage, TypeBranchSummary, TypeCompaction:
		return Full
	}
	return Attached
}

// Resolvable says whether a person may give entry e the level: an arbor
// marker never (ErrIsMarker); an entry that never reaches the model (a model
// change, a label, …) only its default, attached (ErrNeverSent). It is the
// one check for everything that stamps for a person (arbor pin, outline,
// summarize, unpin and the RPC servers); SetResolution itself only refuses
// markers.
func Resolvable(e *Entry, level Level) error {
	if e.IsMarker() {
		return fmt.Errorf("%w: %s is not part of the conversation", ErrIsMarker, e.ID)
	}
	if DefaultLevel(e) == Attached && level != Attached {
		return fmt.Errorf("%w: %s is a %s entry; only messages, custom messages and summaries can be pinned or rendered shorter", ErrNeverSent, e.ID, e.Type)
	}
	return nil
}

// SetResolution stamps an entry with a level for this cursor (persisted as a
// marker). It does not change which cursor is active.
func (c *Cursor) SetResolution(target string, r Resolution) error {
	if !r.Level.Valid() {
		return fmt.Errorf("session: unknown resolution level %q (want full, outlined, summarized, pinned, compacted or attached)", r.Level)
	}
	_, err := c.l.locked(func() (*Entry, error) {
		n, ok := c.l.byID[target]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, target)
		}
		if n.e.IsMarker() {
			return nil, fmt.Errorf("%w: %s", ErrIsMarker, target)
		}
		data := []member{{"target", mustValue(target)}, {"level", mustValue(string(r.Level))}}
		if r.Text != "" {
			data = append(data, member{"text", mustValue(r.Text)})
		}
		active := c.l.active
		e, err := c.l.marker(c.cid(), MarkerResolution, nil, data)
		if err != nil {
			return nil, err
		}
		return e, c.l.keepActive(active)
	})
	return err
}

// Resolution returns this cursor's stamp on target and whether there is one.
func (c *Cursor) Resolution(target string) (Resolution, bool) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	cur, ok := c.l.cursors[c.cid()]
	if !ok {
		return Resolution{}, false
	}
	r, ok := cur.res[target]
	return r, ok
}

// Resolutions returns a copy of this cursor's stamps, keyed by entry id.
func (c *Cursor) Resolutions() map[string]Resolution {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return copyResolutions(c.l.cursors[c.cid()])
}

// ContextWithResolutions returns this cursor's context and a copy of its
// stamps, read at one moment, so an append between two calls cannot pair a
// context with stamps it does not have (package window's Fit uses it).
func (c *Cursor) ContextWithResolutions() (Context, map[string]Resolution) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	cur, ok := c.l.cursors[c.cid()]
	if !ok {
		return emptyContext(), map[string]Resolution{}
	}
	return c.l.buildContext(cur.leaf), copyResolutions(cur)
}

// copyResolutions returns a copy of cur's stamps (empty for no cursor).
func copyResolutions(cur *cursor) map[string]Resolution {
	if cur == nil || cur.res == nil {
		return map[string]Resolution{}
	}
	return maps.Clone(cur.res)
}

// Pin keeps an entry in full for this cursor: a context budget never
// downgrades or leaves it out.
func (c *Cursor) Pin(id string) error { return c.SetResolution(id, Resolution{Level: Pinned}) }

// Unpin returns an entry to its default level for this cursor (full for
// messages), undoing Pin, Outline or Summarize.
func (c *Cursor) Unpin(id string) error {
	e := c.l.Entry(id)
	if e == nil {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return c.SetResolution(id, Resolution{Level: DefaultLevel(e)})
}

// Outline renders an entry as an outline for this cursor; text, when not
// empty, is the outline to show instead of the generated one.
func (c *Cursor) Outline(id, text string) error {
	return c.SetResolution(id, Resolution{Level: Outlined, Text: text})
}

// Summarize renders an entry as a one-line summary for this cursor; text,
// when not empty, is the summary to show instead of the generated one.
func (c *Cursor) Summarize(id, text string) error {
	return c.SetResolution(id, Resolution{Level: Summarized, Text: text})
}
