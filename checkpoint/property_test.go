package checkpoint

import (
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// treeModel is what the folder should hold: the tracked paths, and the
// ignored and .git files that no restore may touch.
type treeModel struct {
	t       *rapid.T
	root    string
	store   *Store
	tracked map[string]node
	other   map[string]node // ignored files and .git
	snaps   []*Manifest
	saved   []map[string]node
}

var (
	modelPaths   = []string{"a", "b", "d/a", "d/b", "d/e/a", "e/c", "e"}
	modelIgnored = []string{"x.log", "d/y.log", ".git/HEAD"}
)

func (m *treeModel) parentOK(p string) bool {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if n, ok := m.tracked[dir]; ok && !n.Mode.IsDir() {
			return false
		}
	}
	return true
}

func (m *treeModel) mkdirs(p string) {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if _, ok := m.tracked[dir]; ok {
			continue
		}
		full := filepath.Join(m.root, dir)
		if err := os.MkdirAll(full, 0o755); err != nil {
			m.t.Fatal(err)
		}
		m.tracked[dir] = node{Mode: fs.ModeDir | 0o755}
	}
}

func (m *treeModel) write(t *rapid.T) {
	p := rapid.SampledFrom(modelPaths).Draw(t, "path")
	if n, ok := m.tracked[p]; ok && n.Mode.IsDir() || !m.parentOK(p) {
		t.Skip("not a file path now")
	}
	data := rapid.SampledFrom([]string{"", "one\n", "two\nlines\n", "\x00bin\xff"}).Draw(t, "data")
	mode := rapid.SampledFrom([]fs.FileMode{0o644, 0o755, 0o600}).Draw(t, "mode")
	m.mkdirs(p)
	full := filepath.Join(m.root, p)
	if n, ok := m.tracked[p]; ok && n.Mode&fs.ModeSymlink != 0 {
		must(t, os.Remove(full))
	}
	must(t, os.WriteFile(full, []byte(data), mode))
	must(t, os.Chmod(full, mode))
	m.tracked[p] = node{Mode: mode, Data: data}
}

func (m *treeModel) symlink(t *rapid.T) {
	p := rapid.SampledFrom(modelPaths).Draw(t, "path")
	if _, ok := m.tracked[p]; ok || !m.parentOK(p) {
		t.Skip("taken")
	}
	target := rapid.SampledFrom([]string{"a", "../b", "/etc/passwd", "missing"}).Draw(t, "target")
	m.mkdirs(p)
	must(t, os.Symlink(target, filepath.Join(m.root, p)))
	m.tracked[p] = node{Mode: fs.ModeSymlink | 0o777, Target: target}
}

func (m *treeModel) remove(t *rapid.T) {
	p := rapid.SampledFrom(append(modelPaths, "d", "d/e")).Draw(t, "path")
	if _, ok := m.tracked[p]; !ok {
		t.Skip("absent")
	}
	if m.tracked[p].Mode.IsDir() && m.hasIgnoredUnder(p) {
		t.Skip("would remove an ignored file")
	}
	must(t, os.RemoveAll(filepath.Join(m.root, p)))
	for k := range m.tracked {
		if k == p || strings.HasPrefix(k, p+"/") {
			delete(m.tracked, k)
		}
	}
}

func (m *treeModel) hasIgnoredUnder(p string) bool {
	for k := range m.other {
		if strings.HasPrefix(k, p+"/") {
			return true
		}
	}
	return false
}

func (m *treeModel) chmod(t *rapid.T) {
	p := rapid.SampledFrom(modelPaths).Draw(t, "path")
	n, ok := m.tracked[p]
	if !ok || !n.Mode.IsRegular() {
		t.Skip("not a file")
	}
	n.Mode ^= 0o111
	must(t, os.Chmod(filepath.Join(m.root, p), n.Mode))
	m.tracked[p] = n
}

