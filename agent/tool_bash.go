package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

var bashTool = Tool{
	Name:         "bash",
	Description:  "Execute a bash command in the current working directory. Returns stdout and stderr. Long output is cut, and the full output kept. Optionally provide a timeout in seconds.",
	Parameters:   json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"Shell command to execute"},"timeout":{"type":"number","description":"Timeout in seconds (optional)"}},"required":["command"]}`),
	Run:          runBash,
	ChangesFiles: true,
}

// capture keeps up to max bytes of output and counts the rest.
type capture struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
	} else {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

// progressTail is how much of a running command's output its updates carry:
// the end of it, from a line's start.
const progressTail = 16 << 10

// progressEvery is how often a running command's new output is reported.
const progressEvery = 100 * time.Millisecond

// tail is the end of the output kept so far, and how much was written in all.
func (c *capture) tail() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	if len(b) > progressTail {
		b = b[len(b)-progressTail:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return string(b), len(c.buf) + c.dropped
}

// reportWhile reports the tail of out each time it grew, until stop is
// closed; it returns when its last report is done.
func reportWhile(out *capture, report func(string), stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		seen := 0
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if text, n := out.tail(); n != seen {
				seen = n
				report(text)
			}
		}
	}()
	return done
}

// runGroup runs command with bash -c in dir, its output to out, in its own
// process group: when ctx ends the whole group (the shell and everything it
// started) is killed. started is false when it could not start (err says
// why); otherwise err is what Wait returned.
func runGroup(ctx context.Context, dir, command string, out io.Writer) (started bool, err error) {
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	return true, err
}

func runBash(ctx context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Command string   `json:"command"`
		Timeout *float64 `json:"timeout"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return errorOutput("bash: the command is empty")
	}
	timeout := env.BashTimeout
	if a.Timeout != nil && *a.Timeout > 0 {
		timeout = time.Duration(*a.Timeout * float64(time.Second))
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	limit := env.MaxCapture
	if limit <= 0 {
		limit = 32 << 20
	}
	out := &capture{max: limit}
	// While the command runs, what it printed so far goes to whoever listens
	// (the chat shows it); the result, after, is the whole output.
	if report := progressOf(ctx); report != nil {
		stop := make(chan struct{})
		done := reportWhile(out, report, stop)
		defer func() { close(stop); <-done }()
	}
	started, err := runGroup(runCtx, env.Cwd, a.Command, out)
	if !started {
		return errorOutput("bash: %v", err)
	}
	text := string(out.buf)
	if out.dropped > 0 {
		text += fmt.Sprintf("\n[%d more bytes of output were not kept]", out.dropped)
	}
	if text == "" {
		text = "(no output)"
	}
	switch {
	case ctx.Err() != nil:
		return ToolOutput{Text: text + "\n\nCommand aborted", IsError: true}
	case runCtx.Err() != nil:
		return ToolOutput{Text: text + fmt.Sprintf("\n\nCommand timed out after %s", timeout), IsError: true}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ToolOutput{Text: text + fmt.Sprintf("\n\nCommand exited with code %d", ee.ExitCode()), IsError: true}
	}
	if err != nil {
		return ToolOutput{Text: text + "\n\n" + err.Error(), IsError: true}
	}
	return ToolOutput{Text: text}
}
