package importers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	Existing int         `json:"existing"` // entries already in the file from an earlier import of this source
	Pending  int         `json:"pending"`  // entries held back: the source is still writing them
	Conflict *Conflict   `json:"conflict,omitempty"`
	Stats    Stats       `json:"stats"`
	Damage   []LineError `json:"damage,omitempty"`
}

// Conflict is another source file that claims the session id this one claims
// and was imported first: this file is imported as a session of its own, never
// into that one.
type Conflict struct {
	ID     string `json:"id"`     // the session id both files claim
	Source string `json:"source"` // the other source file ("" when its import does not say)
	Path   string `json:"path"`   // the other file's import
}

// Find returns the file an earlier import of s's source wrote in dir, or "".
func Find(s *Session, dir string) string {
	t, _ := target(s, dir)
	return t.path
}

// destination is where an import of a session goes: an existing file (path),
// or a new one under the header id id.
type destination struct {
	path     string
	id       string
	conflict *Conflict
}

// target chooses the file s goes into. A session belongs to the source file
// it was imported from (its header's importedFrom path), never to the id the
// file claims: two files claiming one id (a copy, a forged or reused id) must
// not merge, since entry ids derive from the source's uuids and the second
// file's entries would count as already there. The first file to bring an id
// is imported under the session id derived from that id, as before this rule,
// so earlier imports continue; any other file gets a session id derived from
// the id and its own path, which its re-imports find first.
func target(s *Session, dir string) (destination, error) {
	own := stableUUID(s.Header.From.Format + "\x00" + s.Header.From.ID + "\x00" + s.Header.From.Path)
	var conflict *Conflict
	for _, id := range []string{own, s.Header.ID} {
		m, _ := filepath.Glob(filepath.Join(dir, "*_"+id+".jsonl"))
		sort.Strings(m)
		for _, p := range m {
			from, err := importedFrom(p)
			if err != nil {
				return destination{}, err
			}
			if sameSource(from, s.Header.From) {
				return destination{path: p, id: id}, nil
			}
			if conflict == nil {
				conflict = &Conflict{ID: s.Header.From.ID, Source: from.Path, Path: p}
			}
		}
	}
	if conflict != nil {
		return destination{id: own, conflict: conflict}, nil
	}
	return destination{id: s.Header.ID}, nil
}

// importedFrom reads the import record in the header of the session file at p.
func importedFrom(p string) (Source, error) {
	head, err := jsonl.FirstLine(p)
	if err != nil {
		return Source{}, err
	}
	var h struct {
		From *Source `json:"importedFrom"`
	}
	if json.Unmarshal(head, &h) != nil || h.From == nil {
		return Source{}, nil // not an import: it belongs to no source
	}
	return *h.From, nil
}

