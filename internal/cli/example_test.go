package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExampleAsPiReadsIt checks the shipped example against what pi 0.73.1
// printed for it (testdata/example/, made with node pi.mjs context|llm|tree|info),
// and, when the pi peer is installed, against pi run now: the README's demo
// session must be one pi itself reads the same way.
func TestExampleAsPiReadsIt(t *testing.T) {
	checks := []struct {
		what    string
		args    []string
		compare func(t *testing.T, want, got []byte)
	}{
		{"context", []string{"context", example, "--json"}, sameBytes},
		{"llm", []string{"context", example, "--format", "llm"}, sameBytes},
		{"tree", []string{"tree", example, "--json"}, sameTree},
		{"info", []string{"info", example, "--json"}, sameInfo},
	}
	for _, c := range checks {
		t.Run(c.what, func(t *testing.T) {
			r := runArbor(t, "", c.args...)
			if r.code != 0 || r.err != "" {
				t.Fatalf("exit %d: %s", r.code, r.err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "example", "refactor."+c.what+".json"))
			if err != nil {
				t.Fatal(err)
			}
			c.compare(t, want, []byte(r.out))
		})
	}
	t.Run("pi now", func(t *testing.T) {
		script := piPeer(t)
		for _, c := range checks {
			c.compare(t, runPi(t, script, c.what, example), []byte(runArbor(t, "", c.args...).out))
		}
	})
}

func TestInfoExample(t *testing.T) {
	abs, err := filepath.Abs(example)
	if err != nil {
		t.Fatal(err)
	}
	r := runArbor(t, "", "info", example)
	want := "id        019ab0c2-5e1f-7a43-9d2e-6c81f0a4b7d3\n" +
		"path      " + abs + "\n" +
		"cwd       /home/dev/timeparse\n" +
		"version   3\n" +
		"name      Fix day units in timeparse\n" +
		"leaf      c3f0679d\n" +
		"entries   26\n" +
		"messages  19\n" +
		"cursor    * main                        leaf c3f0679d\n"
	if r.code != 0 || r.out != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.out, want)
	}
}
