package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// Files keeps sessions as JSONL files (the default store).
type Files struct {
	cat *catalog.Catalog
}

var _ Store = (*Files)(nil)

// OpenFiles returns the file store whose index and trash live in home ("" for
// $ARBOR_DIR).
func OpenFiles(home string) *Files { return &Files{cat: catalog.Open(home)} }

// Catalog returns the store's catalog, for what only files have (trash, archive).
func (f *Files) Catalog() *catalog.Catalog { return f.cat }

// FileSession is a session file open for writing.
type FileSession struct{ *jsonl.Session }

// Log returns the session.
func (s FileSession) Log() *session.Log { return s.Session.Log }

// Ref returns the session's file.
func (s FileSession) Ref() string { return s.Path() }

func fileOptions(o Options) []jsonl.Option {
	opts := []jsonl.Option{jsonl.WithDurability(o.Durability), jsonl.WithLog(o.Log...)}
	if o.Immediate {
		opts = append(opts, jsonl.Immediate())
	}
	return opts
}

// Create starts a new session file for cwd in the folder where (the
// project's folder under $ARBOR_DIR/sessions when where is "").
func (f *Files) Create(cwd, where string, o Options) (Session, error) {
	if where == "" {
		where = jsonl.Dir(catalog.SessionsRoot(), cwd)
	}
	if err := os.MkdirAll(where, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", where, err)
	}
	s, err := jsonl.Create(cwd, where, fileOptions(o)...)
	if err != nil {
		return nil, err
	}
	return FileSession{s}, nil
}

// Open opens the session file at ref for writing.
func (f *Files) Open(ref string, o Options) (Session, error) {
	if _, err := os.Stat(ref); errors.Is(err, fs.ErrNotExist) {
		return nil, noSuchFile(ref)
	}
	s, err := jsonl.Open(ref, fileOptions(o)...)
	if err != nil {
		return nil, err
	}
	return FileSession{s}, nil
}

// noSuchFile says ref does not exist; it matches fs.ErrNotExist.
type noSuchFile string

func (e noSuchFile) Error() string {
	return string(e) + ": no such session file; check the path, or run 'arbor ls' to see sessions"
}

func (noSuchFile) Unwrap() error { return fs.ErrNotExist }

// Read loads the session file at ref.
func (f *Files) Read(ref string) (*session.Log, error) {
	l, err := jsonl.ReadSession(ref)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noSuchFile(ref)
	}
	if errors.Is(err, jsonl.ErrNotSession) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	return l, nil
}

// Resolve turns a path, id, id prefix or name into a session file.
func (f *Files) Resolve(arg string, s catalog.Scope) (string, error) { return f.cat.Resolve(arg, s) }

// List lists the session files in scope.
func (f *Files) List(s catalog.Scope, o catalog.ListOptions) ([]catalog.Info, error) {
	return f.cat.List(s, o)
}

// Latest returns the session file in scope modified last.
func (f *Files) Latest(s catalog.Scope) (catalog.Info, error) { return f.cat.Latest(s) }

// Search searches the session files in scope.
func (f *Files) Search(s catalog.Scope, q catalog.Query, o catalog.SearchOptions) ([]catalog.Hit, error) {
	return f.cat.Search(s, q, o)
}

// Archive records the session file at ref as archived.
func (f *Files) Archive(ref string) error { return f.cat.Archive(ref) }

// Unarchive forgets that the session file at ref was archived.
func (f *Files) Unarchive(ref string) (bool, error) { return f.cat.Unarchive(ref) }

// Close closes the catalog's index.
func (f *Files) Close() error { return f.cat.Close() }

// FilesOf returns the file store over an open catalog.
func FilesOf(cat *catalog.Catalog) *Files { return &Files{cat: cat} }
