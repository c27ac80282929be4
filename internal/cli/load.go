package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

// scope is where ids and names are looked up for these flags.
func (g *Global) scope() catalog.Scope {
	cwd, _ := os.Getwd()
	return catalog.Scope{Dir: g.SessionDir, Cwd: cwd, All: g.All, Moved: true}
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
	if l, ok, err := readForeign(path); ok {
		return l, path, err
	}
	boundHeap(fileSize(path))
	l, err := jsonl.ReadSession(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, fmt.Errorf("%s: no such session file; check the path, or run 'arbor ls' to see sessions", path)
	}
	if errors.Is(err, jsonl.ErrNotSession) {
		return nil, path, fmt.Errorf("%w ('arbor fsck' shows what it holds)", err)
	}
	if err != nil {
		return nil, path, fmt.Errorf("read %s: %w", path, err)
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
	if err := refuseForeign(path); err != nil {
		return nil, err
	}
	boundHeap(fileSize(path))
	s, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	return fromFile(s), nil
}

// entryOrErr returns the entry with id, or with a unique id prefix of at least
// 4 characters, or an error that names the session (and the candidates).
func entryOrErr(l *session.Log, path, id string) (*session.Entry, error) {
	if e := l.Entry(id); e != nil {
		return e, nil
	}
	var found []*session.Entry
	if len(id) >= 4 {
		for _, e := range l.Entries() {
			if strings.HasPrefix(e.ID, id) {
				found = append(found, e)
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no entry %q in %s; 'arbor tree %s' lists the ids", id, path, path)
	case 1:
		return found[0], nil
	}
	ids := make([]string, 0, min(len(found), 5))
	for _, e := range found[:min(len(found), 5)] {
		ids = append(ids, e.ID)
	}
	return nil, fmt.Errorf("%q names %d entries in %s (%s); give more of the id", id, len(found), path, strings.Join(ids, ", "))
}
