package agent

import (
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
