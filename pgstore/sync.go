package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// SyncResult says what a push or a pull did to one session.
type SyncResult struct {
	ID      string `json:"id"`
	Path    string `json:"path,omitempty"`
	Created bool   `json:"created"` // the session did not exist on the receiving side
	Added   int    `json:"added"`   // entries copied
}

// ErrDiverged is returned when both sides have entries the other lacks.
var ErrDiverged = errors.New("pgstore: the session differs on both sides")

// commonPrefix checks that have (ids on the receiving side) is a prefix of
// from (the sending side), and returns how many of from are new.
func commonPrefix(id string, have, from []string) (int, error) {
	if len(have) > len(from) || !slices.Equal(have, from[:len(have)]) {
		if len(from) <= len(have) && slices.Equal(from, have[:len(from)]) {
			return 0, nil // the receiving side is ahead: nothing to copy
		}
		return 0, fmt.Errorf("%w: session %s has entries on each side that the other lacks; copy one side away first", ErrDiverged, id)
	}
	return len(from) - len(have), nil
}

// Push copies a session file's content into the database: a new session
// whole, and to a session the database has, the entries it lacks (when its
// entries are the first of the file's). Lines that are not entries are left
// out; an old format version is migrated. It refuses while a writer holds the
// session.
func (s *Store) Push(data []byte) (SyncResult, error) {
	l := session.Load(data)
	rep := l.Report()
	if rep.NoHeader {
		return SyncResult{}, errors.New("not a session file: its first line is not a session header")
	}
	if l.ReadOnly() != nil {
		return SyncResult{}, l.ReadOnly()
	}
	h := l.Header()
	header := h.Raw()
	if rep.Migrated {
		header = session.MigratedHeader(h)
	}
	entries := l.Entries()
	res := SyncResult{ID: h.ID}
	if err := storable(h.ID, entries); err != nil {
		return res, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			var ok bool
			if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, lockKey(h.ID)).Scan(&ok); err != nil {
				return err
			}
			if !ok {
				return holder(ctx, c, h.ID)
			}
			w := &writer{st: s, id: h.ID, header: header}
			var fold []byte
			err := tx.QueryRow(ctx, `SELECT entries, size, fold FROM arbor_sessions WHERE id = $1 FOR UPDATE`, h.ID).Scan(&w.pos, &w.size, &fold)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				res.Created = true
			case err != nil:
				return err
			default:
				w.created = true
				if err := w.fold.UnmarshalJSON(fold); err != nil {
					return err
				}
			}
			var have []string
			if w.created {
				rows, err := tx.Query(ctx, `SELECT id FROM arbor_entries WHERE session_id = $1 ORDER BY position`, h.ID)
				if err != nil {
					return err
				}
				if have, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
					return err
				}
			}
			from := make([]string, len(entries))
			for i, e := range entries {
				from[i] = e.ID
			}
			n, err := commonPrefix(h.ID, have, from)
			if err != nil || (n == 0 && w.created) {
				return err
			}
			res.Added = n
			var pb pgx.Batch
			w.queue(&pb, w.plan(entries[len(entries)-n:]))
			return tx.SendBatch(ctx, &pb).Close()
		})
	})
	if err != nil {
		var le *LockError
		if errors.As(err, &le) || errors.Is(err, ErrDiverged) || errors.Is(err, jsonl.ErrLocked) {
			return res, err
		}
		return res, s.wrap(err)
	}
	return res, nil
}

// PushFile pushes the session file at path.
func (s *Store) PushFile(path string) (SyncResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return SyncResult{}, err
	}
	r, err := s.Push(data)
	r.Path = path
	if err != nil {
		return r, fmt.Errorf("push %s: %w", path, err)
	}
	return r, nil
}

// PullPath is where Pull writes a session that has no file yet: the
// project's folder under root, named as pi names it.
func PullPath(root string, h session.Header) (string, error) {
	if !jsonl.SafeID(h.ID) {
		return "", fmt.Errorf("session id %q cannot name a file", h.ID)
	}
	return filepath.Join(jsonl.Dir(root, h.Cwd), jsonl.FileName(h.Timestamp, h.ID)), nil
}

// Pull writes session id to the file at path: the whole session when there
// is no file, else the entries the file lacks (when its entries are the
// first of the database's), appended under the file's writer lock. The file
// is what pi writes, byte for byte.
func (s *Store) Pull(id, path string) (SyncResult, error) {
	res := SyncResult{ID: id, Path: path}
	data, err := s.Export(id)
	if err != nil {
		return res, err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		res.Created = true
		res.Added = session.Load(data).Len()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return res, err
		}
		return res, createFile(path, data)
	}
	lock, err := jsonl.LockFile(path)
	if err != nil {
		return res, err
	}
	defer lock.Unlock()
	cur, err := os.ReadFile(path)
	if err != nil {
		return res, err
	}
	if len(cur) > 0 && cur[len(cur)-1] != '\n' {
		return res, fmt.Errorf("%s does not end with a newline (an interrupted write?); run 'arbor fsck --repair %s' first", path, path)
	}
	fl, dl := session.Load(cur), session.Load(data)
	if fl.Report().NoHeader || fl.Header().ID != id {
		return res, fmt.Errorf("%s is not the file of session %s; move it away first", path, id)
	}
	n, err := commonPrefix(id, ids(fl.Entries()), ids(dl.Entries()))
	if err != nil || n == 0 {
		return res, err
	}
	var add []byte
	for _, e := range dl.Entries()[dl.Len()-n:] {
		add = append(append(add, e.Raw()...), '\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return res, err
	}
	if _, err := f.Write(add); err != nil {
		f.Close()
		return res, fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return res, fmt.Errorf("fsync %s: %w", path, err)
	}
	res.Added = n
	return res, f.Close()
}

func ids(es []*session.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// createFile writes a new file, never replacing one, and syncs it and its folder.
func createFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Sessions returns the header of every session in the database, for pull.
func (s *Store) Sessions(ctx context.Context) ([]session.Header, error) {
	rows, err := s.pool.Query(ctx, `SELECT header FROM arbor_sessions ORDER BY id`)
	if err != nil {
		return nil, s.wrap(err)
	}
	var out []session.Header
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&raw}, func() error {
		if h, ok := session.ParseHeader(raw); ok {
			out = append(out, h)
		}
		return nil
	})
	return out, err
}
