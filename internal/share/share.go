// Package share publishes a session (the chat's /share): it exports the
// session as one HTML page (package export) to a file of its own in a new
// temporary folder, hands that file to the command the user configured
// ("shareCommand" in $ARBOR_DIR/config.json), and returns what the command
// printed, with the first URL in it.
//
// The command is a shell command line, run by /bin/sh -c. {file} in it is
// replaced by the page's path, quoted for the shell; without {file} the page
// is given on the command's standard input. $ARBOR_SHARE_FILE holds the path
// either way. For a secret GitHub gist:
//
//	"shareCommand": "gh gist create {file}"
//
// The command runs with a timeout (a minute unless set); when it expires the
// command and everything it started are stopped. The folder is removed when
// the command has finished, so a command must have read the file by then.
// The command's output is untrusted text: it is returned through
// termtext.Block, and the URL through termtext.Line, so it can be shown on a
// terminal as it is.
package share

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/internal/shell"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/session"
)

// DefaultTimeout bounds the command when Options.Timeout is 0.
const DefaultTimeout = time.Minute

// maxOutput is the most of the command's stdout and of its stderr kept.
const maxOutput = 64 << 10

// ErrNoCommand is returned when no share command is configured.
var ErrNoCommand = errors.New(`share: no share command is configured: set "shareCommand" in $ARBOR_DIR/config.json, for example "gh gist create {file}" ({file} is the exported page; without it the page is on stdin)`)

// Options configure a share.
type Options struct {
	Command string        // the shell command line ({file} is the page's path)
	Timeout time.Duration // DefaultTimeout when 0
	Export  export.Options
}

// Result is what the command printed.
type Result struct {
	URL    string // the first http(s) URL in the output, "" when none
	Output string // stdout, trimmed
}

var urlPattern = regexp.MustCompile(`https?://[^\s"'<>]+`)

// Share exports l to HTML and runs the share command on the page.
func Share(ctx context.Context, l *session.Log, o Options) (Result, error) {
	if strings.TrimSpace(o.Command) == "" {
		return Result{}, ErrNoCommand
	}
	dir, err := os.MkdirTemp("", "arbor-share-")
	if err != nil {
		return Result{}, fmt.Errorf("share: %w", err)
	}
	defer os.RemoveAll(dir)
	name := "session.html"
	if o.Export.Source != "" {
		name = export.DefaultName(o.Export.Source, export.FormatHTML)
	}
	page := filepath.Join(dir, name)
	if err := writePage(page, l, o.Export); err != nil {
		return Result{}, err
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	line := o.Command
	var stdin io.Reader
	if strings.Contains(line, "{file}") {
		line = strings.ReplaceAll(line, "{file}", shell.Quote(page))
	} else {
		f, err := os.Open(page)
		if err != nil {
			return Result{}, fmt.Errorf("share: %w", err)
		}
		defer f.Close()
		stdin = f
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "ARBOR_SHARE_FILE="+page)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	err = cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return Result{}, errors.New("share: cancelled; the share command was stopped")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{}, fmt.Errorf("share: the share command did not finish within %s and was stopped; check it by hand: %s", timeout, termtext.Line(o.Command))
	case err != nil:
		msg := firstLine(stderr.String())
		if msg == "" {
			msg = firstLine(stdout.String())
		}
		if msg != "" {
			msg = ": " + termtext.Line(msg)
		}
		return Result{}, fmt.Errorf("share: the share command failed (%v)%s", err, msg)
	}
	out := strings.TrimSpace(stdout.String())
	return Result{URL: termtext.Line(urlPattern.FindString(out)), Output: termtext.Block(out)}, nil
}

func writePage(path string, l *session.Log, o export.Options) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("share: %w", err)
	}
	err = export.HTML(f, l, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("share: export the page: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	for _, ln := range strings.Split(s, "\n") {
		if ln = strings.TrimSpace(ln); ln != "" {
			return ln
		}
	}
	return ""
}

// capped keeps the first maxOutput bytes written to it and drops the rest.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
