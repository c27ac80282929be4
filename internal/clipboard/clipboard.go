// Package clipboard copies text to the user's clipboard from a terminal
// program (the chat's /copy).
//
// The first way is OSC 52: an escape sequence that asks the terminal itself to
// set its clipboard, which works over SSH and needs no program on the machine.
// Inside tmux ($TMUX set) the sequence is written twice: plain, which tmux
// takes into a paste buffer and passes on to the terminal outside when its
// set-clipboard option is on, and wrapped in tmux's passthrough (DCS tmux;),
// which reaches the outer terminal when allow-passthrough is on instead.
//
// The second way is the system's clipboard tool, the first of wl-copy, xclip
// -selection clipboard, xsel --clipboard and pbcopy found on $PATH that
// succeeds, given the text on stdin. It is used when asked (Options.System), when
// there is no terminal to write to, or when the text is too long for OSC 52
// (terminals drop sequences of more than about 100 kB).
//
// The text is copied as it is: it goes to the clipboard, not to the screen
// (OSC 52 carries it in base64, so nothing in it can end the sequence).
package clipboard

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// MaxOSC52 is the longest text, in bytes, sent as OSC 52 (its base64 is a
// third longer, under the 100,000 bytes xterm and others accept).
const MaxOSC52 = 74_000

// Options say where the text can go.
type Options struct {
	// Terminal receives the OSC 52 sequence (os.Stdout, or a buffer whose
	// content a bubbletea program sends with tea.Raw); nil: no OSC 52.
	Terminal io.Writer
	// System asks for the system's clipboard tool as well.
	System bool
	// Getenv reads $TMUX (os.Getenv when nil).
	Getenv func(string) string
	// Timeout bounds the system tool (5 s when 0).
	Timeout time.Duration
}

// Result says how the text was copied.
type Result struct {
	OSC52 bool   // the sequence was written to the terminal
	Tool  string // the system tool that took it ("" for none)
}

// String names the ways used: "OSC 52", "xclip", "OSC 52 and xclip".
func (r Result) String() string {
	var ways []string
	if r.OSC52 {
		ways = append(ways, "OSC 52")
	}
	if r.Tool != "" {
		ways = append(ways, r.Tool)
	}
	if len(ways) == 0 {
		return "nothing"
	}
	return strings.Join(ways, " and ")
}

// ErrNoWay is returned when neither OSC 52 nor a system tool could be used.
var ErrNoWay = errors.New("clipboard: no way to copy")

// Copy puts text on the clipboard: OSC 52 to the terminal, and the system
// tool when asked or when OSC 52 cannot carry it.
func Copy(ctx context.Context, text string, o Options) (Result, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var r Result
	osc := o.Terminal != nil && len(text) <= MaxOSC52
	if osc {
		if _, err := io.WriteString(o.Terminal, OSC52(text, getenv("TMUX") != "")); err != nil {
			return r, fmt.Errorf("clipboard: write to the terminal: %w", err)
		}
		r.OSC52 = true
	}
	if osc && !o.System {
		return r, nil
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	tool, err := System(ctx, text, timeout)
	r.Tool = tool
	if err != nil && !r.OSC52 {
		why := "there is no terminal to send OSC 52 to"
		if o.Terminal != nil {
			why = fmt.Sprintf("the text (%d bytes) is too long for OSC 52", len(text))
		}
		return r, fmt.Errorf("%w: %s, and %v", ErrNoWay, why, err)
	}
	if err != nil {
		return r, fmt.Errorf("clipboard: sent as OSC 52, but %w", err)
	}
	return r, nil
}

// OSC52 is the sequence that sets the terminal's clipboard to text; in tmux,
// followed by the same wrapped in tmux's passthrough.
func OSC52(text string, tmux bool) string {
	seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
	if !tmux {
		return seq
	}
	return seq + "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

// tools are the system clipboard programs, in the order they are tried.
func tools() [][]string {
	list := [][]string{{"wl-copy"}, {"xclip", "-selection", "clipboard"}, {"xsel", "--clipboard", "--input"}, {"pbcopy"}}
	if runtime.GOOS == "darwin" {
		list = [][]string{{"pbcopy"}}
	}
	return list
}

// System gives text to the first system clipboard tool on $PATH that takes
// it, and returns its name.
func System(ctx context.Context, text string, timeout time.Duration) (string, error) {
	var failures []string
	for _, argv := range tools() {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			continue
		}
		if err := run(ctx, path, argv[1:], text, timeout); err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", argv[0], err))
			continue
		}
		return argv[0], nil
	}
	if len(failures) == 0 {
		return "", errors.New("no clipboard tool is installed (wl-copy, xclip, xsel or pbcopy)")
	}
	return "", errors.New(strings.Join(failures, "; "))
}

func run(ctx context.Context, path string, args []string, text string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// xclip and wl-copy stay in the background to serve the clipboard; do not
	// wait for them to close the pipe they inherited.
	cmd.WaitDelay = 200 * time.Millisecond
	err := cmd.Run()
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			return fmt.Errorf("%v: %s", err, first)
		}
		return err
	}
	return nil
}
