package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/redact"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window/blob"
)

func call(t *testing.T, env *ToolEnv, name string, args any) ToolOutput {
	t.Helper()
	tools, err := Tools([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	return tools[0].Run(context.Background(), env, raw)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEdit(t *testing.T) {
	dir := t.TempDir()
	env := &ToolEnv{Cwd: dir}
	write(t, filepath.Join(dir, "a.go"), "package a\n\nfunc A() int { return 1 }\nfunc B() int { return 1 }\n")
	for _, tc := range []struct {
		name  string
		args  any
		err   string
		after string
	}{
		{"no match", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "return 2", "newText": "x"}}}, "Could not find edits[0].oldText in a.go", ""},
		{"not unique", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "return 1", "newText": "x"}}}, "Found 2 occurrences", ""},
		{"overlap", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "func A() int", "newText": "x"}, map[string]any{"oldText": "A() int { return 1 }", "newText": "y"}}}, "overlap", ""},
		{"missing file", map[string]any{"path": "nope.go", "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}, "no such file", ""},
		{"two edits", map[string]any{"path": "a.go", "edits": []any{map[string]any{"oldText": "A() int { return 1 }", "newText": "A() int { return 10 }"}, map[string]any{"oldText": "B() int { return 1 }", "newText": "B() int { return 20 }"}}}, "",
			"package a\n\nfunc A() int { return 10 }\nfunc B() int { return 20 }\n"},
		{"pi's older shape", map[string]any{"path": "a.go", "oldText": "return 10", "newText": "return 11"}, "", "package a\n\nfunc A() int { return 11 }\nfunc B() int { return 20 }\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(dir, "a.go"))
			out := call(t, env, "edit", tc.args)
			after, _ := os.ReadFile(filepath.Join(dir, "a.go"))
			if tc.err != "" {
				if !out.IsError || !strings.Contains(out.Text, tc.err) {
					t.Errorf("got %+v, want an error with %q", out, tc.err)
				}
				if string(after) != string(before) {
					t.Errorf("a failed edit changed the file")
				}
				return
			}
			if out.IsError || string(after) != tc.after {
				t.Errorf("got %+v, file %q", out, after)
			}
		})
	}
}

func TestBinaryFiles(t *testing.T) {
	dir := t.TempDir()
	env := &ToolEnv{Cwd: dir}
	write(t, filepath.Join(dir, "prog"), "\x7fELF\x02\x01\x01\x00\x00\x00binary")
	if out := call(t, env, "read", map[string]any{"path": "prog"}); !out.IsError || !strings.Contains(out.Text, "binary file") {
		t.Errorf("read of a binary file: %+v", out)
	}
	if out := call(t, env, "edit", map[string]any{"path": "prog", "edits": []any{map[string]any{"oldText": "ELF", "newText": "x"}}}); !out.IsError || !strings.Contains(out.Text, "binary") {
		t.Errorf("edit of a binary file: %+v", out)
	}
	write(t, filepath.Join(dir, "src", "x.txt"), "needle here\n")
	if out := call(t, env, "grep", map[string]any{"pattern": "ELF|needle"}); out.IsError || out.Text != "src/x.txt:1: needle here" {
		t.Errorf("grep skips binary files: %+v", out)
	}
	png := "\x89PNG\r\n\x1a\n\x00\x00"
	write(t, filepath.Join(dir, "i.png"), png)
	if out := call(t, env, "read", map[string]any{"path": "i.png"}); out.IsError || len(out.Images) != 1 || out.Images[0].MimeType != "image/png" {
		t.Errorf("read of an image: %+v", out)
	}
}

func TestReadLimits(t *testing.T) {
	dir := t.TempDir()
	env := &ToolEnv{Cwd: dir}
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		b.WriteString("line\n")
	}
	write(t, filepath.Join(dir, "big.txt"), b.String())
	out := call(t, env, "read", map[string]any{"path": "big.txt"})
	if out.IsError || !strings.HasSuffix(out.Text, "[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]") {
		t.Errorf("big file: %q", out.Text[len(out.Text)-100:])
	}
	out = call(t, env, "read", map[string]any{"path": "big.txt", "offset": 2999, "limit": 5})
	if out.Text != "line\nline\n" {
		t.Errorf("offset: %q", out.Text)
	}
	out = call(t, env, "read", map[string]any{"path": "big.txt", "offset": 10, "limit": 2})
	if !strings.HasSuffix(out.Text, "[2989 more lines in file. Use offset=12 to continue.]") {
		t.Errorf("limit: %q", out.Text)
	}
}

