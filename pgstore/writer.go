package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

// Session is a session open for writing in the database.
type Session struct {
	log *session.Log
	w   *writer
}

var _ store.Session = (*Session)(nil)

// Log returns the session.
func (s *Session) Log() *session.Log { return s.log }

// Ref returns the session's id.
func (s *Session) Ref() string { return s.w.id }

// Flush writes a new session now, even before its first assistant message.
func (s *Session) Flush() error { return s.w.flush() }

// Close makes every append durable, releases the writer lock and its connection.
func (s *Session) Close() error { return s.w.close() }

// writer persists a Log's appends to the database. It holds the session's
// writer lock on conn, a connection taken out of the pool, and appends on it.
type writer struct {
	mu      sync.Mutex
	st      *Store
	id      string
	policy  store.Durability
	conn    *pgx.Conn // holds the lock; nil after it was lost
	backend uint32    // conn's server process
	syncOn  bool      // conn's synchronous_commit
	unsafe  bool      // entries were committed without waiting for the WAL

	created bool
	defer_  bool
	header  []byte
	pending []*session.Entry

	pos  int   // the last entry's position
	size int64 // the session's size as a file
	fold catalog.Summary

	broken error
	closed bool
}

var _ session.Store = (*writer)(nil)

// Create starts a new session for cwd; where is ignored (the database has no
// folders). It takes the new session's writer lock at once; nothing is
// written until its first assistant message (unless Immediate, or Flush).
func (s *Store) Create(cwd, where string, o store.Options) (store.Session, error) {
	w := &writer{st: s, policy: o.Durability, defer_: !o.Immediate}
	l := session.New(cwd, append(o.Log, session.WithStore(w))...)
	id := l.Header().ID
	w.id, w.header = id, l.Header().Raw()
	ctx, cancel := s.ctx()
	defer cancel()
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM arbor_sessions WHERE id = $1)`, id).Scan(&exists); err != nil {
		return nil, s.wrap(err)
	}
	if exists {
		return nil, fmt.Errorf("session %s already exists in the database; open it instead", id)
	}
	if err := w.lock(ctx); err != nil {
		return nil, err
	}
	return &Session{log: l, w: w}, nil
}

// Open opens the session with this id for writing: it takes its writer lock,
// then loads it.
func (s *Store) Open(id string, o store.Options) (store.Session, error) {
	w := &writer{st: s, id: id, policy: o.Durability, created: true}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := w.lock(ctx); err != nil {
		return nil, err
	}
	var fold []byte
	err := w.conn.QueryRow(ctx, `SELECT size, fold FROM arbor_sessions WHERE id = $1`, id).Scan(&w.size, &fold)
	if err == nil {
		err = w.fold.UnmarshalJSON(fold)
	}
	var data []byte
	if err == nil {
		data, w.pos, err = loadSession(ctx, w.conn, id)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("%w %q in the database; 'arbor ls' lists them", ErrNoSession, id)
	}
	if err != nil {
		w.release(ctx)
		return nil, err
	}
	l := session.Load(data, session.WithStore(w), session.WithSource("session "+id))
	w.header = l.Header().Raw()
	if l.ReadOnly() != nil {
		w.release(ctx)
	}
	return &Session{log: l, w: w}, nil
}

// lock takes the session's writer lock on a connection of its own.
func (w *writer) lock(ctx context.Context) error {
	pc, err := w.st.pool.Acquire(ctx)
	if err != nil {
		return w.st.wrap(err)
	}
	if err := tryLock(ctx, pc.Conn(), w.id); err != nil {
		pc.Release()
		var le *LockError
		if errors.As(err, &le) {
			return err
		}
		return w.st.wrap(err)
	}
	w.conn = pc.Hijack()
	w.backend = w.conn.PgConn().PID()
	w.syncOn = true
	return nil
}

// release drops the lock and closes its connection.
func (w *writer) release(ctx context.Context) error {
	if w.conn == nil {
		return nil
	}
	err := unlock(ctx, w.conn, w.id)
	w.conn.Close(ctx)
	w.conn = nil
	return err
}

// Refresh returns nothing: only the lock's holder appends to a session.
func (w *writer) Refresh() ([]*session.Entry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, fmt.Errorf("session %s is closed", w.id)
	}
	return nil, w.broken
}

// Write commits one entry (with the session itself, the first time).
func (w *writer) Write(e *session.Entry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("session %s is closed", w.id)
	}
	if w.broken != nil {
		return w.broken
	}
	if err := storable(w.id, []*session.Entry{e}); err != nil {
		return err
	}
	if !w.created {
		w.pending = append(w.pending, e)
		if w.defer_ && !jsonl.HasConversation(w.pending) {
			return nil
		}
		if err := w.commit(w.pending, w.policy != store.Never); err != nil {
			w.pending = w.pending[:len(w.pending)-1]
			return err
		}
		w.pending = nil
		return nil
	}
	return w.commit([]*session.Entry{e}, w.policy.SyncsAfter(e))
}

// batch is one append's rows and the session's state after it.
type batch struct {
	entries []*session.Entry
	pos     int
	size    int64
	fold    catalog.Summary
}

// plan computes the state after es without changing w.
func (w *writer) plan(es []*session.Entry) batch {
	b := batch{entries: es, pos: w.pos, size: w.size, fold: w.fold}
	if !w.created {
		b.fold = catalog.Summary{}
		b.fold.Add(w.header)
		b.size = int64(len(w.header) + 1)
	}
	for _, e := range es {
		b.fold.Add(e.Raw())
		b.size += int64(len(e.Raw()) + 1)
	}
	b.pos += len(es)
	return b
}

// commit writes es in one transaction, waiting for the WAL when sync. On
// success the writer's state moves on; on failure the entries are not
// written (or, if that cannot be known, the session refuses every later
// write and the error says so).
func (w *writer) commit(es []*session.Entry, sync bool) error {
	b := w.plan(es)
	ctx, cancel := w.st.ctx()
	defer cancel()
	if w.conn == nil {
		if err := w.relock(ctx); err != nil {
			return err
		}
	}
	err := w.send(ctx, b, sync)
	if err == nil {
		w.done(b, sync)
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && !w.conn.IsClosed() {
		// The server refused it: the transaction rolled back.
		return fmt.Errorf("append to session %s: %s (the entry was not written)", w.id, oneLine(err))
	}
	committed, known := false, pgconn.SafeToRetry(err)
	if !known {
		committed, known = w.resolve(b)
	}
	w.lost()
	switch {
	case !known:
		w.broken = fmt.Errorf("session %s: the connection was lost during an append (%s) and the server cannot be asked whether it was written; nothing more is written: reopen the session to see", w.id, oneLine(err))
		return w.broken
	case committed:
		w.done(b, sync)
		return nil
	}
	// Known not to have committed: retry once, if the lock comes back with
	// nothing written meanwhile.
	if rerr := w.relock(ctx); rerr != nil {
		return fmt.Errorf("append to session %s: the connection was lost (%s), so the entry was not written, and %w", w.id, oneLine(err), rerr)
	}
	if err := w.send(ctx, b, sync); err != nil {
		w.lost()
		return fmt.Errorf("append to session %s: %s (the entry was not written)", w.id, oneLine(err))
	}
	w.done(b, sync)
	return nil
}

func (w *writer) done(b batch, sync bool) {
	w.pos, w.size, w.fold, w.created = b.pos, b.size, b.fold, true
	if sync {
		w.unsafe = false
	} else {
		w.unsafe = true
	}
}

// lost forgets the lock's connection after it failed.
func (w *writer) lost() {
	if w.conn != nil {
		w.conn.Close(context.Background())
		w.conn = nil
	}
}

// relock takes the lock back on a new connection after the old one was lost.
// Another writer may have had the session meanwhile: if anything was
// appended since this writer's last entry, the lock is given up again.
func (w *writer) relock(ctx context.Context) error {
	if err := w.lock(ctx); err != nil {
		w.broken = fmt.Errorf("session %s lost its writer lock with its connection: %w", w.id, err)
		return w.broken
	}
	var n int
	err := w.conn.QueryRow(ctx, `SELECT entries FROM arbor_sessions WHERE id = $1`, w.id).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) && !w.created {
		err, n = nil, 0
	}
	if err == nil && n != w.pos {
		err = fmt.Errorf("another writer appended %d entries while this one had lost its lock; reopen the session", n-w.pos)
	}
	if err != nil {
		w.release(ctx)
		w.broken = fmt.Errorf("session %s lost its writer lock with its connection: %w", w.id, err)
		return w.broken
	}
	return nil
}

// resolve finds out whether a batch whose connection was lost committed: it
// ends the lost server process (waiting for it to be gone, so its transaction
// has finished one way or the other), then looks for the batch's last entry.
func (w *writer) resolve(b batch) (committed, known bool) {
	ctx, cancel := w.st.ctx()
	defer cancel()
	c, err := w.st.pool.Acquire(ctx)
	if err != nil {
		return false, false
	}
	defer c.Release()
	for {
		var alive bool
		err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, int32(w.backend)).Scan(&alive)
		if err != nil {
			return false, false
		}
		if !alive {
			break
		}
		c.Exec(ctx, `SELECT pg_terminate_backend($1)`, int32(w.backend))
		select {
		case <-ctx.Done():
			return false, false
		case <-time.After(10 * time.Millisecond):
		}
	}
	last := b.entries[len(b.entries)-1]
	var found bool
	err = c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM arbor_entries WHERE session_id = $1 AND position = $2 AND id = $3)`, w.id, b.pos, last.ID).Scan(&found)
	if err != nil {
		return false, false
	}
	return found, true
}

