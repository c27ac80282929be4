package cli

import (
	"os"
	"testing"
)

// TestMain gives the tests an $ARBOR_DIR of their own, so writer records
// (and anything else arbor keeps there) never touch the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arbor-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("ARBOR_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
