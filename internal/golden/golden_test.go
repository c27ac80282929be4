package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reported.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.errors = append(r.errors, format) }
func (r *recorder) Fatalf(format string, args ...any) { r.errors = append(r.errors, format) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "a.golden")
	*Update = true
	Check(t, path, []byte("one\n"))
	*Update = false
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("one\n"))
	if len(r.errors) != 0 {
		t.Errorf("the same text reported %v", r.errors)
	}
	Check(r, path, []byte("two\n"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "differs") {
		t.Errorf("other text reported %v", r.errors)
	}
	r.errors = nil
	Check(r, filepath.Join(t.TempDir(), "missing.golden"), []byte("x"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "-update writes it") {
		t.Errorf("a missing file reported %v", r.errors)
	}
}
