package window

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Phase is the kind of work a message belongs to.
type Phase string

// Phases of a coding session (the seed's PhaseTokenDistribution).
const (
	Exploration  Phase = "exploration"
	Execution    Phase = "execution"
	Verification Phase = "verification"
	Conclusion   Phase = "conclusion"
	Unclassified Phase = "unclassified"
)

// Classifier decides the phase of a tool call from the tool's name and, for
// shell tools, the command's leading words.
type Classifier struct {
	// Tools maps a tool name to its phase. A tool mapped to Verification
	// counts as Exploration until the context holds an Execution call: tests
	// run before any edit are looking, not checking.
	Tools map[string]Phase `json:"tools"`
	// Commands maps the leading words of a shell command ("go test",
	// "cargo build", "ls") to a phase; the longest match wins.
	Commands map[string]Phase `json:"commands"`
	// Shells are the tools whose "command" argument is classified by Commands.
	Shells []string `json:"shells"`
}

// DefaultClassifier knows pi's tools (read, bash, edit, write, ls, grep, find),
// rho's (read_file, list_dir, run_command, edit_file, write_file, cargo_*),
// Claude Code's (Read, Bash, Edit, Glob, Task, ...) and Codex's (shell,
// exec_command, apply_patch, spawn_agent, ...). A tool it does not know by name
// is classified by the words of its name (see Tool).
func DefaultClassifier() *Classifier {
	c := &Classifier{Tools: map[string]Phase{}, Commands: map[string]Phase{}, Shells: []string{"bash", "run_command", "shell", "exec", "Bash", "exec_command", "shell_command", "local_shell"}}
	for _, t := range []string{"read", "ls", "grep", "find", "glob", "search", "read_file", "list_dir", "rustdoc_lookup", "crates_io_lookup", "rustc_explain", "web_search", "web_fetch", "fetch",
		"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "view_image",
		// Sub-agents are sent to look things up far more often than to change them.
		"Task", "Agent", "spawn_agent"} {
		c.Tools[t] = Exploration
	}
	for _, t := range []string{"edit", "write", "multi_edit", "edit_file", "write_file", "cargo_fix", "apply_patch", "Edit", "MultiEdit", "Write", "NotebookEdit"} {
		c.Tools[t] = Execution
	}
	for _, t := range []string{"cargo_check", "cargo_test", "cargo_clippy"} {
		c.Tools[t] = Verification
	}
	// Plans are none of the four; named here so that the words of their
	// names ("write") do not count them as execution.
	for _, t := range []string{"TodoWrite", "todo_write", "update_plan"} {
		c.Tools[t] = Unclassified
	}
	for _, w := range []string{"ls", "cat", "head", "tail", "less", "grep", "rg", "ag", "find", "fd", "wc", "tree", "pwd", "which", "file", "stat", "du", "sed -n", "awk",
		"git status", "git log", "git diff", "git show", "git blame", "git branch", "go doc", "go list", "go env", "cargo tree", "npm ls", "jq", "diff"} {
		c.Commands[w] = Exploration
	}
	for _, w := range []string{"go test", "go vet", "go build", "gofmt -l", "staticcheck", "golangci-lint", "cargo test", "cargo check", "cargo clippy", "cargo build",
		"npm test", "npm run test", "npm run build", "npm run lint", "npx tsc", "tsc", "pnpm test", "yarn test", "npx jest", "npx vitest", "pytest", "python -m pytest",
		"make test", "make check", "make lint", "make", "ruff", "mypy", "eslint", "node --test", "bun test", "deno test", "mvn test", "gradle test", "ctest"} {
		c.Commands[w] = Verification
	}
	return c
}

// LoadClassifier reads a JSON file {"tools":{...},"commands":{...},"shells":[...]}
// and lays it over the defaults.
func LoadClassifier(path string) (*Classifier, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("window: phases: %w", err)
	}
	c, err := ParseClassifier(b)
	if err != nil {
		return nil, fmt.Errorf("window: phases file %s: %w", path, err)
	}
	return c, nil
}