// send writes a batch as one implicit transaction (one round trip): the
// entries, the session's row, and the notification for followers.
func (w *writer) send(ctx context.Context, b batch, sync bool) error {
	var pb pgx.Batch
	if sync != w.syncOn {
		if sync {
			pb.Queue(`SET synchronous_commit = on`)
		} else {
			pb.Queue(`SET synchronous_commit = off`)
		}
	}
	if err := w.queue(&pb, b); err != nil {
		return err
	}
	if err := w.conn.SendBatch(ctx, &pb).Close(); err != nil {
		return err
	}
	w.syncOn = sync
	return nil
}

// queue adds the statements of an append: the session's row (inserted the
// first time, else updated), the entries, and the notification for followers.
func (w *writer) queue(pb *pgx.Batch, b batch) error {
	in, listed := b.fold.Info(w.id, b.size, time.Now())
	fold, err := b.fold.MarshalJSON()
	if err != nil {
		return err
	}
	if !w.created {
		pb.Queue(`INSERT INTO arbor_sessions (id, header, entries, size, fold, listed, cwd, name, parent_session, first_message,
				created_ms, modified_ms, messages, entry_count)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			w.id, w.header, b.pos, b.size, fold, listed, []byte(in.Cwd), []byte(in.Name), []byte(in.ParentSessionPath), []byte(in.FirstMessage),
			millis(in.Created), millis(in.Modified), in.MessageCount, in.EntryCount)
	}
	for i, e := range b.entries {
		queueEntry(pb, w.id, b.pos-len(b.entries)+1+i, e)
	}
	if w.created {
		pb.Queue(`UPDATE arbor_sessions SET entries = $2, size = $3, fold = $4, listed = $5, name = $6, first_message = $7,
				modified_ms = $8, messages = $9, entry_count = $10, updated_at = now() WHERE id = $1`,
			w.id, b.pos, b.size, fold, listed, []byte(in.Name), []byte(in.FirstMessage), millis(in.Modified), in.MessageCount, in.EntryCount)
	}
	pb.Queue(`SELECT pg_notify('arbor_entries', $1)`, w.id)
	return nil
}

// queueEntry adds the insert of one entry at pos.
func queueEntry(pb *pgx.Batch, id string, pos int, e *session.Entry) {
	raw := e.Raw()
	text, lex := searchable(raw)
	var parent *string
	if e.ParentID != "" {
		parent = &e.ParentID
	}
	pb.Queue(`INSERT INTO arbor_entries (session_id, position, id, parent, type, timestamp, raw, text, lexemes)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::tsvector)`,
		id, pos, e.ID, parent, e.Type, e.Timestamp, raw, text, lex)
}

func (w *writer) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.created || w.closed {
		return nil
	}
	if w.broken != nil {
		return w.broken
	}
	if err := w.commit(w.pending, w.policy != store.Never); err != nil {
		return err
	}
	w.pending = nil
	return nil
}

// close waits for the WAL when entries were committed without (Turn), then
// releases the lock and its connection.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var unwritten error
	if !w.created && len(w.pending) > 0 {
		unwritten = fmt.Errorf("%w: %d for session %s (Flush writes them)", jsonl.ErrUnwritten, len(w.pending), w.id)
	}
	if w.conn == nil {
		return unwritten
	}
	ctx, cancel := w.st.ctx()
	defer cancel()
	errs := []error{unwritten}
	if w.unsafe && w.policy != store.Never {
		// A transaction that writes waits for the WAL up to its commit, which
		// covers every earlier commit of this session.
		_, err := w.conn.Exec(ctx, `SET synchronous_commit = on`)
		if err == nil {
			_, err = w.conn.Exec(ctx, `UPDATE arbor_sessions SET updated_at = updated_at WHERE id = $1`, w.id)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: make appends durable: %s", w.id, oneLine(err)))
		}
	}
	if err := w.release(ctx); err != nil {
		errs = append(errs, fmt.Errorf("session %s: unlock: %s", w.id, oneLine(err)))
	}
	return errors.Join(errs...)
}

// Adopt stores a new in-memory session l (a fork or a branch of another, from
// Log.Copy or Log.Branched) in the database: it takes the session's writer
// lock and returns a session whose log is a copy of l, same header and
// entries, that appends to the database; every entry is written at the first
// flush or assistant message, as for Create. l itself stays in memory.
func (s *Store) Adopt(l *session.Log, o store.Options) (*Session, error) {
	h := l.Header()
	if err := storable(h.ID, l.Entries()); err != nil {
		return nil, err
	}
	w := &writer{st: s, id: h.ID, policy: o.Durability, defer_: !o.Immediate}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := w.lock(ctx); err != nil {
		return nil, err
	}
	var exists bool
	if err := w.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM arbor_sessions WHERE id = $1)`, h.ID).Scan(&exists); err != nil || exists {
		w.release(ctx)
		if err == nil {
			err = fmt.Errorf("session %s already exists in the database", h.ID)
		}
		return nil, err
	}
	opts := append(o.Log, session.WithID(h.ID), session.WithTimestamp(h.Timestamp), session.WithParent(h.ParentSession), session.WithStore(w))
	nl := l.Copy(h.Cwd, opts...)
	w.header, w.pending = nl.Header().Raw(), nl.Entries()
	return &Session{log: nl, w: w}, nil
}

// millis is a listing time as a column: milliseconds, or NULL when JavaScript's Date would be invalid.
func millis(t catalog.Time) *int64 {
	if !t.Valid() {
		return nil
	}
	ms := t.Time().UnixMilli()
	return &ms
}

// timeOf reads a listing time back from its column.
func timeOf(ms *int64) catalog.Time {
	if ms == nil {
		return catalog.Time{}
	}
	return catalog.TimeOf(time.UnixMilli(*ms))
}
