package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arborlog/arbor/session/jsonl"
)

// LockError names the writer that holds a session.
type LockError struct {
	Session string
	// Holder is the holder's record: its pid, host, start and program alone
	// (never its command line, which may hold a password).
	Holder  jsonl.Holder
	Backend int  // the holder's server process
	Arbor   bool // the holder left its record in arbor_writers
}

func (e *LockError) Error() string {
	if !e.Arbor {
		return fmt.Sprintf("session %s is locked for writing by database backend %d, which left no arbor record; close it there first", e.Session, e.Backend)
	}
	h := e.Holder
	who := "a writer"
	if h.Program != "" {
		who = fmt.Sprintf("%q", h.Program)
	}
	parts := []string{fmt.Sprintf("pid %d", h.PID)}
	if h.User != "" {
		parts = append(parts, fmt.Sprintf("user %q", h.User))
	}
	parts = append(parts, fmt.Sprintf("host %q", h.Host))
	if h.Started != "" {
		parts = append(parts, "since "+h.Started)
	}
	return fmt.Sprintf("session %s is open for writing by %s (%s; database backend %d); close it there first", e.Session, who, strings.Join(parts, ", "), e.Backend)
}

// Unwrap makes a LockError jsonl.ErrLocked, as the file store's is.
func (e *LockError) Unwrap() error { return jsonl.ErrLocked }

// lockKey is the advisory lock key of a session.
func lockKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("arbor.session\x00" + id))
	return int64(h.Sum64())
}

// tryLock takes the writer lock of session id on c, and records this process
// as its holder. It returns a LockError naming the holder when another has it.
func tryLock(ctx context.Context, c *pgx.Conn, id string) error {
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(id)).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return holder(ctx, c, id)
	}
	host, _ := os.Hostname()
	_, err := c.Exec(ctx, `INSERT INTO arbor_writers (session_id, backend_pid, pid, host, os_user, command, started)
		VALUES ($1, pg_backend_pid(), $2, $3, $4, $5, $6)
		ON CONFLICT (session_id) DO UPDATE SET backend_pid = excluded.backend_pid, pid = excluded.pid,
			host = excluded.host, os_user = excluded.os_user, command = excluded.command, started = excluded.started`,
		id, os.Getpid(), host, jsonl.OSUser(), jsonl.Program(), time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		c.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockKey(id))
		return err
	}
	return nil
}

// holder finds who holds session id's lock, from the server's lock table and
// the holder's record. The holder may be between taking the lock and
// recording itself: its record is looked for again for a moment.
func holder(ctx context.Context, c *pgx.Conn, id string) error {
	key := uint64(lockKey(id))
	le := &LockError{Session: id}
	for try := 0; try < 5; try++ {
		err := c.QueryRow(ctx, `SELECT l.pid, w.pid IS NOT NULL, coalesce(w.pid, 0), coalesce(w.host, ''), coalesce(w.os_user, ''), coalesce(w.command, ''), coalesce(w.started, '')
			FROM pg_locks l LEFT JOIN arbor_writers w ON w.session_id = $1 AND w.backend_pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
				AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND l.classid::bigint = $2 AND l.objid::bigint = $3`,
			id, int64(key>>32), int64(key&0xffffffff)).Scan(&le.Backend, &le.Arbor, &le.Holder.PID, &le.Holder.Host, &le.Holder.User, &le.Holder.Program, &le.Holder.Started)
		if errors.Is(err, pgx.ErrNoRows) {
			// Released in between: say so rather than name nobody.
			return fmt.Errorf("%w: session %s was locked for writing a moment ago; try again", jsonl.ErrLocked, id)
		}
		if err != nil {
			return err
		}
		if le.Arbor {
			// An arbor from before schema 2 records its command line.
			le.Holder.Program = jsonl.ProgramOf(strings.Fields(le.Holder.Program))
			break
		}
		time.Sleep(time.Duration(try+1) * 5 * time.Millisecond)
	}
	return le
}

// unlock releases session id's lock on c and drops the holder's record.
func unlock(ctx context.Context, c *pgx.Conn, id string) error {
	// Unlock first: a second writer refused in between still finds the record.
	if _, err := c.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockKey(id)); err != nil {
		return err
	}
	_, err := c.Exec(ctx, `DELETE FROM arbor_writers WHERE session_id = $1 AND backend_pid = pg_backend_pid()`, id)
	return err
}
