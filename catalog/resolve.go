package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/arborlog/arbor/session/jsonl"
)

// Scope says where to look for sessions.
type Scope struct {
	Dir string // --session-dir: only this folder (and its project subfolders)
	Cwd string // the current project; "" with All
	All bool   // every project
}

// Home returns $ARBOR_DIR, or ~/.arbor.
func Home() string {
	if d := os.Getenv("ARBOR_DIR"); d != "" {
		return d
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ".arbor"
	}
	return filepath.Join(h, ".arbor")
}

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

// ErrNotFound is returned when nothing matches what the user typed.
var ErrNotFound = errors.New("catalog: no such session")

// AmbiguousError lists the sessions a name or prefix matched.
type AmbiguousError struct {
	Query      string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q matches %d sessions: %s; use a longer id prefix or a path", e.Query, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

// Files returns every *.jsonl file in scope: the folder itself and its
// immediate subfolders (one per project), sorted by path.
func Files(s Scope) ([]string, error) {
	var roots []string
	switch {
	case s.Dir != "":
		roots = []string{s.Dir}
	case s.All:
		roots = []string{SessionsRoot(), PiSessionsRoot()}
	default:
		roots = []string{jsonl.Dir(SessionsRoot(), s.Cwd), jsonl.Dir(PiSessionsRoot(), s.Cwd)}
	}
	var out []string
	seen := map[string]bool{}
	for _, root := range roots {
		if root == "" {
			continue
		}
		err := walk(root, 2, func(p string) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

func walk(dir string, depth int, f func(string)) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir() && depth > 1 && !strings.HasPrefix(e.Name(), "."):
			if err := walk(p, depth-1, f); err != nil {
				return err
			}
		case !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl"):
			f(p)
		}
	}
	return nil
}

// Resolve turns what the user typed into a session file: a path, a session id,
// a unique id prefix, or a session name, looked up in scope and, when nothing
// matches there and scope is a project, everywhere.
func Resolve(arg string, s Scope) (string, error) {
	if arg == "" {
		return "", fmt.Errorf("%w: empty session argument", ErrNotFound)
	}
	if looksLikePath(arg) {
		return filepath.Abs(arg)
	}
	p, err := resolveIn(arg, s)
	if errors.Is(err, ErrNotFound) && s.Dir == "" && !s.All {
		p, err = resolveIn(arg, Scope{All: true})
	}
	return p, err
}

func looksLikePath(arg string) bool {
	if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl") {
		return true
	}
	_, err := os.Stat(arg)
	return err == nil
}

func resolveIn(arg string, s Scope) (string, error) {
	files, err := Files(s)
	if err != nil {
		return "", err
	}
	var exact, prefix []string
	for _, f := range files {
		id := idFromName(filepath.Base(f))
		switch {
		case id == arg:
			exact = append(exact, f)
		case strings.HasPrefix(id, arg):
			prefix = append(prefix, f)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) > 1:
		return "", &AmbiguousError{arg, exact}
	case len(prefix) == 1:
		return prefix[0], nil
	case len(prefix) > 1:
		return "", &AmbiguousError{arg, prefix}
	}
	var named []string
	for _, f := range files {
		if l, err := jsonl.Read(f); err == nil && !l.Report().NoHeader && l.Name() == arg {
			named = append(named, f)
		}
	}
	switch len(named) {
	case 0:
		return "", fmt.Errorf("%w: %q is not a path, session id, id prefix or name in %s", ErrNotFound, arg, describe(s))
	case 1:
		return named[0], nil
	}
	return "", &AmbiguousError{arg, named}
}

func idFromName(name string) string {
	name = strings.TrimSuffix(name, ".jsonl")
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func describe(s Scope) string {
	switch {
	case s.Dir != "":
		return s.Dir
	case s.All:
		return "any project"
	}
	return "this project"
}
