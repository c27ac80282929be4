package store

import (
	"errors"
	"fmt"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// Forker starts the session holding the branch of l (read from ref) that
// ends at leaf, open for writing: jsonl.BranchFrom for files, the database's
// adoption of session.Log.Branched for PostgreSQL.
type Forker func(ref string, l *session.Log, leaf string) (Session, error)

// ErrNotUserMessage refuses to fork before an entry that is not a user message.
var ErrNotUserMessage = errors.New("store: not a user message")

// ForkBefore is pi's /fork: a new session from the branch of l (read from
// ref) that ends at the parent of the user message entryID, with parentSession
// naming ref. When the message is the first entry, the new session is empty
// (created for cwd in where); otherwise it is written at once, so it is listed
// before its first reply. It returns the session, open for writing, and the
// message's text, for the editor. l and the file at ref are not changed.
func ForkBefore(st Store, fork Forker, ref string, l *session.Log, entryID, cwd, where string) (Session, string, error) {
	en := l.Entry(entryID)
	if en == nil {
		return nil, "", fmt.Errorf("%w: %s", session.ErrNotFound, entryID)
	}
	if en.Role() != session.RoleUser {
		return nil, "", fmt.Errorf("%w: %s is a %s", ErrNotUserMessage, entryID, describe(en))
	}
	text := MessageText(en)
	var (
		s   Session
		err error
	)
	if en.ParentID == "" {
		s, err = st.Create(cwd, where, Options{Log: []session.Option{session.WithParent(ref)}})
	} else {
		s, err = fork(ref, l, en.ParentID)
	}
	if err != nil {
		return nil, "", err
	}
	if s.Log().Len() > 0 {
		if err := s.Flush(); err != nil {
			_ = s.Close()
			return nil, "", err
		}
	}
	return s, text, nil
}

func describe(en *session.Entry) string {
	if r := en.Role(); r != "" {
		return r + " message"
	}
	return en.Type + " entry"
}

// MessageText is the text of a message entry's content: its text blocks, one
// per line ("" when the entry is not a message).
func MessageText(en *session.Entry) string {
	m, err := en.Message()
	if err != nil {
		return ""
	}
	d, err := m.Data()
	if err != nil {
		return ""
	}
	return d.Content.Text("\n")
}

// ForkFile is the file store's Forker: jsonl.BranchFrom, the file written
// beside ref.
func ForkFile(ref string, l *session.Log, leaf string) (Session, error) {
	s, err := jsonl.BranchFrom(ref, l, leaf)
	if err != nil {
		return nil, err
	}
	return FileSession{Session: s}, nil
}
