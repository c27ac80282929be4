// Package golden compares what a test produced with a file kept under its
// package's testdata, and rewrites the file when the tests run with -update:
//
//	go test ./internal/cli -run TestGoldens -update
//
// A package that imports it takes its -update flag from here.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update is the -update flag: rewrite the golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with the file at path; under -update it writes got
// there first, making the folder.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}
