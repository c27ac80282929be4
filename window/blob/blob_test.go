package blob

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPutGet(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "blobs")}
	data := []byte("the full output\n")
	ref, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if ref != Ref(data) || !strings.HasPrefix(ref, "sha256:") || len(ref) != 7+64 {
		t.Fatalf("ref %q", ref)
	}
	again, err := s.Put(data)
	if err != nil || again != ref {
		t.Fatalf("second Put: %v %v", again, err)
	}
	h := strings.TrimPrefix(ref, Prefix)
	for _, arg := range []string{ref, h, h[:8], strings.ToUpper(h[:12]), " " + ref + "\n"} {
		got, err := s.Get(arg)
		if err != nil || string(got) != string(data) {
			t.Errorf("Get(%q) = %q, %v", arg, got, err)
		}
	}
	fi, err := os.Stat(filepath.Join(s.Dir, h[:2], h))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("blob file mode %v (%v)", fi.Mode(), err)
	}
	left, _ := filepath.Glob(filepath.Join(s.Dir, h[:2], ".tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestGetErrors(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	a, _ := s.Put([]byte("a"))
	for _, tc := range []struct {
		ref  string
		want string
	}{
		{"sha256:1234", "not a blob reference"},
		{"zzzzzzzzzz", "not a blob reference"},
		{"sha256:" + strings.Repeat("0", 64), "not found"},
		{"deadbeefdeadbeef", "not found"},
	} {
		if _, err := s.Get(tc.ref); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Get(%q) = %v, want %q", tc.ref, err, tc.want)
		}
	}
	if _, err := s.Get("sha256:" + strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing blob is not ErrNotFound: %v", err)
	}
	// a damaged blob is reported, not returned
	h := strings.TrimPrefix(a, Prefix)
	os.WriteFile(filepath.Join(s.Dir, h[:2], h), []byte("b"), 0o600)
	if _, err := s.Get(a); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged blob: %v", err)
	}
}

func TestAmbiguousPrefix(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	// two blobs whose digests share their first 8 hex digits are astronomically
	// unlikely, so make the files by hand
	dir := filepath.Join(s.Dir, "ab")
	os.MkdirAll(dir, 0o700)
	for _, n := range []string{"abcdef01" + strings.Repeat("0", 56), "abcdef01" + strings.Repeat("1", 56)} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	if _, err := s.Resolve("abcdef01"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous prefix: %v", err)
	}
}

func FuzzResolve(f *testing.F) {
	s := Store{Dir: f.TempDir()}
	ref, _ := s.Put([]byte("seed"))
	for _, seed := range []string{ref, ref[7:15], "sha256:", "", "../../etc/passwd", "sha256:zz", strings.Repeat("a", 70)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		h, err := s.Resolve(arg)
		if err != nil {
			return
		}
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Fatalf("Resolve(%q) = %q", arg, h)
		}
	})
}
