package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/termtext"
	"golang.org/x/term"
)

// IO is where a command reads and writes. Everything a command prints goes
// through it, so output can depend on whether stdout is a terminal.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
	color          bool
	width          int
	now            func() time.Time // the clock ages are counted on
}

// newIO looks at the real stdout and stderr: whether each is a terminal, the
// terminal's width, and NO_COLOR. (Tests fake a terminal with fakeTerminal.)
func newIO(in io.Reader, out, errOut io.Writer) *IO {
	s := &IO{In: in, Out: out, ErrOut: errOut, width: 100, now: time.Now}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.outTTY = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			s.width = w
		}
	}
	if f, ok := errOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.errTTY = true
	}
	s.color = s.outTTY && os.Getenv("NO_COLOR") == ""
	return s
}

// IsTTY reports whether stdout is a terminal.
func (s *IO) IsTTY() bool { return s.outTTY }

// ErrIsTTY reports whether stderr is a terminal (progress bars go there).
func (s *IO) ErrIsTTY() bool { return s.errTTY }

// Width is the terminal's width, or 100 when stdout is not a terminal.
func (s *IO) Width() int { return s.width }

// Color reports whether to colour output: a terminal, and NO_COLOR unset.
func (s *IO) Color() bool { return s.color }

// Now is the time ages ("3h", "2d") are counted to.
func (s *IO) Now() time.Time { return s.now() }

// Buffered returns a buffered writer on stdout; the caller flushes it.
func (s *IO) Buffered() *bufio.Writer { return bufio.NewWriterSize(s.Out, 1<<16) }

// JSON writes v as one line of JSON (HTML escaping off).
func (s *IO) JSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Printf writes human-readable text to stdout; see fprintf.
func (s *IO) Printf(format string, a ...any) { fprintf(s.Out, format, a...) }

// Warnf writes a line to stderr; see fprintf.
func (s *IO) Warnf(format string, a ...any) { fprintf(s.ErrOut, "arbor: "+format+"\n", a...) }

// fprintf is fmt.Fprintf for human-readable output. Its arguments are taken
// to be untrusted one-line fields: every string (each of a []string), []byte,
// error (worded by errorText) and fmt.Stringer is printed through
// termtext.Line, so nothing a session supplied reaches a terminal as a
// control sequence. Only the format, arbor's
// own text, may hold newlines. Multi-line text goes through termtext.Block.
func fprintf(w io.Writer, format string, a ...any) { fmt.Fprintf(w, format, lineArgs(a)...) }

// sprintf is fmt.Sprintf with fprintf's treatment of its arguments.
func sprintf(format string, a ...any) string { return fmt.Sprintf(format, lineArgs(a)...) }

func lineArgs(a []any) []any {
	safe := make([]any, len(a))
	for i, v := range a {
		switch v := v.(type) {
		case string:
			safe[i] = lineArg(v)
		case []byte:
			safe[i] = lineArg(v)
		case []string:
			lines := make([]lineArg, len(v))
			for j, s := range v {
				lines[j] = lineArg(s)
			}
			safe[i] = lines
		case error:
			safe[i] = lineArg(errorText(v))
		case fmt.Stringer:
			safe[i] = lineArg(v.String())
		default:
			// Named string types (an entry type, a level) are text too.
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
				safe[i] = lineArg(rv.String())
			} else {
				safe[i] = v
			}
		}
	}
	return safe
}

// lineArg formats as its termtext.Line form, keeping width and flags. %q
// formats the text itself: strconv.Quote escapes every character
// termtext.Forbidden names, and escaping twice would double the backslashes.
// %#q can write the text raw between backquotes (strconv.CanBackquote lets
// U+202E and U+009B through), so what %q writes goes through Line too: it
// changes nothing Quote escaped.
type lineArg string

func (s lineArg) Format(st fmt.State, verb rune) {
	if verb == 'q' {
		io.WriteString(st, termtext.Line(fmt.Sprintf(fmt.FormatString(st, verb), string(s))))
		return
	}
	fmt.Fprintf(st, fmt.FormatString(st, verb), termtext.Line(string(s)))
}

// usageError is bad usage: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef reports bad usage (exit status 2).
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// textArg refuses, in one line, an argument (what it is: "the name") that is
// not UTF-8.
// Session files are UTF-8 JSON: encoding would turn the bytes into U+FFFD, so
// the session would record something other than what was typed.
func textArg(what, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return fmt.Errorf("%s is not UTF-8 text (byte %d is 0x%02x); give it in UTF-8", what, i+1, s[i])
}

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
