package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned when nothing matches what the user typed.
var ErrNotFound = errors.New("catalog: no such session")

// AmbiguousError lists the sessions a name or prefix matched.
type AmbiguousError struct {
	Query      string
	Candidates []Info
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions:", e.Query, len(e.Candidates))
	const shown = 8
	for i, c := range e.Candidates {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(e.Candidates)-shown)
			break
		}
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s", c.ID)
		if c.Name != "" {
			fmt.Fprintf(&b, " %q", c.Name)
		}
		fmt.Fprintf(&b, " (%s)", c.Path)
	}
	b.WriteString("; give a longer id prefix or a path")
	return b.String()
}

// Resolve turns what the user typed into a session file with the catalog of
// Home(); see (*Catalog).Resolve.
func Resolve(arg string, s Scope) (string, error) {
	c := Open("")
	defer c.Close()
	return c.Resolve(arg, s)
}

// Resolve turns what the user typed into a session file: a path, a session id,
// a unique id prefix, or a session name (SPEC §10). Ids and names are looked up
// in scope and, when nothing matches there and scope is the current project,
// in every project. Archived and empty sessions are found too.
func (c *Catalog) Resolve(arg string, s Scope) (string, error) {
	if arg == "" {
		return "", fmt.Errorf("%w: empty session argument", ErrNotFound)
	}
	if looksLikePath(arg) {
		return filepath.Abs(arg)
	}
	p, err := c.resolveIn(arg, s)
	if errors.Is(err, ErrNotFound) && s.Dir == "" && !s.All {
		p, err = c.resolveIn(arg, Scope{All: true})
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

func (c *Catalog) resolveIn(arg string, s Scope) (string, error) {
	es, err := c.scan(s, false)
	if err != nil {
		return "", err
	}
	m, err := match(arg, es)
	if err != nil {
		return "", fmt.Errorf("%w in %s", err, s)
	}
	return m.Path, nil
}

// match finds arg among es: an exact id first, then a unique id prefix, then a name.
func match(arg string, es []entry) (entry, error) {
	var exact, prefix, named []entry
	for _, e := range es {
		switch {
		case e.ID == arg:
			exact = append(exact, e)
		case strings.HasPrefix(e.ID, arg):
			prefix = append(prefix, e)
		}
		if e.Name == arg {
			named = append(named, e)
		}
	}
	for _, set := range [][]entry{exact, prefix, named} {
		switch len(set) {
		case 0:
			continue
		case 1:
			return set[0], nil
		}
		return entry{}, &AmbiguousError{Query: arg, Candidates: infos(set)}
	}
	return entry{}, fmt.Errorf("%w: %q is not a path, session id, id prefix or name", ErrNotFound, arg)
}
