package cli

import (
	"errors"
	"strings"
	"testing"
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
		for _, format := range []string{"%s", "%-16s", "%q", "%v", "%8v"} {
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
