//go:build unix

package cli

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestModesUnderUmask: under the usual umask 022, what import and export
// create is its owner's only: folders 0700 ($ARBOR_DIR, sessions/, the
// project's folder), files 0600 (the imported session, the HTML, Markdown
// and JSONL exports). The umask is the process's: this test must not run in
// parallel with others.
func TestModesUnderUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	home := filepath.Join(t.TempDir(), "arbor")
	t.Setenv("ARBOR_DIR", home)
	src := filepath.Join("..", "..", "importers", "testdata", "claude", "synthetic", "synth-0001.jsonl")
	r := runArbor(t, "", "import", src, "--json")
	if r.code != 0 {
		t.Fatalf("import: code %d\n%s%s", r.code, r.out, r.err)
	}
	imported, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*.jsonl"))
	if len(imported) != 1 {
		t.Fatalf("imported %v", imported)
	}
	out := t.TempDir()
	for _, f := range []string{"html", "md", "jsonl"} {
		if r := runArbor(t, "", "export", imported[0], "--format", f, filepath.Join(out, "page."+f)); r.code != 0 {
			t.Fatalf("export --format %s: code %d\n%s%s", f, r.code, r.out, r.err)
		}
	}
	var seen []string
	for _, root := range []string{home, out} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if p == out {
				return nil // the test's own folder
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("%s is %#o, want %#o", p, got, want)
			}
			seen = append(seen, strings.TrimPrefix(strings.TrimPrefix(p, home), out))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"", "/sessions", filepath.Dir(strings.TrimPrefix(imported[0], home)), strings.TrimPrefix(imported[0], home), "/page.html", "/page.md", "/page.jsonl"} {
		found := false
		for _, s := range seen {
			found = found || s == p
		}
		if !found {
			t.Errorf("%q was not checked (checked %q)", p, seen)
		}
	}
}
