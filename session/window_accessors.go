package session

import "fmt"

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