func TestBashNeverEnding(t *testing.T) {
	env := &ToolEnv{Cwd: t.TempDir(), BashTimeout: 5 * time.Second}
	start := time.Now()
	out := call(t, env, "bash", map[string]any{"command": "echo started; sleep 1000 & wait", "timeout": 0.5})
	if time.Since(start) > 4*time.Second {
		t.Errorf("the timeout did not stop the command (took %s)", time.Since(start))
	}
	if !out.IsError || !strings.Contains(out.Text, "started") || !strings.Contains(out.Text, "Command timed out after 500ms") {
		t.Errorf("%+v", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	raw, _ := json.Marshal(map[string]any{"command": "sleep 1000"})
	if out := bashTool.Run(ctx, &ToolEnv{Cwd: t.TempDir()}, raw); !out.IsError || !strings.Contains(out.Text, "Command aborted") {
		t.Errorf("abort: %+v", out)
	}
	if out := call(t, env, "bash", map[string]any{"command": "echo oops >&2; exit 3"}); !out.IsError || out.Text != "oops\n\n\nCommand exited with code 3" {
		t.Errorf("exit status: %q", out.Text)
	}
}

func TestHugeOutputKeptAsBlob(t *testing.T) {
	dir := t.TempDir()
	blobs := blob.Store{Dir: filepath.Join(dir, "blobs")}
	a := &Agent{Redactor: mustRedactor(t), Blobs: blobs, MaxResultBytes: 4096}
	env := &ToolEnv{Cwd: dir, MaxCapture: 1 << 20}
	out := call(t, env, "bash", map[string]any{"command": "for i in $(seq 1 200000); do echo line $i; done; echo AKIAIOSFODNN7EXAMPLE"})
	if out.IsError || !strings.Contains(out.Text, "more bytes of output were not kept") {
		t.Fatalf("capture bound: %q", out.Text[len(out.Text)-200:])
	}
	m, err := a.toolResult(session.Block{ID: "c1", Name: "bash"}, ToolOutput{Text: strings.Repeat("x\n", 10000) + "key AKIAIOSFODNN7EXAMPLE\n"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := m.Data()
	text := d.Content.Text("\n")
	if len(text) > 4096+400 || !strings.Contains(text, "arbor blob sha256:") {
		t.Fatalf("result not bounded (%d bytes): %q", len(text), text[len(text)-300:])
	}
	var details struct {
		Blob     struct{ Ref string } `json:"arborBlob"`
		Redacted int                  `json:"arborRedacted"`
	}
	if err := json.Unmarshal(d.Details, &details); err != nil || details.Redacted != 1 {
		t.Fatalf("details %s", d.Details)
	}
	full, err := blobs.Get(details.Blob.Ref)
	if err != nil || !strings.HasSuffix(string(full), "key [REDACTED:aws-access-key]\n") || len(full) != 20000+len("key [REDACTED:aws-access-key]\n") {
		t.Errorf("blob: %v, %d bytes, ends %q", err, len(full), full[max(0, len(full)-40):])
	}
	_ = session.RoleToolResult
}

func mustRedactor(t *testing.T) *redact.Redactor {
	r, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSearchTools(t *testing.T) {
	dir := t.TempDir()
	env := &ToolEnv{Cwd: dir}
	write(t, filepath.Join(dir, "a", "b", "c.go"), "package c\n// TODO one\n")
	write(t, filepath.Join(dir, "a", "d.ts"), "// todo two\n")
	write(t, filepath.Join(dir, ".git", "x.go"), "TODO hidden\n")
	if out := call(t, env, "find", map[string]any{"pattern": "*.go"}); out.Text != "a/b/c.go" {
		t.Errorf("find *.go: %q", out.Text)
	}
	if out := call(t, env, "find", map[string]any{"pattern": "a/**/*.{go,ts}"}); out.Text != "a/b/c.go\na/d.ts" {
		t.Errorf("find a/**: %q", out.Text)
	}
	if out := call(t, env, "grep", map[string]any{"pattern": "todo", "ignoreCase": true}); out.Text != "a/b/c.go:2: // TODO one\na/d.ts:1: // todo two" {
		t.Errorf("grep: %q", out.Text)
	}
	if out := call(t, env, "grep", map[string]any{"pattern": "TODO", "glob": "*.ts"}); out.Text != "No matches found" {
		t.Errorf("grep glob: %q", out.Text)
	}
	if out := call(t, env, "ls", map[string]any{}); out.Text != ".git/\na/" {
		t.Errorf("ls: %q", out.Text)
	}
	if out := call(t, env, "write", map[string]any{"path": "new/dir/f.txt", "content": "hi"}); out.IsError {
		t.Errorf("write: %+v", out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "new", "dir", "f.txt")); string(data) != "hi" {
		t.Errorf("write wrote %q", data)
	}
	if _, err := Tools([]string{"read", "rm"}); err == nil || !strings.Contains(err.Error(), `unknown tool "rm"`) {
		t.Errorf("unknown tool: %v", err)
	}
}

// A named pipe in the project (or a link to one) never holds a tool: read,
// edit and write refuse it, grep passes over it. Opening one waits for the
// other end, and no abort reaches a goroutine blocked there.
func TestToolsNeverWaitOnAPipe(t *testing.T) {
	dir := t.TempDir()
	env := &ToolEnv{Cwd: dir}
	write(t, filepath.Join(dir, "a.txt"), "needle\n")
	write(t, filepath.Join(dir, "b.txt"), "old\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := os.Symlink("pipe", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	within := func(name string, args any) ToolOutput {
		t.Helper()
		done := make(chan ToolOutput, 1)
		go func() { done <- call(t, env, name, args) }()
		select {
		case out := <-done:
			return out
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %v still waits on the pipe after 5s", name, args)
		}
		return ToolOutput{}
	}
	for _, p := range []string{"pipe", "link"} {
		if out := within("read", map[string]any{"path": p}); !out.IsError || !strings.Contains(out.Text, "named pipe") {
			t.Errorf("read %s: %+v", p, out)
		}
		if out := within("edit", map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}); !out.IsError || !strings.Contains(out.Text, "named pipe") {
			t.Errorf("edit %s: %+v", p, out)
		}
		if out := within("write", map[string]any{"path": p, "content": "x"}); !out.IsError || !strings.Contains(out.Text, "named pipe") {
			t.Errorf("write %s: %+v", p, out)
		}
		if out := within("grep", map[string]any{"pattern": "x", "path": p}); !out.IsError || !strings.Contains(out.Text, "named pipe") {
			t.Errorf("grep %s: %+v", p, out)
		}
	}
	if out := within("grep", map[string]any{"pattern": "needle"}); out.Text != "a.txt:1: needle" {
		t.Errorf("grep over a folder with a pipe: %+v", out)
	}
	// A device never ends: /dev/zero would fill memory.
	if _, err := os.Stat("/dev/zero"); err == nil {
		if out := within("read", map[string]any{"path": "/dev/zero"}); !out.IsError || !strings.Contains(out.Text, "a device") {
			t.Errorf("read /dev/zero: %+v", out)
		}
	}
	// Regular files are read, edited and written as before, mode kept.
	if err := os.Chmod(filepath.Join(dir, "b.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := within("edit", map[string]any{"path": "b.txt", "edits": []any{map[string]any{"oldText": "old", "newText": "new, longer"}}}); out.IsError {
		t.Errorf("edit: %+v", out)
	}
	if out := within("write", map[string]any{"path": "a.txt", "content": "short"}); out.IsError {
		t.Errorf("write: %+v", out)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.txt"))
	fi, _ := os.Stat(filepath.Join(dir, "b.txt"))
	if string(a) != "short" || string(b) != "new, longer\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("a.txt %q, b.txt %q (mode %v)", a, b, fi.Mode().Perm())
	}
}

// TestBashReportsOutputWhileItRuns: a bash call's output reaches Emit as it
// is printed (pi's tool_execution_update with a partialResult), redacted,
// each update before the call's end; the result is the whole output.
func TestBashReportsOutputWhileItRuns(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"echo first AKIAIOSFODNN7EXAMPLE; sleep 1; echo second"}`}}},
		agenttest.Reply{Text: "done"})
	red, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Log: session.New(t.TempDir()), Provider: NewOpenAI(Options{Name: "openai", BaseURL: fake.BaseURL(), APIKey: "k", MaxRetries: -1}),
		Model: Model{Provider: "openai", ID: "m"}, Thinking: "off", Env: &ToolEnv{Cwd: t.TempDir()}, Redactor: red}
	a.Tools, _ = Tools([]string{"bash"})
	var partial []string
	ended := false
	a.Emit = func(e Event) {
		switch e.Type {
		case "tool_execution_update":
			if ended || e.ToolCallID != "c1" || e.ToolName != "bash" {
				t.Errorf("update after the end or for another call: %+v", e)
			}
			var p struct {
				Content []session.Block `json:"content"`
			}
			if err := json.Unmarshal(e.PartialResult, &p); err != nil || len(p.Content) != 1 || p.Content[0].Type != "text" {
				t.Fatalf("partialResult %s: %v", e.PartialResult, err)
			}
			partial = append(partial, p.Content[0].Text)
		case "tool_execution_end":
			ended = true
		}
	}
	if _, err := a.Run(context.Background(), "run it"); err != nil {
		t.Fatal(err)
	}
	if len(partial) == 0 || !strings.HasPrefix(partial[0], "first ") || strings.Contains(partial[0], "second") {
		t.Fatalf("updates %q: want the first line alone while the command sleeps", partial)
	}
	if strings.Contains(strings.Join(partial, ""), "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("an update carries the secret: %q", partial)
	}
	msgs := fake.Messages(fake.Requests()[1])
	if got := msgs[len(msgs)-1].Text; !strings.Contains(got, "second") {
		t.Errorf("the result sent is %q, want the whole output", got)
	}
}
