// Package testhome gives a test binary a home of its own: $ARBOR_DIR is a new
// temporary folder, so writer records, indexes, blobs and the trash never
// touch the user's, and $ARBOR_SOURCES is empty, so no listing reads the
// machine's own Claude Code, Codex or rho folders.
//
//	func TestMain(m *testing.M) { os.Exit(testhome.Run(m)) }
package testhome

import (
	"os"
	"testing"
)

// Run runs the tests in a fresh $ARBOR_DIR, then the cleanups (stopping a
// shared database, say), removes the folder and returns the tests' exit
// status.
func Run(m *testing.M, cleanups ...func()) int {
	dir, err := os.MkdirTemp("", "arbor-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("ARBOR_DIR", dir)
	os.Setenv("ARBOR_SOURCES", "")
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.RemoveAll(dir)
	return code
}
