package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/store"
)

// Store is a PostgreSQL database of sessions.
type Store struct {
	pool    *pgxpool.Pool
	name    string // the URL without its password
	timeout time.Duration
	found   int // the schema version the database had when Open connected
}

var _ store.Store = (*Store)(nil)

// IsURL reports whether s names a PostgreSQL database (postgres:// or postgresql://).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Timeout bounds every operation on the database (connecting, an append, a listing).
var Timeout = 30 * time.Second

// Open connects to the database at rawURL, checks that it answers and brings
// its schema up to date. A bad URL or a server that does not answer is an
// error; nothing falls back to files.
func Open(rawURL string) (*Store, error) {
	name := Redact(rawURL)
	if atInPath(rawURL) {
		return nil, fmt.Errorf("store %s: %w", name, ErrUnescaped)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store %s: not a usable PostgreSQL URL (%s)", name, redactText(parseReason(err)))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "arbor"
	}
	cfg.MaxConnIdleTime = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %s", name, redactText(oneLine(err)))
	}
	s := &Store{pool: pool, name: name, timeout: Timeout}
	if err := s.withConn(ctx, func(c *pgx.Conn) error { s.found, _, err = migrate(ctx, c); return err }); err != nil {
		pool.Close()
		if ce := connectError(name, cfg.ConnConfig, err); ce != nil {
			return nil, ce
		}
		return nil, fmt.Errorf("store %s: %s", name, redactText(oneLine(err)))
	}
	return s, nil
}

// parseReason is pgx's reason for refusing a URL, without the URL itself.
func parseReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Name returns the database's URL without its password.
func (s *Store) Name() string { return s.name }

// Migrate brings the schema up to date and returns the versions before and
// after. Open already did: "before" is what the database had when Open
// connected, so a new database reports 0.
func (s *Store) Migrate() (from, to int, err error) {
	ctx, cancel := s.ctx()
	defer cancel()
	err = s.withConn(ctx, func(c *pgx.Conn) error { from, to, err = migrate(ctx, c); return err })
	return min(from, s.found), to, err
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

func (s *Store) withConn(ctx context.Context, f func(*pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return f(c.Conn())
}

// Close closes the pool. Sessions open for writing hold their own connection:
// close them first.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Read loads the session with this id, without the lock.
func (s *Store) Read(id string) (*session.Log, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer c.Release()
	data, _, err := loadSession(ctx, c.Conn(), id)
	if err != nil {
		return nil, err
	}
	return session.Load(data), nil
}

func (s *Store) wrap(err error) error { return fmt.Errorf("store %s: %w", s.name, err) }

// ErrNoSession is returned for an id that the database does not hold.
var ErrNoSession = errors.New("pgstore: no such session")

// loadSession reads a session as the bytes of its file, and its last position.
func loadSession(ctx context.Context, c *pgx.Conn, id string) ([]byte, int, error) {
	var header []byte
	var n int
	err := c.QueryRow(ctx, `SELECT header, entries FROM arbor_sessions WHERE id = $1`, id).Scan(&header, &n)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, fmt.Errorf("%w %q in the database; 'arbor ls' lists them", ErrNoSession, id)
	}
	if err != nil {
		return nil, 0, err
	}
	data := append(header, '\n')
	rows, err := c.Query(ctx, `SELECT raw FROM arbor_entries WHERE session_id = $1 ORDER BY position`, id)
	if err != nil {
		return nil, 0, err
	}
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&raw}, func() error {
		data = append(append(data, raw...), '\n')
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return data, n, nil
}

// Archive marks session id archived: listings and searches leave it out
// unless asked for archived sessions.
func (s *Store) Archive(id string) error {
	_, err := s.setArchived(id, true)
	return err
}

// Unarchive shows session id in listings again; false when it was not archived.
func (s *Store) Unarchive(id string) (bool, error) { return s.setArchived(id, false) }

func (s *Store) setArchived(id string, v bool) (bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var was bool
	err := s.pool.QueryRow(ctx, `UPDATE arbor_sessions n SET archived = $2 FROM arbor_sessions o
		WHERE n.id = $1 AND o.id = n.id RETURNING o.archived`, id, v).Scan(&was)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("%w %q in the database; 'arbor ls' lists them", ErrNoSession, id)
	}
	if err != nil {
		return false, s.wrap(err)
	}
	return was != v, nil
}

// Export returns the session as the bytes of its JSONL file (what pi reads).
func (s *Store) Export(id string) ([]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var data []byte
	err := s.withConn(ctx, func(c *pgx.Conn) error {
		var err error
		data, _, err = loadSession(ctx, c, id)
		return err
	})
	return data, err
}
