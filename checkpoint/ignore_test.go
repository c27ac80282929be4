package checkpoint

import "testing"

func TestIgnoreRules(t *testing.T) {
	tests := []struct {
		rules string
		base  string
		path  string
		dir   bool
		want  bool
	}{
		{"*.log", "", "a.log", false, true},
		{"*.log", "", "deep/in/a.log", false, true},
		{"*.log\n!keep.log", "", "keep.log", false, false},
		{"# comment\n\n", "", "# comment", false, false},
		{`\#hash`, "", "#hash", false, true},
		{`\!bang`, "", "!bang", false, true},
		{"build/", "", "build", true, true},
		{"build/", "", "build", false, false},
		{"/top", "", "top", false, true},
		{"/top", "", "sub/top", false, false},
		{"a/b", "", "a/b", false, true},
		{"a/b", "", "x/a/b", false, false},
		{"**/gen", "", "x/y/gen", true, true},
		{"**/gen", "", "gen", true, true},
		{"a/**/z", "", "a/z", false, true},
		{"a/**/z", "", "a/b/c/z", false, true},
		{"a/**", "", "a/b", false, true},
		{"a/**", "", "a", true, false},
		{"f[!0-9]", "", "fx", false, true},
		{"f[!0-9]", "", "f1", false, false},
		{"?.c", "", "x.c", false, true},
		{"*.c", "", "dir/x.h", false, false},
		{"trailing  ", "", "trailing", false, true},
		{`sp\ `, "", "sp ", false, true},
		{"x.txt", "sub", "sub/x.txt", false, true},
		{"x.txt", "sub", "x.txt", false, false},
		{"/x.txt", "sub", "sub/deeper/x.txt", false, false},
		{"*.txt\r\n", "", "w.txt", false, true},
	}
	for _, tt := range tests {
		ig := ignorer{parseIgnore(tt.base, []byte(tt.rules))}
		if got := ig.ignored(tt.path, tt.dir); got != tt.want {
			t.Errorf("rules %q in %q: ignored(%q, dir=%v) = %v, want %v", tt.rules, tt.base, tt.path, tt.dir, got, tt.want)
		}
	}
}

func TestDeeperIgnoreFileWins(t *testing.T) {
	ig := ignorer{parseIgnore("", []byte("*.gen")), parseIgnore("src", []byte("!keep.gen"))}
	if ig.ignored("src/keep.gen", false) {
		t.Error("a deeper negation did not win")
	}
	if !ig.ignored("src/other.gen", false) {
		t.Error("the root rule did not apply below")
	}
}
