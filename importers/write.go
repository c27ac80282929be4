package importers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// Written is what writing one imported session did.
type Written struct {
	Source   string      `json:"source"`
	Format   Format      `json:"format"`
	Path     string      `json:"path"`
	Created  bool        `json:"created"`
	Added    int         `json:"added"`    // entries written now
	Existing int         `json:"existing"` // entries already in the file from an earlier import
	Pending  int         `json:"pending"`  // entries held back: the source is still writing them
	Stats    Stats       `json:"stats"`
	Damage   []LineError `json:"damage,omitempty"`
}

// Find returns the file an earlier import of s wrote in dir, or "".
func Find(s *Session, dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "*_"+s.Header.ID+".jsonl"))
	if len(m) == 0 {
		return ""
	}
	sort.Strings(m)
	return m[0]
}

// Write writes s into dir as a pi session file. The first import creates the
// file (complete or not at all); a later one appends only the entries the file
// does not have yet, under the file's writer lock (an agent continuing it has
// it: the import then fails and changes nothing), so importing again changes
// nothing and a source that grew is brought up to date.
func Write(s *Session, dir string) (Written, error) {
	w := Written{Source: s.Header.From.Path, Format: Format(s.Header.From.Format), Stats: s.Stats, Damage: s.Damage}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return w, err
	}
	settled := s.Lines[:0:0]
	for _, l := range s.Lines {
		if e, ok := session.ParseLine(l); ok && s.open[e.ID] {
			w.Pending++
			continue
		}
		settled = append(settled, l)
	}
	path := Find(s, dir)
	if path == "" {
		w.Path = filepath.Join(dir, jsonl.FileName(s.Header.Timestamp, s.Header.ID))
		w.Created, w.Added = true, len(settled)
		out := *s
		out.Lines = settled
		return w, create(w.Path, out.Bytes())
	}
	w.Path = path
	lock, err := jsonl.LockFile(path)
	if err != nil {
		return w, err
	}
	defer lock.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return w, err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return w, fmt.Errorf("%s ends in a partial line; run 'arbor fsck %s' before importing into it again", path, path)
	}
	l := session.Load(data)
	if h := l.Header(); h.ID != s.Header.ID {
		return w, fmt.Errorf("%s has session id %s, not %s; move it away to import %s again", path, h.ID, s.Header.ID, s.Header.From.Path)
	}
	have := map[string]bool{}
	for _, e := range l.Entries() {
		have[e.ID] = true
	}
	var add bytes.Buffer
	for _, l := range settled {
		e, ok := session.ParseLine(l)
		if !ok {
			return w, fmt.Errorf("importers: made an unreadable line for %s", path)
		}
		if have[e.ID] {
			w.Existing++
			continue
		}
		add.Write(l)
		add.WriteByte('\n')
		w.Added++
	}
	if add.Len() == 0 {
		return w, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return w, err
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		f.Close()
		return w, fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return w, err
	}
	return w, f.Close()
}

// create writes a new file whole: a temporary file linked into place, so a
// crash leaves no half session and an existing file is never replaced.
func create(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".import-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; it was not changed", path)
		}
		return err
	}
	return nil
}

// Sources lists the foreign session files at path: the file itself, or every
// *.jsonl under the folder in a format this package reads (pi sessions and
// other files are left out). A Claude Code session file brings its subagent
// transcripts along. Parents come before their subagents.
func Sources(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file or folder", path)
	}
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	addFile := func(p string) {
		if !seen[p] && foreign(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	walk := func(root string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrPermission) {
					return nil
				}
				return err
			}
			if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".jsonl") {
				addFile(p)
			}
			return nil
		})
	}
	if !fi.IsDir() {
		addFile(path)
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrNotForeign)
		}
		sub := filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
		if st, err := os.Stat(sub); err == nil && st.IsDir() {
			if err := walk(sub); err != nil {
				return nil, err
			}
		}
	} else if err := walk(path); err != nil {
		return nil, err
	}
	// Subagent transcripts last, so their parents are imported first.
	sort.SliceStable(out, func(i, j int) bool { return !isSubagent(out[i]) && isSubagent(out[j]) })
	return out, nil
}

func isSubagent(p string) bool { return strings.HasPrefix(filepath.Base(p), "agent-") }

// foreign reports whether the file at p is in a format this package reads,
// from its first 64 KB.
func foreign(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := f.Read(head)
	_, err = Detect(p, head[:n])
	return err == nil
}
