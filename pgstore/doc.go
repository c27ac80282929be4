// Package pgstore keeps sessions in PostgreSQL (through pgx), with the
// guarantees of the file store (session/jsonl), for a fleet of agents that
// share one place.
//
// Use: Open(url) connects, migrates the schema and returns a store.Store
// (ExampleOpen).
//
// # Layout
//
// arbor_sessions holds one row per session: its header line byte for byte,
// and the listing record's fold (catalog.Summary) kept up to date by every
// append, so listing is one query. arbor_entries holds one row per entry: the
// raw line byte for byte beside the envelope columns (id, parent, type,
// timestamp, position; the header is position 0) and the entry's searchable
// text as a tsvector. The schema is migrated at start (arbor_schema holds the
// version; Migrate and 'arbor db migrate' do it explicitly).
//
// # Guarantees
//
//   - One writer per session: a session-level advisory lock, held by a
//     connection reserved for the writer, so it dies with that connection
//     (the process, or the server, gone). The holder records itself in
//     arbor_writers (its program, pid, host and user: never its command
//     line); a second writer is refused with a LockError naming it.
//   - No password leaves the process: every connection string pgstore puts
//     in a record, an error or a name (Store.Name) is masked by Redact. A
//     server that cannot be reached is a ConnectError naming the address and
//     one cause.
//   - Appends go through the lock's connection, one implicit transaction per
//     entry (the entry, the session's row, the notification), so a writer
//     whose lock died can acknowledge nothing more.
//   - Durability: Always commits every entry with synchronous_commit on; Turn
//     commits every entry at once but waits for the write-ahead log only at an
//     assistant message, a compaction and on close (a server crash can lose
//     the entries of the turn in progress, never a client crash); Never never
//     waits for it.
//   - A connection lost mid-append is resolved before Write returns: the lost
//     backend is ended, then the entry is looked up. Found, it is
//     acknowledged; not found, it is reported as not written. Only an append
//     known not to have committed is retried, once, and only when the writer
//     gets its lock back with no entry written by anyone meanwhile.
//   - A new session writes nothing until its first assistant message (unless
//     Immediate or Flush), as with files.
//   - Followers (Follow) learn of new entries through LISTEN/NOTIFY.
//   - Listing and search return what the file catalog returns for the same
//     sessions (catalog.Info, catalog.Hit), Info.Path being the session id.
package pgstore
