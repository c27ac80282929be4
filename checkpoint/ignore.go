package checkpoint

import (
	"path"
	"strings"
)

// rule is one line of a .gitignore or .arborignore file.
type rule struct {
	segs    []string // the pattern split at '/', "**" a segment of its own
	negate  bool
	dirOnly bool
	// anchored rules match from the ignore file's folder; the others match
	// the last segment (the name) at any depth below it.
	anchored bool
}

// ruleSet is the rules of one ignore file, relative to its folder.
type ruleSet struct {
	base  string // slash path of the folder, "" for the root
	rules []rule
}

// parseIgnore reads gitignore syntax: '#' comments, '!' negation, '\' to
// escape a leading '#' or '!' and trailing spaces, a trailing '/' for folders
// only, a '/' elsewhere anchoring the pattern to the file's folder, and '*',
// '?', '[...]' and '**' as git gives them.
func parseIgnore(base string, data []byte) ruleSet {
	rs := ruleSet{base: base}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		line = trimTrailingSpaces(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var r rule
		if line[0] == '!' {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		// [!...] is git's negated class; path.Match spells it [^...].
		line = strings.ReplaceAll(line, "[!", "[^")
		r.segs = strings.Split(line, "/")
		rs.rules = append(rs.rules, r)
	}
	return rs
}

// trimTrailingSpaces drops trailing spaces unless escaped with '\'.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// match reports whether the set decides rel (a slash path relative to the
// walk's root) and, if so, whether it is ignored. The last matching rule wins.
func (rs *ruleSet) match(rel string, isDir bool) (decided, ignored bool) {
	if rs.base != "" {
		if !strings.HasPrefix(rel, rs.base+"/") {
			return false, false
		}
		rel = rel[len(rs.base)+1:]
	}
	for i := len(rs.rules) - 1; i >= 0; i-- {
		r := &rs.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.anchored {
			ok = matchSegs(r.segs, strings.Split(rel, "/"))
		} else {
			ok = matchSeg(r.segs[0], path.Base(rel))
		}
		if ok {
			return true, !r.negate
		}
	}
	return false, false
}

func matchSeg(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return ok && err == nil
}

// matchSegs matches pattern segments against path segments; "**" matches
// zero or more whole segments.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				// A trailing "/**" matches everything inside, not the folder itself.
				return len(segs) > 0
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 || !matchSeg(pat[0], segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// ignorer is the stack of rule sets that apply at a point of the walk, the
// root's first.
type ignorer []ruleSet

// ignored reports whether rel is excluded: the deepest set that decides wins.
func (ig ignorer) ignored(rel string, isDir bool) bool {
	for i := len(ig) - 1; i >= 0; i-- {
		if decided, ignored := ig[i].match(rel, isDir); decided {
			return ignored
		}
	}
	return false
}
