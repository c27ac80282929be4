package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

// scope is where ids and names are looked up for these flags.
func (g *Global) scope() catalog.Scope {
	cwd, _ := os.Getwd()
	return catalog.Scope{Dir: g.SessionDir, Cwd: cwd, All: g.All}
}

// resolve turns a <session> argument into a file path.
func (g *Global) resolve(arg string) (string, error) {
	if db, err := g.database(); err != nil || db != nil {
		if err != nil {
			return "", err
		}
		return db.Resolve(arg, g.scope())
	}
	return catalog.Resolve(arg, g.scope())
}

// read loads a session for reading: no lock, never a write.
func (g *Global) read(arg string) (*session.Log, string, error) {
	if db, err := g.database(); err != nil || db != nil {
		if err != nil {
			return nil, "", err
		}
		return g.readDB(db, arg)
	}
	path, err := g.resolve(arg)
	if err != nil {
		return nil, "", err
	}
	l, err := jsonl.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, fmt.Errorf("%s: no such session file; check the path, or run 'arbor ls' to see sessions", path)
	}
	if err != nil {
		return nil, path, fmt.Errorf("read %s: %w", path, err)
	}
	if l.Report().NoHeader && l.Len() == 0 {
		return nil, path, fmt.Errorf("%s is not a session file: no line of it parses as a session entry ('arbor fsck' shows the damage)", path)
	}
	return l, path, nil
}

// open opens a session for writing (takes the writer lock).
func (g *Global) open(arg string) (*writable, error) {
	if db, err := g.database(); err != nil || db != nil {
		if err != nil {
			return nil, err
		}
		return g.openDB(db, arg, store.Options{}, false)
	}
	path, err := g.resolve(arg)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such session file; check the path, or run 'arbor ls' to see sessions", path)
	}
	s, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	return fromFile(s), nil
}

// entryOrErr returns the entry with id, or an error that names the session.
func entryOrErr(l *session.Log, path, id string) (*session.Entry, error) {
	e := l.Entry(id)
	if e == nil {
		return nil, fmt.Errorf("no entry %q in %s; 'arbor tree %s' lists the ids", id, path, path)
	}
	return e, nil
}
