package toolargs

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Kind is what a tool does, as far as showing a call goes.
type Kind string

// The kinds a one-line view knows. A tool not in the table has no kind.
const (
	Bash   Kind = "bash"   // runs a command
	Read   Kind = "read"   // reads a file
	Write  Kind = "write"  // writes a whole file
	Edit   Kind = "edit"   // replaces text in a file
	Patch  Kind = "patch"  // applies a patch naming its files
	Grep   Kind = "grep"   // searches file contents
	Find   Kind = "find"   // finds files by name
	Ls     Kind = "ls"     // lists a folder
	Fetch  Kind = "fetch"  // fetches a URL
	Search Kind = "search" // searches the web
	Task   Kind = "task"   // hands work to a subagent
	Plan   Kind = "plan"   // records a to-do list
)

// Shape is where a tool's arguments hold what a one-line view shows. Each
// list is tried in order; the first field that is a non-empty string (or,
// for Command, an array of strings) is the one shown.
type Shape struct {
	Kind    Kind     `json:"kind"`
	Command []string `json:"command,omitempty"`
	Path    []string `json:"path,omitempty"`
	Pattern []string `json:"pattern,omitempty"`
	Subject []string `json:"subject,omitempty"` // a URL, a query, a task's description
	Items   []string `json:"items,omitempty"`   // an array counted ("3 items")
	Patch   []string `json:"patch,omitempty"`   // a patch whose file headers name the paths
}

// Entry is one row of the table: the names of a tool and its shape.
type Entry struct {
	Names []string `json:"names"`
	Shape
}

// table holds pi's tools first (their rows fix how pi's calls look, and must
// not change), then Claude Code's and Codex's. Names are matched without
// regard to case, so pi's "read" and Claude Code's "Read" share a row where
// their arguments agree.
var table = []Entry{
	{[]string{"bash"}, Shape{Kind: Bash, Command: []string{"command"}}},
	{[]string{"read"}, Shape{Kind: Read, Path: []string{"path", "file_path"}}},
	{[]string{"write"}, Shape{Kind: Write, Path: []string{"path", "file_path"}}},
	{[]string{"edit", "multiedit"}, Shape{Kind: Edit, Path: []string{"path", "file_path"}}},
	{[]string{"grep"}, Shape{Kind: Grep, Path: []string{"path"}, Pattern: []string{"pattern"}}},
	{[]string{"find", "glob"}, Shape{Kind: Find, Path: []string{"path"}, Pattern: []string{"pattern"}}},
	{[]string{"ls"}, Shape{Kind: Ls, Path: []string{"path"}}},
	// Claude Code.
	{[]string{"notebookedit", "notebookread"}, Shape{Kind: Edit, Path: []string{"notebook_path", "path"}}},
	{[]string{"webfetch"}, Shape{Kind: Fetch, Subject: []string{"url"}}},
	{[]string{"websearch", "web_search"}, Shape{Kind: Search, Subject: []string{"query"}}},
	{[]string{"task", "agent"}, Shape{Kind: Task, Subject: []string{"description", "prompt"}}},
	{[]string{"todowrite"}, Shape{Kind: Plan, Items: []string{"todos"}}},
	{[]string{"toolsearch"}, Shape{Kind: Search, Subject: []string{"query"}}},
	{[]string{"skill"}, Shape{Kind: Task, Subject: []string{"skill", "command"}}},
	{[]string{"slashcommand"}, Shape{Kind: Task, Subject: []string{"command"}}},
	// Codex (local_shell_call's arguments are its action: {"type":"exec","command":[...]}).
	{[]string{"shell", "local_shell", "local_shell_call", "container.exec", "exec_command"}, Shape{Kind: Bash, Command: []string{"command", "cmd"}}},
	{[]string{"apply_patch"}, Shape{Kind: Patch, Patch: []string{"input", "patch"}}},
	{[]string{"update_plan"}, Shape{Kind: Plan, Items: []string{"plan"}}},
	{[]string{"read_file", "view_image"}, Shape{Kind: Read, Path: []string{"path", "file_path"}}},
	{[]string{"list_dir"}, Shape{Kind: Ls, Path: []string{"dir_path", "path"}}},
	{[]string{"grep_files"}, Shape{Kind: Grep, Path: []string{"path"}, Pattern: []string{"pattern"}}},
	{[]string{"spawn_agent"}, Shape{Kind: Task, Subject: []string{"task_name", "message"}}},
}

