package cli

import (
	"errors"
	"strings"
	"testing"
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
