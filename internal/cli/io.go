package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// IO is where a command reads and writes. Everything a command prints goes
// through it, so output can depend on whether stdout is a terminal.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
	width          int
}

func newIO(in io.Reader, out, errOut io.Writer) *IO {
	s := &IO{In: in, Out: out, ErrOut: errOut, width: 100}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.outTTY = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			s.width = w
		}
	}
	if f, ok := errOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.errTTY = true
	}
	return s
}

// IsTTY reports whether stdout is a terminal.
func (s *IO) IsTTY() bool { return s.outTTY }

// ErrIsTTY reports whether stderr is a terminal (progress bars go there).
func (s *IO) ErrIsTTY() bool { return s.errTTY }

// Width is the terminal's width, or 100 when stdout is not a terminal.
func (s *IO) Width() int { return s.width }

// Color reports whether to colour output: a terminal, and NO_COLOR unset.
func (s *IO) Color() bool { return s.outTTY && os.Getenv("NO_COLOR") == "" }

// Buffered returns a buffered writer on stdout; the caller flushes it.
func (s *IO) Buffered() *bufio.Writer { return bufio.NewWriterSize(s.Out, 1<<16) }

// JSON writes v as one line of JSON (HTML escaping off).
func (s *IO) JSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Printf writes to stdout.
func (s *IO) Printf(format string, a ...any) { fmt.Fprintf(s.Out, format, a...) }

// Warnf writes a line to stderr.
func (s *IO) Warnf(format string, a ...any) { fmt.Fprintf(s.ErrOut, "arbor: "+format+"\n", a...) }

// usageError is bad usage: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef reports bad usage (exit status 2).
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitCode maps an error to the exit status of SPEC §10.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
