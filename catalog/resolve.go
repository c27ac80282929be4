package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned when nothing matches what the user typed.
var ErrNotFound = errors.New("catalog: no such session")

// AmbiguousError lists the sessions a name or prefix matched.
type AmbiguousError struct {
	Query      string
	File       string // a file the query also names as a path, if any
	Candidates []Info
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "%q is the file %s and the name or id of %d session(s):", e.Query, e.File, len(e.Candidates))
	} else {
		fmt.Fprintf(&b, "%q matches %d sessions:", e.Query, len(e.Candidates))
	}
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
	if e.File != "" {
		b.WriteString("; for the file give ./ before it or its absolute path, for a session the path shown")
	} else {
		b.WriteString("; give a longer id prefix or a path")
	}
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
		abs, err := filepath.Abs(arg)
		if err != nil {
			return "", err
		}
		explicit := strings.HasSuffix(arg, ".jsonl") || filepath.IsAbs(arg) || strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, `.\`)
		if !explicit {
			_, lerr := os.Lstat(abs)
			if errors.Is(lerr, fs.ErrNotExist) {
				// No such file: ids and names are read from files and may look
				// like paths ("../x"); the session whose id or name it is.
				if m, err := c.exact(arg, s); err != nil || m != "" {
					return m, err
				}
				return abs, nil
			}
			// A file that exists here and a session named like it: say so rather than guess.
			if named, _ := c.named(arg, s); len(named) > 0 && (len(named) > 1 || named[0].Path != abs) {
				return "", &AmbiguousError{Query: arg, File: abs, Candidates: infos(named)}
			}
		}
		return abs, nil
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

// exact returns the session in scope (or, from the current project, in any)
// whose id or name is arg, "" when none is; two are an AmbiguousError.
func (c *Catalog) exact(arg string, s Scope) (string, error) {
	for _, sc := range []Scope{s, {All: true}} {
		es, err := c.scan(sc, false)
		if err != nil {
			return "", err
		}
		var found []entry
		for _, e := range es {
			if e.ID == arg || SameName(e.Name, arg) {
				found = append(found, e)
			}
		}
		switch {
		case len(found) == 1:
			return found[0].Path, nil
		case len(found) > 1:
			return "", &AmbiguousError{Query: arg, Candidates: infos(found)}
		}
		if s.Dir != "" || s.All {
			break
		}
	}
	return "", nil
}

// named returns the sessions in scope whose name or id is arg.
func (c *Catalog) named(arg string, s Scope) ([]entry, error) {
	es, err := c.scan(s, false)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, e := range es {
		if SameName(e.Name, arg) || e.ID == arg {
			out = append(out, e)
		}
	}
	return out, nil
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

// match finds arg among es: an exact id first; else a session whose name is
// arg (SameName) or whose id starts with arg. Two or more of those, a name
// and a prefix of different sessions too, are an AmbiguousError listing them:
// a name never silently loses to a prefix, nor a prefix to a name.
func match(arg string, es []entry) (entry, error) {
	var exact, other []entry
	for _, e := range es {
		switch {
		case e.ID == arg:
			exact = append(exact, e)
		case SameName(e.Name, arg) || strings.HasPrefix(e.ID, arg):
			other = append(other, e)
		}
	}
	for _, set := range [][]entry{exact, other} {
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

// SameName reports whether a session name matches what a user typed: case and
// runs of white space do not count, as names are shown on one line.
func SameName(name, typed string) bool {
	if name == "" {
		return false
	}
	return strings.EqualFold(strings.Join(strings.Fields(name), " "), strings.Join(strings.Fields(typed), " "))
}