var byName = func() map[string]Shape {
	m := make(map[string]Shape)
	for _, e := range table {
		for _, n := range e.Names {
			m[n] = e.Shape
		}
	}
	return m
}()

// Lookup is the shape of the tool named name, in any case.
func Lookup(name string) (Shape, bool) {
	if s, ok := byName[name]; ok {
		return s, true
	}
	s, ok := byName[strings.ToLower(name)]
	return s, ok
}

// Table is every row of the table, for a renderer that cannot call Lookup
// (the HTML page reads it from its data).
func Table() []Entry { return table }

// Args is what a one-line view shows of a call's arguments.
type Args struct {
	Command, Path, Pattern, Subject string
	Items                           int  // the length of the Items array
	HasItems                        bool // whether there is one
	Offset, Limit                   float64
	HasOffset, HasLimit             bool
}

// Of reads the arguments shown of a call to a tool of shape s; args that are
// not a JSON object give the zero Args.
func (s Shape) Of(args []byte) Args {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return Args{}
	}
	return s.OfMap(m)
}

// OfMap is Of of arguments already decoded.
func (s Shape) OfMap(m map[string]any) Args {
	var a Args
	a.Command = firstCommand(m, s.Command)
	a.Path = firstString(m, s.Path)
	a.Pattern = firstString(m, s.Pattern)
	a.Subject = firstString(m, s.Subject)
	for _, k := range s.Items {
		if v, ok := m[k].([]any); ok {
			a.Items, a.HasItems = len(v), true
			break
		}
	}
	if a.Path == "" && len(s.Patch) > 0 {
		a.Path = strings.Join(PatchPaths(firstString(m, s.Patch)), ", ")
	}
	if s.Kind == Read {
		a.Offset, a.HasOffset = m["offset"].(float64)
		a.Limit, a.HasLimit = m["limit"].(float64)
	}
	return a
}

// Summary is the call on one line, without the tool's name: the command, the
// path (with the pattern), or the subject; "" when the shape shows none.
func (a Args) Summary() string {
	switch {
	case a.Command != "":
		return a.Command
	case a.Pattern != "" && a.Path != "":
		return a.Pattern + " in " + a.Path
	case a.Pattern != "":
		return a.Pattern
	case a.Path != "":
		return a.Path
	case a.Subject != "":
		return a.Subject
	case a.HasItems:
		return Count(a.Items)
	}
	return ""
}

// Summary is Lookup(name) and Of(args).Summary(), or "" for a tool not in
// the table.
func Summary(name string, args []byte) string {
	s, ok := Lookup(name)
	if !ok {
		return ""
	}
	return s.Of(args).Summary()
}

// Count says how many items a list holds.
func Count(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}

func firstString(m map[string]any, keys []string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// firstCommand is the first of keys that is a non-empty string, or an array
// of strings (Codex's argv) shown as a shell would read it.
func firstCommand(m map[string]any, keys []string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case []any:
			argv := make([]string, 0, len(v))
			for _, x := range v {
				s, ok := x.(string)
				if !ok {
					argv = nil
					break
				}
				argv = append(argv, s)
			}
			if len(argv) > 0 {
				return Argv(argv)
			}
		}
	}
	return ""
}

// Argv shows a command's argument vector as the command line it stands for:
// a shell's "-c" script (Codex runs ["bash", "-lc", script]) is the script
// itself; other arguments are quoted where a shell would need it.
func Argv(argv []string) string {
	if len(argv) == 3 && isShell(argv[0]) && (argv[1] == "-c" || argv[1] == "-lc") {
		return argv[2]
	}
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = shellQuote(s)
	}
	return strings.Join(q, " ")
}

func isShell(s string) bool {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	switch s {
	case "sh", "bash", "zsh", "dash":
		return true
	}
	return false
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// PatchPaths are the files a patch in Codex's apply_patch format (or a
// unified diff) names, in order, each once.
func PatchPaths(patch string) []string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		var p string
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ", "+++ b/"} {
			if rest, ok := strings.CutPrefix(line, h); ok {
				p = strings.TrimSpace(rest)
				break
			}
		}
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Pi reports whether name is one of pi's own tools, whose calls arbor has
// always shown as pi does (their one-line views must not change).
func Pi(name string) bool {
	switch name {
	case "read", "write", "edit", "bash", "grep", "find", "ls":
		return true
	}
	return false
}
