package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

const searchMaxBytes = 50 * 1024

var lsTool = Tool{
	Name:        "ls",
	Description: "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Directory to list (default: current directory)"},"limit":{"type":"number","description":"Maximum number of entries to return (default: 500)"}}}`),
	Run:         runLs,
}

func runLs(_ context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Path  string   `json:"path"`
		Limit *float64 `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if a.Path == "" {
		a.Path = "."
	}
	limit := 500
	if a.Limit != nil && *a.Limit > 0 {
		limit = int(*a.Limit)
	}
	ents, err := os.ReadDir(env.resolve(a.Path))
	if err != nil {
		return errorOutput("ls %s: %v", a.Path, pathErr(err))
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	if len(names) == 0 {
		return ToolOutput{Text: "(empty directory)"}
	}
	text := bounded(names, limit, "entries")
	return ToolOutput{Text: text}
}

// bounded joins lines, at most limit of them and searchMaxBytes, with a note when cut.
func bounded(lines []string, limit int, what string) string {
	var b strings.Builder
	n := 0
	for _, l := range lines {
		if n == limit || b.Len()+len(l)+1 > searchMaxBytes {
			fmt.Fprintf(&b, "\n[%d more %s not shown; narrow the search or raise limit]", len(lines)-n, what)
			break
		}
		b.WriteString(l + "\n")
		n++
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// skipDir is a folder the searches do not enter.
func skipDir(name string) bool {
	return name == ".git" || name == "node_modules" || name == ".hg" || name == ".svn"
}

// globRegexp turns a glob into a regular expression over slash paths:
// ** crosses folders, * and ? do not, {a,b} is an alternative.
func globRegexp(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				if i+1 < len(g) && g[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth > 0 {
				depth--
				b.WriteString(")")
			} else {
				b.WriteString(`\}`)
			}
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// matcher matches a file's path relative to the search folder: a glob
// without a slash matches the file's name at any depth.
func matcher(glob string) (func(rel string) bool, error) {
	re, err := globRegexp(glob)
	if err != nil {
		return nil, fmt.Errorf("bad glob %q: %v", glob, err)
	}
	if !strings.Contains(glob, "/") {
		return func(rel string) bool { return re.MatchString(filepath.Base(rel)) }, nil
	}
	return func(rel string) bool { return re.MatchString(filepath.ToSlash(rel)) }, nil
}

var findTool = Tool{
	Name:        "find",
	Description: "Search for files by glob pattern. Returns matching file paths relative to the search directory.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"},"path":{"type":"string","description":"Directory to search in (default: current directory)"},"limit":{"type":"number","description":"Maximum number of results (default: 1000)"}},"required":["pattern"]}`),
	Run:         runFind,
}

func runFind(ctx context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Pattern string   `json:"pattern"`
		Path    string   `json:"path"`
		Limit   *float64 `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if a.Pattern == "" {
		return errorOutput("find: pattern is required")
	}
	match, err := matcher(a.Pattern)
	if err != nil {
		return errorOutput("find: %v", err)
	}
	limit := 1000
	if a.Limit != nil && *a.Limit > 0 {
		limit = int(*a.Limit)
	}
	root := env.resolve(cmpOr(a.Path, "."))
	var found []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if match(rel) {
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return errorOutput("find: %v", err)
	}
	if len(found) == 0 {
		return ToolOutput{Text: "No files found matching pattern"}
	}
	sort.Strings(found)
	return ToolOutput{Text: bounded(found, limit, "files")}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var grepTool = Tool{
	Name:        "grep",
	Description: "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Long lines are cut to 500 characters.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"Search pattern (regex or literal string)"},"path":{"type":"string","description":"Directory or file to search (default: current directory)"},` +
		`"glob":{"type":"string","description":"Filter files by glob pattern, e.g. '*.ts' or 'src/**/*.ts'"},"ignoreCase":{"type":"boolean","description":"Case-insensitive search (default: false)"},"literal":{"type":"boolean","description":"Treat pattern as literal string instead of regex (default: false)"},` +
		`"context":{"type":"number","description":"Number of lines to show before and after each match (default: 0)"},"limit":{"type":"number","description":"Maximum number of matches to return (default: 100)"}},"required":["pattern"]}`),
	Run: runGrep,
}

func runGrep(ctx context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Pattern    string   `json:"pattern"`
		Path       string   `json:"path"`
		Glob       string   `json:"glob"`
		IgnoreCase bool     `json:"ignoreCase"`
		Literal    bool     `json:"literal"`
		Context    *float64 `json:"context"`
		Limit      *float64 `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if a.Pattern == "" {
		return errorOutput("grep: pattern is required")
	}
	pat := a.Pattern
	if a.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	if a.IgnoreCase {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return errorOutput("grep: bad pattern %q: %v (set literal to search for the text as it is)", a.Pattern, err)
	}
	var match func(string) bool
	if a.Glob != "" {
		if match, err = matcher(a.Glob); err != nil {
			return errorOutput("grep: %v", err)
		}
	}
	limit, around := 100, 0
	if a.Limit != nil && *a.Limit > 0 {
		limit = int(*a.Limit)
	}
	if a.Context != nil && *a.Context > 0 {
		around = int(*a.Context)
	}
	root := env.resolve(cmpOr(a.Path, "."))
	fi, err := os.Stat(root)
	if err != nil {
		return errorOutput("grep %s: %v", cmpOr(a.Path, "."), pathErr(err))
	}
	var out []string
	matches := 0
	search := func(p, rel string) {
		data, err := readRegular(p) // a FIFO, a device or a link to one is passed over
		if err != nil || isBinary(data) {
			return
		}
		lines := strings.Split(string(data), "\n")
		last := -1
		for i, l := range lines {
			if matches >= limit || !re.MatchString(l) {
				continue
			}
			matches++
			for j := max(i-around, last+1); j <= min(i+around, len(lines)-1); j++ {
				sep := "-"
				if j == i || re.MatchString(lines[j]) && j <= i {
					sep = ":"
				}
				out = append(out, fmt.Sprintf("%s%s%d%s %s", rel, sep, j+1, sep, truncate(lines[j], 500)))
				last = j
			}
		}
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return errorOutput("grep %s: %v", cmpOr(a.Path, "."), notRegular(fi))
	}
	if !fi.IsDir() {
		search(root, filepath.Base(root))
	} else {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil || matches >= limit {
				return nil
			}
			if d.IsDir() {
				if p != root && skipDir(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if match != nil && !match(rel) {
				return nil
			}
			search(p, filepath.ToSlash(rel))
			return nil
		})
	}
	if len(out) == 0 {
		return ToolOutput{Text: "No matches found"}
	}
	text := bounded(out, len(out), "lines")
	if matches >= limit {
		text += fmt.Sprintf("\n[stopped at %d matches; raise limit or narrow the search]", limit)
	}
	return ToolOutput{Text: text}
}
