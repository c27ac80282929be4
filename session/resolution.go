package session

import (
	"fmt"
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
	out := map[string]Resolution{}
	if cur, ok := c.l.cursors[c.cid()]; ok {
		for k, v := range cur.res {
			out[k] = v
		}
	}
	return out
}