// ParseClassifier lays a JSON classifier over the defaults.
func ParseClassifier(data []byte) (*Classifier, error) {
	var over Classifier
	if err := json.Unmarshal(data, &over); err != nil {
		return nil, fmt.Errorf("%w (want {\"tools\":{\"name\":\"exploration\"},\"commands\":{\"go test\":\"verification\"}})", err)
	}
	c := DefaultClassifier()
	for k, v := range over.Tools {
		if !v.valid() {
			return nil, fmt.Errorf("tool %q has unknown phase %q (want exploration, execution, verification, conclusion or unclassified)", k, v)
		}
		c.Tools[k] = v
	}
	for k, v := range over.Commands {
		if !v.valid() {
			return nil, fmt.Errorf("command %q has unknown phase %q (want exploration, execution, verification, conclusion or unclassified)", k, v)
		}
		if len(strings.Fields(k)) == 0 {
			return nil, fmt.Errorf("command %q has no words", k)
		}
		c.Commands[k] = v
	}
	c.Shells = append(c.Shells, over.Shells...)
	return c, nil
}

func (p Phase) valid() bool {
	switch p {
	case Exploration, Execution, Verification, Conclusion, Unclassified:
		return true
	}
	return false
}

// Tool classifies one tool call. edited says whether an Execution call came
// before. A tool not in Tools or Shells (an MCP server's, say) is classified by
// the first word of its name that says what it does: "mcp__docs__search_pages"
// explores, "mcp__db__update_row" executes, "run_linter" verifies.
func (c *Classifier) Tool(name, command string, edited bool) Phase {
	p, ok := c.Tools[name]
	if !ok && slices.Contains(c.Shells, name) {
		p, ok = c.Command(command), true
	}
	if !ok {
		p = nameWords(name)
	}
	if p == Verification && !edited {
		return Exploration
	}
	return p
}

// toolVerbs are the words of tool names that say what a tool does.
var toolVerbs = func() map[string]Phase {
	m := map[string]Phase{}
	for _, w := range strings.Fields("read get list search find lookup fetch view show inspect query grep glob browse describe cat ls explain status diff") {
		m[w] = Exploration
	}
	for _, w := range strings.Fields("write edit create update delete remove patch apply add insert rename move refresh replace install commit push deploy format fix") {
		m[w] = Execution
	}
	for _, w := range strings.Fields("test check lint verify validate typecheck build compile") {
		m[w] = Verification
	}
	return m
}()

// nameWords classifies a tool by the first word of its name found in
// toolVerbs; words are split at anything but a letter or digit, and where a
// lower-case letter meets an upper-case one ("refreshSearchIndex").
func nameWords(name string) Phase {
	start := 0
	for i := 0; i <= len(name); i++ {
		sep, camel := i == len(name), false
		if !sep {
			ch := name[i]
			sep = !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9')
			camel = 'A' <= ch && ch <= 'Z' && i > 0 && 'a' <= name[i-1] && name[i-1] <= 'z'
		}
		if !sep && !camel {
			continue
		}
		if p, ok := toolVerbs[strings.ToLower(name[start:i])]; ok {
			return p
		}
		start = i
		if sep {
			start = i + 1
		}
	}
	return Unclassified
}

// Command classifies a shell command: each part joined by &&, ||, ; or | is
// matched on its leading words; a verification anywhere makes the whole a
// verification, otherwise anything not known to be reading makes it execution.
func (c *Classifier) Command(cmd string) Phase {
	parts := strings.FieldsFunc(cmd, func(r rune) bool { return r == ';' || r == '|' || r == '&' || r == '\n' })
	explore, any := true, false
	for _, part := range parts {
		words := strings.Fields(part)
		for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "sudo" || words[0] == "time" || words[0] == "timeout") {
			words = words[1:] // env assignments and wrappers
			if len(words) > 0 && words[0] != "" && words[0][0] >= '0' && words[0][0] <= '9' {
				words = words[1:] // timeout's duration
			}
		}
		if len(words) == 0 || words[0] == "cd" || words[0] == "echo" || words[0] == "set" || words[0] == "export" {
			continue
		}
		any = true
		best, phase := -1, Execution
		for prefix, p := range c.Commands {
			pw := strings.Fields(prefix)
			if len(pw) > len(words) || len(pw) < best {
				continue
			}
			if slices.Equal(pw, words[:len(pw)]) || (len(pw) == 1 && pathBase(words[0]) == pw[0]) {
				if len(pw) > best || (len(pw) == best && p < phase) {
					best, phase = len(pw), p
				}
			}
		}
		switch phase {
		case Verification:
			return Verification
		case Exploration:
		default:
			explore = false
		}
	}
	if !any || !explore {
		return Execution
	}
	return Exploration
}

func pathBase(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}
