package catalog

import (
	"os"
	"testing"
)

// TestMain keeps the tests off the machine's own Claude Code, Codex and rho
// folders: listings read only what a test puts in $ARBOR_SOURCES.
func TestMain(m *testing.M) {
	if err := os.Setenv("ARBOR_SOURCES", ""); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
