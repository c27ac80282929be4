package catalog

import (
	"encoding/json"
	"time"
)

// This file lets a store that keeps sessions elsewhere than in files (pgstore)
// produce the same records as the file catalog, from the same definitions.

// Summary folds a session's lines, one at a time, into its listing record,
// exactly as a file's lines are folded (pi's buildSessionInfo). Its state
// survives MarshalJSON and UnmarshalJSON, so a store can keep it beside the
// session and fold only what is appended.
type Summary struct {
	s summary
	l line
}

// Add folds one line (without its newline): the header first, then each entry.
func (s *Summary) Add(b []byte) { s.s.add(&s.l, b) }

// Info returns the listing record for the lines folded so far, with path as
// Info.Path, size as SizeBytes and mtime as the last resort for Modified. It
// reports false when the lines are not a session pi would list.
func (s *Summary) Info(path string, size int64, mtime time.Time) (Info, bool) {
	return s.s.info(path, size, mtime), s.s.isSession()
}

// MarshalJSON saves the fold's state.
func (s *Summary) MarshalJSON() ([]byte, error) { return json.Marshal(&s.s) }

// UnmarshalJSON restores a state MarshalJSON saved.
func (s *Summary) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &s.s) }

// EntryText returns the searchable text of one session line (what the user
// and the assistant wrote, thinking, tool arguments and results), or "" when
// it has none or is not valid JSON.
func EntryText(b []byte) string {
	var l line
	if !l.scan(b) {
		return ""
	}
	return entryText(&l)
}

// Tokens returns the lower-cased tokens a search matches in text, in order.
func Tokens(text string) []string { return tokens(text) }

// Needs returns lower-case ASCII strings that every match of a regular
// expression query contains (none for words and phrases): a prefilter.
func (q Query) Needs() []string { return q.needs }

// MatchLine makes a search hit of one session line when it matches q. path
// and sessionID name the session in the hit.
func MatchLine(path, sessionID string, b []byte, q Query) (Hit, bool) {
	var l line
	if !l.scan(b) {
		return Hit{}, false
	}
	text := entryText(&l)
	if text == "" {
		return Hit{}, false
	}
	marks, ok := q.Match(text)
	if !ok {
		return Hit{}, false
	}
	return makeHit(&entry{Info: Info{Path: path, ID: sessionID}}, &l, text, marks), true
}
