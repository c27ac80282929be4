package cli

import (
	"os"
	"testing"

	"github.com/arborlog/arbor/internal/pgtest"
)

// TestMain gives the tests an $ARBOR_DIR of their own, so writer records
// (and anything else arbor keeps there) never touch the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arbor-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("ARBOR_DIR", dir)
	// Listings read only the other agents' folders a test names, never the
	// machine's own ~/.claude, ~/.codex or ~/.rho.
	os.Setenv("ARBOR_SOURCES", "")
	code := m.Run()
	pgtest.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}
