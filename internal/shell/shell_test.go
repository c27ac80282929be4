package shell

import (
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestArgsReadBackBySh: sh reads every command line Args writes as the
// operands it was given, "--" before any that looks like a flag.
func TestArgsReadBackBySh(t *testing.T) {
	cases := []struct {
		operands []string
		line     string // "" when only the round trip matters
	}{
		{[]string{"0195f1c2"}, "arbor restore 0195f1c2"},
		{[]string{"--purge"}, "arbor restore -- --purge"},
		{[]string{"-"}, "arbor restore -- -"},
		{[]string{"a b"}, "arbor restore 'a b'"},
		{[]string{""}, "arbor restore ''"},
		{[]string{"it's"}, `arbor restore 'it'\''s'`},
		{[]string{"$(touch /tmp/x)"}, "arbor restore '$(touch /tmp/x)'"},
		{[]string{"`id`;rm -rf ~", "*", "a\nb", "\\", "\"q\"", "ü/ö", "~user", "x#y", "!", "=ls", "a=b"}, ""},
	}
	for _, tc := range cases {
		line := Args("arbor restore", tc.operands...)
		if tc.line != "" && line != tc.line {
			t.Errorf("Args(%q) = %s, want %s", tc.operands, line, tc.line)
		}
		// The shell is given a function in place of arbor, which prints its
		// operands one a line, NUL-terminated so newlines survive.
		script := `arbor() { shift; [ "$1" = -- ] && shift; for a; do printf '%s\0' "$a"; done; }; ` + line
		out, err := exec.Command("/bin/sh", "-c", script).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", script, err)
		}
		var got []string
		for len(out) > 0 {
			i := 0
			for out[i] != 0 {
				i++
			}
			got = append(got, string(out[:i]))
			out = out[i+1:]
		}
		if diff := cmp.Diff(tc.operands, got); diff != "" {
			t.Errorf("sh read %s as (-want +got):\n%s", line, diff)
		}
	}
}
