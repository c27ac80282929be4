package window

import (
	"os"
	"path/filepath"
	"testing"

	goldenfile "github.com/arborlog/arbor/internal/golden"
)

// update (-update) rewrites the golden files and generated fixtures under testdata/.
var update = goldenfile.Update

// fixtures are committed so that tests do not depend on the Go release's sources.
var fixtures = []struct {
	name     string
	seed     uint64
	turns    int
	dangling bool
}{
	{"coding.jsonl", 1, 6, false},
	{"long.jsonl", 2, 60, false},
	{"dangling.jsonl", 3, 2, true},
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		path := filepath.Join("testdata", f.name)
		if *update {
			if err := os.WriteFile(path, genSession(f.seed, f.turns, f.dangling), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s missing; run go test ./window -run TestFixtures -update", path)
		}
	}
}
