package cli

import (
	"fmt"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// edit opens a session for writing (taking its writer lock), runs f on it and
// closes it. Repairs the first append made to a damaged file are reported on
// stderr, so a user learns that a fragment was ended or <file>.bak now exists.
func (g *Global) edit(ios *IO, arg string, f func(s *jsonl.Session) error) error {
	s, err := g.open(arg)
	if err != nil {
		return err
	}
	err = f(s)
	for _, r := range s.Repairs() {
		ios.Warnf("%s", r)
	}
	if cerr := s.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close %s: %w", s.Path(), cerr)
	}
	return err
}

// targetOrErr returns the entry a command acts on: it must exist and must not
// be one of arbor's own markers.
func targetOrErr(l *session.Log, path, id string) (*session.Entry, error) {
	e, err := entryOrErr(l, path, id)
	if err != nil {
		return nil, err
	}
	if e.IsMarker() {
		return nil, fmt.Errorf("entry %s in %s is an arbor marker (%s), not part of the conversation; pick another id from 'arbor tree %s'", id, path, e.CustomType(), path)
	}
	return e, nil
}

// cursorOrErr returns the cursor with this id or name ("" for the active one).
func cursorOrErr(l *session.Log, path, idOrName string) (*session.Cursor, error) {
	c := l.Cursor(idOrName)
	if !hasCursor(l, c.ID()) {
		return nil, fmt.Errorf("no cursor %q in %s; 'arbor cursor ls %s' lists them", idOrName, path, path)
	}
	return c, nil
}
