package jsonl

import (
	"errors"

	"github.com/arborlog/arbor/session"
)

// SyncsAfter reports whether the policy makes e durable before its append is
// acknowledged: Always after every entry, Turn after an assistant message or
// a compaction (the end of a turn), Never never. Every store applies it.
func (d Durability) SyncsAfter(e *session.Entry) bool {
	switch d {
	case Always:
		return true
	case Turn:
		return (e.Type == session.TypeMessage && e.Role() == session.RoleAssistant) || e.Type == session.TypeCompaction
	}
	return false
}

// ErrUnwritten is returned by Close when a new session still held entries
// back for its first user or assistant message (setup entries such as a model
// change): they were not written, as pi 1.6.0 writes no file for them either.
// Callers that mean to keep them call Flush before Close.
var ErrUnwritten = errors.New("jsonl: closed before the session's first message: entries held back were not written")

// HasConversation reports whether es hold a user or an assistant message: a
// new session is written at the first one, as pi 1.6.0 decides (a prompt is
// on disk even if its turn never completes; setup entries alone leave nothing).
func HasConversation(es []*session.Entry) bool {
	for _, e := range es {
		if e.Type == session.TypeMessage && (e.Role() == session.RoleAssistant || e.Role() == session.RoleUser) {
			return true
		}
	}
	return false
}