func (m *treeModel) rename(t *rapid.T) {
	src := rapid.SampledFrom(modelPaths).Draw(t, "src")
	dst := rapid.SampledFrom(modelPaths).Draw(t, "dst")
	n, ok := m.tracked[src]
	if _, taken := m.tracked[dst]; !ok || n.Mode.IsDir() || taken || !m.parentOK(dst) || src == dst {
		t.Skip("cannot rename")
	}
	m.mkdirs(dst)
	must(t, os.Rename(filepath.Join(m.root, src), filepath.Join(m.root, dst)))
	delete(m.tracked, src)
	m.tracked[dst] = n
}

func (m *treeModel) touchIgnored(t *rapid.T) {
	p := rapid.SampledFrom(modelIgnored).Draw(t, "path")
	if !m.parentOK(p) {
		t.Skip("parent is not a folder")
	}
	if path.Dir(p) != ".git" {
		m.mkdirs(p)
	} else {
		must(t, os.MkdirAll(filepath.Join(m.root, ".git"), 0o755))
		m.other[".git"] = node{Mode: fs.ModeDir | 0o755}
	}
	data := rapid.StringN(0, 5, 5).Draw(t, "data")
	must(t, os.WriteFile(filepath.Join(m.root, p), []byte(data), 0o644))
	m.other[p] = node{Mode: 0o644, Data: data}
}

func (m *treeModel) snapshot(t *rapid.T) {
	var base Hash
	if len(m.snaps) > 0 {
		base = m.snaps[len(m.snaps)-1].ID
	}
	s, err := m.store.Snapshot(m.root, Options{Base: base})
	must(t, err)
	m.snaps = append(m.snaps, s)
	m.saved = append(m.saved, maps.Clone(m.tracked))
}

func (m *treeModel) restore(t *rapid.T) {
	if len(m.snaps) == 0 {
		t.Skip("no snapshot yet")
	}
	i := rapid.IntRange(0, len(m.snaps)-1).Draw(t, "snapshot")
	plan, res, err := m.store.Restore(m.root, m.snaps[i].ID, RestoreOptions{})
	must(t, err)
	want := maps.Clone(m.saved[i])
	// Folders still holding an ignored file stay, and so do their parents.
	for _, k := range res.Kept {
		for d := k; d != "."; d = path.Dir(d) {
			if _, ok := want[d]; !ok {
				want[d] = m.tracked[d]
			}
		}
	}
	m.tracked = want
	// The pre-restore snapshot is a snapshot too.
	m.snaps = append(m.snaps, plan.Before)
	m.saved = append(m.saved, nil)
	m.saved[len(m.saved)-1] = m.saved[len(m.saved)-2]
	m.check(t)
	m.saved[len(m.saved)-1] = nil
	m.snaps = m.snaps[:len(m.snaps)-1]
	m.saved = m.saved[:len(m.saved)-1]
}

func (m *treeModel) check(t *rapid.T) {
	got := readTree(t, m.root)
	want := maps.Clone(m.tracked)
	maps.Copy(want, m.other)
	want[".gitignore"] = node{Mode: 0o644, Data: "*.log\n"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("folder differs from the model (-want +got):\n%s", d)
	}
}

func TestPropertyRestoreMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		root, err := os.MkdirTemp("", "checkpoint-prop-")
		must(t, err)
		defer os.RemoveAll(root)
		store, err := Open(filepath.Join(root, "..", filepath.Base(root)+".store"))
		must(t, err)
		defer os.RemoveAll(store.Dir())
		must(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644))
		m := &treeModel{t: t, root: root, store: store, tracked: map[string]node{}, other: map[string]node{}}
		t.Repeat(map[string]func(*rapid.T){
			"write":    m.write,
			"symlink":  m.symlink,
			"remove":   m.remove,
			"chmod":    m.chmod,
			"rename":   m.rename,
			"ignored":  m.touchIgnored,
			"snapshot": m.snapshot,
			"restore":  m.restore,
			"":         m.check,
		})
	})
}
