package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

// The store every command reads and writes: session files (the default), or
// a PostgreSQL database named by --store or $ARBOR_STORE. A URL that is bad,
// or a database that does not answer, is an error: arbor never falls back to
// files.

// storeURL is what --store or $ARBOR_STORE names ("" for files).
func (g *Global) storeURL() (string, error) {
	u := g.Store
	if u == "" {
		u = os.Getenv("ARBOR_STORE")
	}
	if u == "" || u == "files" {
		return "", nil
	}
	if !pgstore.IsURL(u) {
		return "", usagef("--store %q: give files or a postgres://… URL", pgstore.Redact(u))
	}
	return u, nil
}

// database opens the PostgreSQL store, or returns nil when sessions are files.
func (g *Global) database() (*pgstore.Store, error) {
	if g.db != nil {
		return g.db, nil
	}
	u, err := g.storeURL()
	if err != nil || u == "" {
		return nil, err
	}
	if g.db, err = pgstore.Open(u); err != nil {
		return nil, dbError(err)
	}
	return g.db, nil
}

// sessions returns the store that lists, searches and resolves sessions.
// Close it when done.
func (g *Global) sessions(ios *IO) (store.Store, error) {
	db, err := g.database()
	if err != nil {
		return nil, err
	}
	if db != nil {
		return db, nil
	}
	return store.FilesOf(g.catalog(ios)), nil
}

// writable is a session open for writing, in either store.
type writable struct {
	*session.Log
	ref     string
	repairs func() []string
	close   func() error
	flush   func() error
	store   store.Session // the session, when it came from a store
}

// Path names the session: its file, or its id in the database.
func (w *writable) Path() string { return w.ref }

// Repairs says what the first append repaired in a damaged file.
func (w *writable) Repairs() []string {
	if w.repairs == nil {
		return nil
	}
	return w.repairs()
}

// Close releases the writer lock.
func (w *writable) Close() error { return w.close() }

// Flush writes a new session now.
func (w *writable) Flush() error { return w.flush() }

func fromFile(s *jsonl.Session) *writable {
	return &writable{Log: s.Log, ref: s.Path(), repairs: s.Repairs, close: s.Close, flush: s.Flush}
}

func fromStore(s store.Session) *writable {
	return &writable{Log: s.Log(), ref: s.Ref(), close: s.Close, flush: s.Flush, store: s}
}

// readDB reads a session from the database.
func (g *Global) readDB(db *pgstore.Store, arg string) (*session.Log, string, error) {
	id, err := db.Resolve(arg, g.scope())
	if err != nil {
		return nil, "", err
	}
	l, err := db.Read(id)
	return l, id, err
}

// openDB opens a session in the database for writing. With create, an id
// the database does not hold starts a new session with that id.
func (g *Global) openDB(db *pgstore.Store, arg string, o store.Options, create bool) (*writable, error) {
	id, err := db.Resolve(arg, g.scope())
	if errors.Is(err, catalog.ErrNotFound) && create && jsonl.SafeID(arg) {
		cwd, _ := os.Getwd()
		o.Log = append(o.Log, session.WithID(arg))
		s, err := db.Create(cwd, "", o)
		if err != nil {
			return nil, err
		}
		return fromStore(s), nil
	}
	if err != nil {
		return nil, err
	}
	s, err := db.Open(id, o)
	if err != nil {
		return nil, err
	}
	return fromStore(s), nil
}

// forkSession starts the session holding the branch of l (read from ref)
// that ends at leaf, open for writing, in the chosen store.
func (g *Global) forkSession(ref string, l *session.Log, leaf string) (store.Session, error) {
	db, err := g.database()
	if err != nil {
		return nil, err
	}
	if db != nil {
		w, err := g.forkDB(db, l, ref, leaf)
		if err != nil {
			return nil, err
		}
		return w.store, nil
	}
	s, err := jsonl.BranchFrom(ref, l, leaf)
	if err != nil {
		return nil, err
	}
	return store.FileSession{Session: s}, nil
}

// forkDB writes the branch of l ending at leaf as a new session in the database.
func (g *Global) forkDB(db *pgstore.Store, l *session.Log, ref, leaf string) (*writable, error) {
	nl, err := l.Branched(leaf, session.WithParent(ref))
	if err != nil {
		return nil, fmt.Errorf("fork %s at %s: %w", ref, leaf, err)
	}
	s, err := db.Adopt(nl, store.Options{})
	if err != nil {
		return nil, err
	}
	return fromStore(s), nil
}

// filesOnly are the commands that work on session files only (the trash,
// the index, repairs).
var filesOnly = []string{"rm", "restore", "index", "fsck"}

// refuseDatabase makes the files-only commands fail when a database store is
// chosen, rather than act on files the user did not mean.
func refuseDatabase(root *cobra.Command, g *Global) {
	for _, c := range root.Commands() {
		if !slices.Contains(filesOnly, c.Name()) || c.RunE == nil {
			continue
		}
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			u, err := g.storeURL()
			if err != nil {
				return err
			}
			if u != "" {
				return usagef("arbor %s works on session files; it does not apply to the database store %s (give --store files)", cmd.Name(), pgstore.Redact(u))
			}
			return run(cmd, args)
		}
	}
}
