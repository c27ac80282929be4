package pgstore

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
)

// ErrUnstorable is returned for a session the database cannot hold as it is:
// an id, parent id, type or timestamp with a NUL character or bytes that are
// not UTF-8. Those are text columns, and PostgreSQL's text refuses both
// (what an entry says beyond them is kept as bytes and is never refused).
var ErrUnstorable = errors.New("pgstore: the database cannot store this session")

// storable reports whether a session id and its entries fit the text
// columns; the error names the first value that does not.
func storable(id string, es []*session.Entry) error {
	if !textColumn(id) {
		return fmt.Errorf("%w: its id %q has a NUL character or bytes that are not UTF-8 (%s)", ErrUnstorable, id, keepIt)
	}
	for _, e := range es {
		for _, f := range [...]struct{ name, v string }{{"id", e.ID}, {"parentId", e.ParentID}, {"type", e.Type}, {"timestamp", e.Timestamp}} {
			if !textColumn(f.v) {
				return fmt.Errorf("%w: entry %q: its %s %q has a NUL character or bytes that are not UTF-8 (%s)", ErrUnstorable, e.ID, f.name, f.v, keepIt)
			}
		}
	}
	return nil
}

// keepIt is what a refusal tells the user to do.
const keepIt = "nothing was stored; keep the session as a file, or correct that value in the file and push it again"

// textColumn reports whether PostgreSQL's text type takes s.
func textColumn(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
