package testhome

import (
	"os"
	"strings"
	"testing"
)

var home string

func TestMain(m *testing.M) {
	t0 := os.Getenv("ARBOR_DIR")
	code := Run(m, func() { home = os.Getenv("ARBOR_DIR") })
	if _, err := os.Stat(home); code == 0 && (home == t0 || !os.IsNotExist(err)) {
		println("testhome: the home was not a new folder, or was not removed:", home)
		code = 1
	}
	os.Exit(code)
}

func TestHome(t *testing.T) {
	dir := os.Getenv("ARBOR_DIR")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || !strings.HasPrefix(dir, os.TempDir()) {
		t.Errorf("$ARBOR_DIR = %q (%v), want a new folder under %s", dir, err, os.TempDir())
	}
	if v, ok := os.LookupEnv("ARBOR_SOURCES"); !ok || v != "" {
		t.Errorf("$ARBOR_SOURCES = %q, %v; want set and empty", v, ok)
	}
}
