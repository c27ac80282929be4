package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/arborlog/arbor/internal/termtext"
)

type kind string

func TestFprintfEscapesArguments(t *testing.T) {
	for _, tc := range []struct {
		format string
		args   []any
		want   string
	}{
		{"name %s\n", []any{"x\x1b]0;owned\x07"}, "name x\\x1b]0;owned\\a\n"},
		{"[%-6s]", []any{"a\rb"}, `[a\rb  ]`},
		{"%s", []any{[]byte("\u202eab")}, `\u202eab`},
		{"%v", []any{errors.New("bad \x9b id")}, `bad \x9b id`},
		{"%s", []any{kind("type\n")}, `type\n`},
		{"%q", []any{"say \x1b[2J"}, `"say \x1b[2J"`},
		{"%#q", []any{"rtl\u202e \u009b"}, "`rtl\\u202e \\u009b`"},
		{"%d entries in %s", []any{3, "plain"}, "3 entries in plain"},
		{"ids %v", []any{[]string{"a\x1b", "b"}}, `ids [a\x1b b]`},
	} {
		var b strings.Builder
		fprintf(&b, tc.format, tc.args...)
		if got := b.String(); got != tc.want {
			t.Errorf("fprintf(%q, %q) = %q, want %q", tc.format, tc.args, got, tc.want)
		}
	}
}

// Whatever the argument, fprintf prints nothing a terminal would act on,
// with any of the verbs arbor uses.
func FuzzFprintf(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "\u202e\u2028", "\xff", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, format := range []string{"%s", "%-16s", "%q", "%#q", "%v", "%8v"} {
			var b strings.Builder
			fprintf(&b, format, s)
			fprintf(&b, format, []string{s, s})
			fprintf(&b, format, errors.New(s))
			out := b.String()
			if !utf8.ValidString(out) || strings.ContainsFunc(out, termtext.Forbidden) {
				t.Fatalf("fprintf(%q, %q) = %q", format, s, out)
			}
		}
	})
}

// TestErrorText: library package names are trimmed where arbor prints an
// error, at the start and after the context a caller wrapped around it;
// words that only look like one stay.
func TestErrorText(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"session: entry not found", "entry not found"},
		{"/tmp/a.jsonl: jsonl: session is open for writing in another process", "/tmp/a.jsonl: session is open for writing in another process"},
		{"compact x.jsonl: compaction: window: context does not fit the budget", "compact x.jsonl: context does not fit the budget"},
		{`blob: "sha" is not a blob reference`, `"sha" is not a blob reference`},
		{"the session: is named", "the session: is named"},
		{"two\nlines  of  text", "two lines of text"},
	} {
		if got := errorText(errors.New(tc.err)); got != tc.want {
			t.Errorf("errorText(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
	// And where arbor prints it.
	r := runArbor(t, "", "blob", "sha256:zz")
	if r.code != 1 || strings.Contains(r.err, "blob: ") || !strings.HasPrefix(r.err, "arbor: ") {
		t.Errorf("arbor blob sha256:zz: exit %d, stderr %q", r.code, r.err)
	}
}

// TestProgressBar: on the IO's clock, a job shorter than 300 ms draws
// nothing; a longer one draws its bar and clears it when done.
func TestProgressBar(t *testing.T) {
	var errOut strings.Builder
	ios := fakeTerminal(strings.NewReader(""), io.Discard, &errOut, 80, false)
	now := fakeNow
	ios.now = func() time.Time { return now }
	p := progressBar(ios)
	p(1, 4)
	if errOut.Len() != 0 {
		t.Fatalf("a job at its start drew %q", errOut.String())
	}
	now = now.Add(400 * time.Millisecond)
	p(2, 4)
	if got := errOut.String(); got != "\r[===============>              ] 2/4 sessions indexed" {
		t.Errorf("after 400 ms: %q", got)
	}
	p(4, 4)
	if !strings.HasSuffix(errOut.String(), "\r\x1b[K") {
		t.Errorf("done: the bar is not cleared: %q", errOut.String())
	}
	short := progressBar(fakeTerminal(strings.NewReader(""), io.Discard, &errOut, 80, false))
	errOut.Reset()
	short(1, 2)
	short(2, 2)
	if errOut.Len() != 0 {
		t.Errorf("a short job drew %q", errOut.String())
	}
}