// sameSource reports whether an import record names the file src names: the
// same format and path, or two paths of one file (a symlinked folder).
func sameSource(a, src Source) bool {
	if a.Format != src.Format || a.Path == "" {
		return false
	}
	if a.Path == src.Path || a.Path == asRecorded(src.Path) {
		return true
	}
	ai, err1 := os.Stat(a.Path)
	bi, err2 := os.Stat(src.Path)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// asRecorded is path as a header records it: JSON holds only UTF-8, so the
// bytes of a path that is not become U+FFFD there.
func asRecorded(path string) string {
	var p string
	_ = json.Unmarshal(marshalJSON(path), &p)
	return p
}

// Write writes s into dir as a pi session file: a new one the first time its
// source file is imported (complete or not at all); later, only the entries
// the file does not have yet are appended, under the file's writer lock (an
// agent continuing it has it: the import then fails and changes nothing), so
// importing again changes nothing and a source that grew is brought up to
// date. Another source file claiming the same session id never adds to that
// file: it gets its own, and w.Conflict names the other.
func Write(s *Session, dir string) (Written, error) {
	w := Written{Source: s.Header.From.Path, Format: Format(s.Header.From.Format), Stats: s.Stats, Damage: s.Damage}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return w, err
	}
	w.Pending = s.Torn
	dst, err := target(s, dir)
	if err != nil {
		return w, err
	}
	w.Conflict = dst.conflict
	if dst.path == "" {
		w.Path = filepath.Join(dir, jsonl.FileName(s.Header.Timestamp, dst.id))
		w.Created, w.Added = true, len(s.Lines)
		out := *s
		out.Header.ID = dst.id
		return w, create(w.Path, out.Bytes())
	}
	path := dst.path
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
	if h := l.Header(); h.ID != dst.id {
		return w, fmt.Errorf("%s has session id %s, not %s; move it away to import %s again", path, h.ID, dst.id, s.Header.From.Path)
	}
	have := map[string]*session.Entry{}
	for _, e := range l.Entries() {
		have[e.ID] = e
	}
	var add bytes.Buffer
	// An entry imported before may have grown since: a response the source
	// was still writing, a compaction whose summary came later. What the file
	// holds stays; the grown entry goes in whole beside it (see continuation),
	// and what the source hangs under the entry goes under the latest one.
	last := map[string]string{}
	for _, line := range s.Lines {
		e, ok := session.ParseLine(line)
		if !ok {
			return w, fmt.Errorf("importers: made an unreadable line for %s", path)
		}
		if to, ok := last[e.ParentID]; ok {
			line = reparent(line, e.ParentID, to)
			e, _ = session.ParseLine(line)
		}
		if have[e.ID] == nil {
			add.Write(line)
			add.WriteByte('\n')
			w.Added++
			continue
		}
		w.Existing++
		tip, more, err := continuation(e, have)
		if err != nil {
			return w, fmt.Errorf("%s: %w", path, err)
		}
		if more != nil {
			add.Write(more)
			add.WriteByte('\n')
			w.Added++
			ce, _ := session.ParseLine(more)
			have[ce.ID] = ce
			tip = ce.ID
		}
		if tip != e.ID {
			last[e.ID] = tip
		}
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

// continuation finds the latest import of the source's entry e in have: the
// entry itself, or the last of the entries that replaced it as it grew. When
// e holds more than that (more content blocks of a response, a compaction's
// summary), it returns a replacement line: e whole, beside the last import,
// which stays as an abandoned branch. A part of a response as a child of the
// other would leave the tool calls of the first part without results where a
// provider needs them. An entry that changed otherwise keeps what was imported.
func continuation(e *session.Entry, have map[string]*session.Entry) (tip string, more []byte, err error) {
	var src, held map[string]any
	if err := json.Unmarshal(e.Raw(), &src); err != nil {
		return "", nil, err
	}
	n := 0
	for ; ; n++ {
		id := e.ID
		if n > 0 {
			id = continuationID(e.ID, n)
		}
		x := have[id]
		if x == nil {
			break
		}
		var m map[string]any
		if err := json.Unmarshal(x.Raw(), &m); err != nil {
			return "", nil, fmt.Errorf("entry %s: %w", id, err)
		}
		if n > 0 && continues(m) != e.ID {
			break // an entry that has the id by chance
		}
		held, tip = m, id
	}
	if !grown(src, held) {
		return tip, nil, nil
	}
	src["id"] = continuationID(e.ID, n)
	origin, _ := src["origin"].(map[string]any)
	if origin == nil {
		origin = map[string]any{}
	}
	origin["continues"] = e.ID
	src["origin"] = origin
	return tip, marshalJSON(src), nil
}

// continues is the entry a replacement replaces ("" for none).
func continues(m map[string]any) string {
	o, _ := m["origin"].(map[string]any)
	id, _ := o["continues"].(string)
	return id
}

// continuationID is the id of the n-th replacement of entry id: derived, so
// a later import finds the ones an earlier one wrote.
func continuationID(id string, n int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "continue\x00%s\x00%d", id, n))
	return hex.EncodeToString(h[:4])
}

// grown reports whether the source's entry src goes on where the imported
// one held stops: a response with more content blocks after the same ones, a
// compaction with another summary.
func grown(src, held map[string]any) bool {
	switch src["type"] {
	case "message":
		msg, _ := src["message"].(map[string]any)
		old, _ := held["message"].(map[string]any)
		if msg == nil || old == nil || msg["role"] != "assistant" {
			return false
		}
		blocks, _ := msg["content"].([]any)
		had, _ := old["content"].([]any)
		return len(blocks) > len(had) && sameJSON(blocks[:len(had)], had)
	case "compaction":
		return src["summary"] != held["summary"]
	}
	return false
}

func sameJSON(a, b any) bool { return bytes.Equal(marshalJSON(a), marshalJSON(b)) }

// reparent rewrites the parent of an entry line this package made: its
// parentId comes before any field of the source's.
func reparent(line []byte, from, to string) []byte {
	old := []byte(`"parentId":` + string(marshalJSON(from)))
	return bytes.Replace(line, old, []byte(`"parentId":`+string(marshalJSON(to))), 1)
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
