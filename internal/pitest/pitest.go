// Package pitest finds pi's own session code, installed from ../shared/peers
// (.ci/run installs both), for the tests that compare arbor with pi live.
// Without Node or the peer such a test is skipped.
package pitest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The pi releases there are peers of. ARBOR_PI_PEER and ARBOR_PI16_PEER name
// another install folder for each.
const (
	V073 = "0.73.1"
	V16  = "1.6.0"
)

var env = map[string]string{V073: "ARBOR_PI_PEER", V16: "ARBOR_PI16_PEER"}

// Dir returns the install folder of the peer of a pi release (what setup.sh
// prints), or skips the test when Node or the peer is missing.
func Dir(t testing.TB, version string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: cannot run pi " + version)
	}
	dir := os.Getenv(env[version])
	if dir == "" {
		dir = "/tmp/peers/pi-" + version
	}
	if _, err := os.Stat(filepath.Join(dir, "pi.mjs")); err != nil {
		t.Skipf("pi %s peer not installed (%v): run the peer's setup.sh in ../shared/peers, or set %s to its folder", version, err, env[version])
	}
	return dir
}

// Script returns the peer's pi.mjs, or skips the test (see Dir).
func Script(t testing.TB, version string) string {
	t.Helper()
	return filepath.Join(Dir(t, version), "pi.mjs")
}

// Run runs node script args and returns its standard output, failing the
// test with pi's standard error. pi.mjs may leave a copy of the file in
// TMPDIR, so that is a folder of the test's own.
func Run(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s %v: %v\n%s", filepath.Base(script), args, err, stderr.String())
	}
	return out
}
