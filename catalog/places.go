package catalog

import (
	"errors"
	"fmt"
	"github.com/arborlog/arbor/session/jsonl"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNoFolder is returned when the folder a scope names does not exist.
var ErrNoFolder = errors.New("catalog: no such folder")

// Scope says where to look for sessions.
type Scope struct {
	Dir string // --session-dir: only this folder and its immediate subfolders, any project
	Cwd string // the current project: sessions whose header cwd is this folder
	All bool   // every project under $ARBOR_DIR/sessions and pi's sessions folder
	// Moved adds to the Cwd scope the sessions of Cwd's project (the same
	// git root commit or remote, SPEC §2) made in a folder that no longer
	// exists: the project's folder moved. Each is listed with MovedFrom.
	Moved bool
}

func (s Scope) String() string {
	switch {
	case s.Dir != "":
		return s.Dir
	case s.All:
		return "any project"
	}
	return "this project (" + s.Cwd + ")"
}

// Home returns $ARBOR_DIR, or ~/.arbor (jsonl.Home).
func Home() string { return jsonl.Home() }

// SessionsRoot returns $ARBOR_DIR/sessions.
func SessionsRoot() string { return filepath.Join(Home(), "sessions") }

// PiSessionsRoot returns pi's sessions folder ($PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions).
func PiSessionsRoot() string {
	if d := os.Getenv("PI_CODING_AGENT_DIR"); d != "" {
		return filepath.Join(d, "sessions")
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(h, ".pi", "agent", "sessions")
}

// roots returns the folders a scope reads. The project scope reads every
// project folder and filters by the header's cwd, because the folder names
// collide (/a/b-c and /a-b/c share one).
func (s Scope) roots() []string {
	if s.Dir != "" {
		return []string{s.Dir}
	}
	rs := []string{SessionsRoot()}
	if pi := PiSessionsRoot(); pi != "" {
		rs = append(rs, pi)
	}
	return append(rs, ForeignRoots()...)
}

// file is a *.jsonl file found in scope.
type file struct {
	path  string // as shown: the root as given joined with the name
	abs   string // absolute and clean: the index's key
	size  int64
	mtime time.Time
	ino   uint64
}

// absRoots returns the scope's folders as absolute paths: the index's keys.
func (s Scope) absRoots() ([]string, error) {
	var out []string
	for _, root := range s.roots() {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	return out, nil
}

// walk returns every *.jsonl file of the scope's roots and their immediate
// subfolders, sorted by path, and the absolute roots it read.
func (s Scope) walk() ([]file, []string, error) {
	absRoots, err := s.absRoots()
	if err != nil {
		return nil, nil, err
	}
	if s.Dir != "" {
		// A folder the user named must exist: an empty list would hide a typo.
		if info, err := os.Stat(s.Dir); err != nil || !info.IsDir() {
			return nil, nil, fmt.Errorf("%w: %s is not a folder (--session-dir)", ErrNoFolder, s.Dir)
		}
	}
	var out []file
	seen := map[string]bool{}
	for i, root := range s.roots() {
		depth := 2
		if s.Dir == "" && isForeignRoot(root) {
			depth = foreignDepth
		}
		err = walkDir(root, absRoots[i], depth, func(f file) {
			if !seen[f.abs] {
				seen[f.abs] = true
				out = append(out, f)
			}
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, absRoots, nil
}

func walkDir(dir, abs string, depth int, f func(file)) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) && depth < 2 {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		p, a := filepath.Join(dir, name), filepath.Join(abs, name)
		isDir := e.IsDir()
		if !isDir && !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		var info fs.FileInfo
		if e.Type()&fs.ModeSymlink != 0 {
			if info, err = os.Stat(p); err != nil {
				continue
			}
			isDir = info.IsDir()
		}
		if isDir {
			if depth > 1 && !strings.HasPrefix(name, ".") {
				if err := walkDir(p, a, depth-1, f); err != nil {
					return err
				}
			}
			continue
		}
		if info == nil {
			if info, err = e.Info(); err != nil {
				continue // removed while we looked
			}
		}
		if !info.Mode().IsRegular() {
			continue
		}
		f(file{path: p, abs: a, size: info.Size(), mtime: info.ModTime(), ino: inode(info)})
	}
	return nil
}

// Files returns every *.jsonl file in scope (the folders and their immediate
// subfolders), sorted by path. It does not look inside them.
func Files(s Scope) ([]string, error) {
	fs, _, err := s.walk()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out, nil
}
