package checkpoint

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// node is what a test sees at a path.
type node struct {
	Mode   fs.FileMode
	Data   string
	Target string
}

// readTree reads everything under root, .git and ignored files included.
// tb is what the helpers need of testing.T and rapid.T.
type tb interface {
	Helper()
	Fatal(...any)
}

func readTree(t tb, root string) map[string]node {
	t.Helper()
	out := map[string]node{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		n := node{Mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			n.Target, err = os.Readlink(p)
		case info.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			n.Data = string(b)
		}
		out[filepath.ToSlash(rel)] = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t testing.TB, root, rel, data string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func must(t tb, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newStore(t testing.TB) *Store {
	s, err := Open(filepath.Join(t.TempDir(), "store"))
	must(t, err)
	return s
}

// project makes a folder with one of everything a restore must handle.
func project(t *testing.T) string {
	root := t.TempDir()
	write(t, root, "main.go", "package main\n\nfunc main() {}\n", 0o644)
	write(t, root, "empty", "", 0o644)
	write(t, root, "blob.bin", "\x00\x01\x02\xff binary", 0o644)
	write(t, root, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, root, "pkg/a/a.go", "package a\n", 0o644)
	write(t, root, ".gitignore", "*.log\nbuild/\n", 0o644)
	write(t, root, "debug.log", "ignored\n", 0o644)
	write(t, root, "build/out", "ignored output\n", 0o644)
	write(t, root, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
	must(t, os.Symlink("pkg/a/a.go", filepath.Join(root, "link")))
	must(t, os.Mkdir(filepath.Join(root, "emptydir"), 0o750))
	return root
}

func TestRestoreUndoesEveryKindOfChange(t *testing.T) {
	s := newStore(t)
	root := project(t)
	outside := t.TempDir()
	write(t, outside, "victim", "outside\n", 0o644)
	original := readTree(t, root)
	snap, err := s.Snapshot(root, Options{})
	must(t, err)

	// The agent's turn: every kind of change.
	write(t, root, "main.go", "package main\n\nfunc main() { println(1) }\n", 0o644)
	must(t, os.Remove(filepath.Join(root, "empty")))
	write(t, root, "blob.bin", "\x00\x00 other binary", 0o644)
	must(t, os.Chmod(filepath.Join(root, "run.sh"), 0o644))
	must(t, os.Rename(filepath.Join(root, "pkg/a"), filepath.Join(root, "pkg/b")))
	write(t, root, "new/deep/file.txt", "new\n", 0o600)
	must(t, os.Remove(filepath.Join(root, "link")))
	must(t, os.Symlink(outside, filepath.Join(root, "link"))) // now leads out of the folder
	must(t, os.Remove(filepath.Join(root, "emptydir")))
	write(t, root, "emptydir", "a file where a folder was\n", 0o644)
	write(t, root, "debug.log", "ignored, changed\n", 0o644)
	write(t, root, "build/out", "ignored output, changed\n", 0o644)
	write(t, root, ".git/HEAD", "ref: refs/heads/other\n", 0o644)
	later := readTree(t, root)

	plan, res, err := s.Restore(root, snap.ID, RestoreOptions{})
	must(t, err)
	if len(res.Kept) != 0 {
		t.Errorf("kept %v, want nothing", res.Kept)
	}
	want := withPaths(original, later, "debug.log", "build/out", ".git/HEAD")
	if d := cmp.Diff(want, readTree(t, root)); d != "" {
		t.Errorf("after restore (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]node{"victim": {Mode: 0o644, Data: "outside\n"}}, readTree(t, outside)); d != "" {
		t.Errorf("folder outside changed:\n%s", d)
	}

	// Undo: the state before the restore comes back.
	_, _, err = s.Restore(root, plan.Before.ID, RestoreOptions{})
	must(t, err)
	if d := cmp.Diff(later, readTree(t, root)); d != "" {
		t.Errorf("after undo (-want +got):\n%s", d)
	}
}

// withPaths is want with the named paths taken from other (the files a restore
// must leave as they are).
func withPaths(want, other map[string]node, paths ...string) map[string]node {
	out := map[string]node{}
	for k, v := range want {
		out[k] = v
	}
	for _, p := range paths {
		out[p] = other[p]
	}
	return out
}

func TestDiffListsKindsAndLines(t *testing.T) {
	s := newStore(t)
	root := project(t)
	a, err := s.Snapshot(root, Options{})
	must(t, err)
	write(t, root, "main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println() }\n", 0o644)
	must(t, os.Chmod(filepath.Join(root, "run.sh"), 0o644))
	must(t, os.Remove(filepath.Join(root, "empty")))
	write(t, root, "blob.bin", "\x00changed", 0o644)
	write(t, root, "n.txt", "1\n2\n", 0o644)
	b, err := s.Snapshot(root, Options{Base: a.ID})
	must(t, err)
	changes, err := s.Diff(a, b)
	must(t, err)
	type row struct {
		Path   string
		Kind   Kind
		Add    int
		Rem    int
		Binary bool
	}
	var got []row
	for _, c := range changes {
		got = append(got, row{c.Path, c.Kind, c.Added, c.Removed, c.Binary})
	}
	want := []row{
		{"blob.bin", Modified, 0, 0, true},
		{"empty", Deleted, 0, 0, false},
		{"main.go", Modified, 3, 1, false},
		{"n.txt", Created, 2, 0, false},
		{"run.sh", ModeOnly, 0, 0, false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}
	p, err := s.Patch(changes[2])
	must(t, err)
	wantPatch := "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,5 @@\n package main\n \n-func main() {}\n+import \"fmt\"\n+\n+func main() { fmt.Println() }\n"
	if d := cmp.Diff(wantPatch, p); d != "" {
		t.Errorf("patch (-want +got):\n%s", d)
	}
}

func TestStatUnchangedIsNotReadAgain(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	write(t, root, "f", "one", 0o644)
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(filepath.Join(root, "f"), old, old))
	a, err := s.Snapshot(root, Options{})
	must(t, err)
	// Same size, same mtime, same inode: as git, the stat says unchanged.
	f, err := os.OpenFile(filepath.Join(root, "f"), os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("two"), 0)
	must(t, err)
	must(t, f.Close())
	must(t, os.Chtimes(filepath.Join(root, "f"), old, old))
	b, err := s.Snapshot(root, Options{Base: a.ID})
	must(t, err)
	if b.ID != a.ID {
		t.Errorf("an unchanged stat gave a new snapshot %s, want the base %s", b.ID, a.ID)
	}
	// Without a base the file is read.
	c, err := s.Snapshot(root, Options{})
	must(t, err)
	if c.ID == a.ID {
		t.Error("a snapshot without a base did not read the changed file")
	}
}

func TestLargeFilesAreListedAsSkipped(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	write(t, root, "small", "x", 0o644)
	write(t, root, "big", strings.Repeat("y", 100), 0o644)
	m, err := s.Snapshot(root, Options{MaxFileBytes: 50})
	must(t, err)
	if d := cmp.Diff([]Skipped{{"big", 100}}, m.Skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	// A restore leaves the skipped file alone.
	write(t, root, "small", "changed", 0o644)
	write(t, root, "big", strings.Repeat("z", 100), 0o644)
	_, _, err = s.Restore(root, m.ID, RestoreOptions{MaxFileBytes: 50})
	must(t, err)
	got := readTree(t, root)
	if got["small"].Data != "x" || got["big"].Data != strings.Repeat("z", 100) {
		t.Errorf("after restore small=%q big=%q", got["small"].Data, got["big"].Data[:3])
	}
}

func TestRestoreNamesOutsideChangesAndKeepsIgnored(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	write(t, root, "a.txt", "a\n", 0o644)
	first, err := s.Snapshot(root, Options{})
	must(t, err)
	write(t, root, "cache/x", "then\n", 0o644)
	last, err := s.Snapshot(root, Options{Base: first.ID})
	must(t, err)
	// Between turns the user edits a file and ignores a folder.
	write(t, root, "a.txt", "user edit\n", 0o644)
	write(t, root, ".arborignore", "cache/\n", 0o644)
	write(t, root, "cache/x", "now ignored\n", 0o644)
	plan, err := s.Plan(root, last.ID, RestoreOptions{Since: last.ID})
	must(t, err)
	var outside []string
	for _, c := range plan.Outside {
		outside = append(outside, string(c.Kind)+" "+c.Path)
	}
	if d := cmp.Diff([]string{"created .arborignore", "modified a.txt", "deleted cache", "deleted cache/x"}, outside); d != "" {
		t.Errorf("outside (-want +got):\n%s", d)
	}
	res, err := s.Apply(plan)
	must(t, err)
	if d := cmp.Diff([]string{"cache/x"}, res.Kept); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	got := readTree(t, root)
	if got["cache/x"].Data != "now ignored\n" || got["a.txt"].Data != "a\n" {
		t.Errorf("after restore: %+v", got)
	}
	if _, ok := got[".arborignore"]; ok {
		t.Error(".arborignore was not removed")
	}
	// The user's edit is in the stored Before.
	undo, _, err := s.Restore(root, plan.Before.ID, RestoreOptions{})
	must(t, err)
	_ = undo
	if d := readTree(t, root)["a.txt"].Data; d != "user edit\n" {
		t.Errorf("after undo a.txt = %q", d)
	}
}

func TestLargeFileEditStoresOneChunk(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	var b bytes.Buffer
	for i := range 3000 {
		b.WriteString(strings.Repeat("x", i%50) + " line\n")
	}
	write(t, root, "big.txt", b.String(), 0o644)
	m, err := s.Snapshot(root, Options{})
	must(t, err)
	before := countObjects(t, s)
	lines := strings.SplitAfter(b.String(), "\n")
	lines[1500] = "edited\n"
	write(t, root, "big.txt", strings.Join(lines, ""), 0o644)
	m2, err := s.Snapshot(root, Options{Base: m.ID})
	must(t, err)
	// New: the manifest, the chunk list and one or two chunks.
	if n := countObjects(t, s) - before; n > 4 {
		t.Errorf("a one-line edit added %d objects, want at most 4", n)
	}
	c, err := s.Content(m2.Files[0].Hash)
	must(t, err)
	if string(c) != strings.Join(lines, "") {
		t.Error("chunked content does not read back")
	}
}

func countObjects(t *testing.T, s *Store) int {
	n := 0
	must(t, filepath.WalkDir(filepath.Join(s.Dir(), "objects"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	}))
	return n
}

func TestGCKeepsOnlyWhatIsReferred(t *testing.T) {
	s := newStore(t)
	root := t.TempDir()
	write(t, root, "big", strings.Repeat("0123456789abcdef\n", 4000), 0o644)
	write(t, root, "f", "one", 0o644)
	a, err := s.Snapshot(root, Options{})
	must(t, err)
	write(t, root, "f", "two", 0o644)
	write(t, root, "big", "small now", 0o644)
	b, err := s.Snapshot(root, Options{Base: a.ID})
	must(t, err)
	st, err := s.GC([]Hash{b.ID})
	must(t, err)
	if st.Objects == 0 {
		t.Error("GC removed nothing")
	}
	if _, err := s.Load(a.ID); err == nil {
		t.Error("the dropped snapshot still loads")
	}
	write(t, root, "f", "three", 0o644)
	_, _, err = s.Restore(root, b.ID, RestoreOptions{})
	must(t, err)
	if got := readTree(t, root)["f"].Data; got != "two" {
		t.Errorf("restore after GC: f = %q", got)
	}
}

func TestDamagedManifestIsRejected(t *testing.T) {
	m := &Manifest{Root: "/r", Taken: time.Unix(1, 0), Files: []File{{Path: "../escape", Mode: 0o644}}}
	if _, err := decodeManifest(m.encode()); err == nil {
		t.Error("a manifest with ../ decoded")
	}
	m.Files[0].Path = ".git/config"
	if _, err := decodeManifest(m.encode()); err == nil {
		t.Error("a manifest naming .git decoded")
	}
	m.Files[0].Path = "ok"
	data := m.encode()
	for i := range data {
		decodeManifest(data[:i]) // must not panic
	}
}
