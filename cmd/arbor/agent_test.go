package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// The agent's tests run the arbor binary as a user would, against a scripted
// provider (agenttest), and look at what it printed, what it wrote and what
// the provider received.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func arborBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arbor-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "arbor")
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/arbor")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = &buildError{string(out)}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct{ out string }

func (e *buildError) Error() string { return "go build: " + e.out }

// world is one user's machine: a home with $ARBOR_DIR and a project folder.
type world struct {
	t       *testing.T
	home    string
	project string
	env     []string
}

func newWorld(t *testing.T) *world {
	home := t.TempDir()
	w := &world{t: t, home: home, project: filepath.Join(home, "project")}
	if err := os.MkdirAll(w.project, 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = []string{"HOME=" + home, "ARBOR_DIR=" + filepath.Join(home, "arbor"), "PI_CODING_AGENT_DIR=" + filepath.Join(home, "pi"),
		"PATH=" + os.Getenv("PATH"), "ARBOR_API_KEY=test-key", "TMPDIR=" + filepath.Join(home, "tmp")}
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

type result struct {
	stdout, stderr string
	code           int
}

// cmd prepares arbor with args in the project folder (or dir).
func (w *world) cmd(dir string, args ...string) *exec.Cmd {
	c := exec.Command(arborBinary(w.t), args...)
	if dir == "" {
		dir = w.project
	}
	c.Dir = dir
	c.Env = w.env
	return c
}

func (w *world) run(stdin string, args ...string) result {
	return w.runIn("", stdin, args...)
}

func (w *world) runIn(dir, stdin string, args ...string) result {
	w.t.Helper()
	c := w.cmd(dir, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.Stdin = strings.NewReader(stdin)
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// with returns args for a run against a fake provider.
func with(s *agenttest.Server, args ...string) []string {
	return append([]string{"--provider", s.Kind, "--base-url", s.BaseURL(), "--model", "fake-model"}, args...)
}

// history is the text of the messages the provider got in request i, system prompt aside, joined by spaces.
func history(s *agenttest.Server, i int) string {
	var out []string
	for _, m := range s.Messages(s.Requests()[i]) {
		if m.Role != "system" {
			out = append(out, m.Text)
		}
	}
	return strings.Join(out, " ")
}

// sessions lists the session files under $ARBOR_DIR/sessions.
func (w *world) sessions() []string {
	var out []string
	filepath.WalkDir(filepath.Join(w.home, "arbor", "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func (w *world) only() string {
	w.t.Helper()
	ss := w.sessions()
	if len(ss) != 1 {
		w.t.Fatalf("want one session file, have %v", ss)
	}
	return ss[0]
}

// roles reads a session file and returns its entries as type or message role.
func roles(t *testing.T, path string) []string {
	t.Helper()
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Entries() {
		if e.Type == session.TypeMessage {
			out = append(out, e.Role())
		} else {
			out = append(out, e.Type)
		}
	}
	return out
}

func messageData(t *testing.T, path string) []session.MessageData {
	t.Helper()
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []session.MessageData
	for _, e := range l.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		m, err := e.Message()
		if err != nil {
			t.Fatal(err)
		}
		d, err := m.Data()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestAgentPrintAnswers(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			s := agenttest.New(t, kind, agenttest.Reply{Thinking: "let me think", Text: "Hello there, user.", Input: 12, Output: 7})
			r := w.run("", with(s, "-p", "say hello")...)
			if r.code != 0 || r.stdout != "Hello there, user.\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			path := w.only()
			if !strings.Contains(r.stderr, "session: "+path) {
				t.Errorf("stderr does not name the session file: %q", r.stderr)
			}
			if got, want := strings.Join(roles(t, path), " "), "model_change thinking_level_change user assistant"; got != want {
				t.Errorf("entries %q, want %q", got, want)
			}
			ms := messageData(t, path)
			a := ms[1]
			if a.StopReason != "stop" || a.Usage == nil || a.Usage.Input != 12 || a.Usage.Output != 7 || a.Model != "fake-model" || a.Provider != kind {
				t.Errorf("assistant message %+v usage %+v", a, a.Usage)
			}
			if len(a.Content.Blocks) != 2 || a.Content.Blocks[0].Type != "thinking" || a.Content.Blocks[0].Thinking != "let me think" || a.Content.Blocks[1].Text != "Hello there, user." {
				t.Errorf("content %+v", a.Content.Blocks)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			msgs := s.Messages(reqs[0])
			if last := msgs[len(msgs)-1]; last.Role != "user" || last.Text != "say hello" {
				t.Errorf("request messages %+v", msgs)
			}
			if reqs[0].Body["stream"] != true {
				t.Errorf("request not streamed: %v", reqs[0].Body["stream"])
			}

			// Continued with a thinking level and system prompt flags.
			s.Add(agenttest.Reply{Text: "again"})
			r = w.run("", with(s, "-p", "-c", "--thinking", "high", "--system-prompt", "Be terse.", "--append-system-prompt", "Use British spelling.", "more")...)
			if r.code != 0 {
				t.Fatal(r.stderr)
			}
			req := s.Requests()[1]
			msgs = s.Messages(req)
			system := ""
			switch kind {
			case "openai":
				system = msgs[0].Text
				if req.Body["reasoning_effort"] != "high" {
					t.Errorf("reasoning_effort %v", req.Body["reasoning_effort"])
				}
			case "anthropic":
				sys, _ := req.Body["system"].([]any)
				if len(sys) == 1 {
					system, _ = sys[0].(map[string]any)["text"].(string)
				}
				th, _ := req.Body["thinking"].(map[string]any)
				if th["type"] != "enabled" || th["budget_tokens"] != float64(16384) {
					t.Errorf("thinking %v", req.Body["thinking"])
				}
				if a := msgs[1]; a.Role != "assistant" || a.Thinking != "let me think" {
					t.Errorf("thinking not sent back with its signature: %+v", a)
				}
			}
			if system != "Be terse.\n\nUse British spelling." {
				t.Errorf("system prompt %q", system)
			}
			if got := strings.Join(roles(t, path), " "); got != "model_change thinking_level_change user assistant thinking_level_change user assistant" {
				t.Errorf("entries after --thinking: %s", got)
			}
		})
	}
}
