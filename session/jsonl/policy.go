package jsonl

import "github.com/arborlog/arbor/session"

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
