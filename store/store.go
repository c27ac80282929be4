package store

import (
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// Durability says when an append is made durable; see jsonl.Durability. In a
// database, Always commits every entry synchronously, Turn commits every entry
// and waits for the write-ahead log at the end of a turn (an assistant
// message, a compaction) and on close, Never never waits for it.
type Durability = jsonl.Durability

// The durability policies.
const (
	Turn   = jsonl.Turn
	Always = jsonl.Always
	Never  = jsonl.Never
)

// Options say how a session is created or opened for writing.
type Options struct {
	Durability Durability
	// Immediate writes a new session at its first append instead of at its
	// first assistant message (or Flush).
	Immediate bool
	// Log configures a new session's log: its header's fields
	// (session.WithID, session.WithParent), its clock (session.WithClock).
	// Its store is always this one.
	Log []session.Option
}

// Session is a session open for writing: its Log appends through the store.
type Session interface {
	// Log is the session; its appends are acknowledged once durable under the policy.
	Log() *session.Log
	// Ref names the session in this store (a file path, or an id in a database).
	Ref() string
	// Flush writes a new session now, even before its first assistant message.
	Flush() error
	// Close makes every append durable and releases the writer lock.
	Close() error
}

// Store keeps sessions.
type Store interface {
	// Create starts a new session for cwd. In the file store, where is the
	// folder it goes in ("" for the project's default folder).
	Create(cwd, where string, o Options) (Session, error)
	// Open opens the session ref for writing: it takes the writer lock, which
	// a second writer is refused with an error naming the holder.
	Open(ref string, o Options) (Session, error)
	// Read loads the session ref without the lock and without writing.
	Read(ref string) (*session.Log, error)
	// Resolve turns what a user typed (a ref, an id, an id prefix, a name)
	// into a ref.
	Resolve(arg string, s catalog.Scope) (string, error)
	// List returns the sessions in scope, newest first.
	List(s catalog.Scope, o catalog.ListOptions) ([]catalog.Info, error)
	// Latest returns the session in scope written last, archived ones aside.
	Latest(s catalog.Scope) (catalog.Info, error)
	// Search finds the entries in scope that match q.
	Search(s catalog.Scope, q catalog.Query, o catalog.SearchOptions) ([]catalog.Hit, error)
	// Archive hides the session ref from listings and searches (unless asked
	// for archived ones) without moving it; Unarchive shows it again, and
	// reports false when it was not archived.
	Archive(ref string) error
	Unarchive(ref string) (bool, error)
	// Close releases what the store holds (connections, the index).
	Close() error
}
