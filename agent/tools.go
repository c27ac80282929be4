package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/arborlog/arbor/session"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Tool is one tool the model may call, with pi's name and argument shape.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Run         func(ctx context.Context, env *ToolEnv, args json.RawMessage) ToolOutput
	// ChangesFiles marks a tool that may change the working folder: the
	// agent checkpoints the folder before it runs (Agent.Checkpoints).
	ChangesFiles bool
}

// ToolOutput is what a tool returns: text (and images for read), whether it
// failed, and the file it read, for redaction of .env files.
type ToolOutput struct {
	Text    string
	Images  []session.Block
	IsError bool
	Details map[string]any
	File    string
}

// ToolEnv is what tools share: the working folder and the limits.
type ToolEnv struct {
	Cwd         string
	BashTimeout time.Duration // default for bash when the call gives none (0: none)
	MaxCapture  int           // bytes of command output held in memory (default 32 MiB)
}

type progressKey struct{}

// withProgress gives the tools run with ctx a way to report their output so
// far (report nil: none).
func withProgress(ctx context.Context, report func(text string)) context.Context {
	if report == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, report)
}

// progressOf is how a tool run with ctx reports its output so far; nil when
// nobody listens. Calls are made from the tool's goroutine or one it waits
// for before it returns, so none comes after its result.
func progressOf(ctx context.Context) func(text string) {
	f, _ := ctx.Value(progressKey{}).(func(string))
	return f
}

func errorOutput(format string, a ...any) ToolOutput {
	return ToolOutput{Text: fmt.Sprintf(format, a...), IsError: true}
}

// resolve makes a path from the model absolute against the working folder.
func (e *ToolEnv) resolve(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(e.Cwd, p)
}

// ToolNames are the tools arbor has, in the order they are offered.
var ToolNames = []string{"read", "bash", "edit", "write", "ls", "grep", "find"}

// DefaultTools are offered when neither --tools nor the configuration chooses (pi's default set).
var DefaultTools = []string{"read", "bash", "edit", "write"}

// Tools returns the named tools, or an error naming an unknown one.
func Tools(names []string) ([]Tool, error) {
	all := map[string]Tool{"read": readTool, "bash": bashTool, "edit": editTool, "write": writeTool, "ls": lsTool, "grep": grepTool, "find": findTool}
	var out []Tool
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		t, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("unknown tool %q: the tools are %s", n, strings.Join(ToolNames, ", "))
		}
		if !slices.ContainsFunc(out, func(x Tool) bool { return x.Name == n }) {
			out = append(out, t)
		}
	}
	return out, nil
}

// decodeArgs reads a call's arguments into v, or says what is wrong.
func decodeArgs(args json.RawMessage, v any) error {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("invalid arguments %s: %v", truncate(string(args), 200), err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
