package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldenfile "github.com/arborlog/arbor/internal/golden"
)

// result is what one run of the arbor command printed and returned.
type result struct {
	out, err string
	code     int
}

// runArbor runs the arbor command in-process with stdin as its input.
func runArbor(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

// fakeTerminal is an IO whose stdout and stderr are a terminal of the given
// width, coloured or not (as with NO_COLOR set), writing into out and errOut,
// on a clock stopped at fakeNow.
func fakeTerminal(in io.Reader, out, errOut io.Writer, width int, color bool) *IO {
	return &IO{In: in, Out: out, ErrOut: errOut, outTTY: true, errTTY: true, width: width, color: color,
		now: func() time.Time { return fakeNow }}
}

// fakeNow is the fake terminal's clock: ten days after the example session.
// Stopped, it draws no progress bar, which only a slow job shows.
var fakeNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// runFake runs the arbor command in-process on a fake terminal.
func runFake(t *testing.T, width int, color bool, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(fakeTerminal(strings.NewReader(stdin), &out, &errOut, width, color), args)
	return result{out.String(), errOut.String(), code}
}

// copyFile copies src into dir and returns the copy's path, so a test can
// write to a fixture without touching the committed file.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// unchanged reads file and returns a check, for later, that the file still
// holds the same bytes: reading commands never write.
func unchanged(t *testing.T, file string) func() {
	t.Helper()
	before := readFile(t, file)
	return func() {
		t.Helper()
		if readFile(t, file) != before {
			t.Errorf("reading %s changed the file", file)
		}
	}
}

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got))
}

// TestHelp checks that each of these commands explains itself with an example
// and exits 0.
func TestHelp(t *testing.T) {
	for _, cmd := range [][]string{{"tree"}, {"branch"}, {"label"}, {"name"}, {"fork"}, {"info"}, {"cursor"}, {"cursor", "ls"}, {"cursor", "new"}, {"cursor", "switch"}, {"cursor", "rename"}} {
		r := runArbor(t, "", append(cmd, "--help")...)
		if r.code != 0 || !strings.Contains(r.out, "Examples:\n  arbor "+cmd[0]) || !strings.Contains(r.out, "Usage:") {
			t.Errorf("arbor %s --help: exit %d, no usage or example:\n%s", strings.Join(cmd, " "), r.code, r.out)
		}
	}
}
