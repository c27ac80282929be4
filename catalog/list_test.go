package catalog

import (
	"encoding/json"
	"github.com/arborlog/arbor/internal/pitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// corpus is the pi interop corpus at the repository root, corpus16 the one pi 1.6.0 wrote.
const (
	corpus   = "../testdata/pi"
	corpus16 = "../testdata/pi16"
)

// TestListDiffersFrom073AsNamed: pi 1.6.0 lists the 0.73.1 corpus's folders
// as 0.73.1 did, but for the order of sessions modified at the same moment
// (0.73.1: directory order; 1.6.0: file name, descending). arbor follows 1.6.0.
func TestListDiffersFrom073AsNamed(t *testing.T) {
	for _, name := range []string{"basic", "damaged"} {
		old := readExpected(t, filepath.Join(corpus, "expected", "list-"+name+".json"))
		now := readExpected(t, filepath.Join(corpus, "expected16", "list-"+name+".json"))
		if len(old) != len(now) {
			t.Fatalf("%s: 0.73.1 lists %d sessions, 1.6.0 %d", name, len(old), len(now))
		}
		for i := range now {
			if cmp.Equal(old[i], now[i]) {
				continue
			}
			if old[i]["modified"] != now[i]["modified"] {
				t.Errorf("%s: row %d differs beyond the order of ties: %v / %v", name, i, old[i], now[i])
			}
		}
	}
}

// TestListEqualsPi lists the committed folders pi wrote and compares every field
// of pi 1.6.0's SessionManager.listAll(dir) output, and the order, with arbor's:
// the 0.73.1 corpus's folders (expected16) and the sessions pi 1.6.0 wrote.
func TestListEqualsPi(t *testing.T) {
	folders := map[string][2]string{
		"basic":   {filepath.Join(corpus, "list", "basic"), filepath.Join(corpus, "expected16", "list-basic.json")},
		"damaged": {filepath.Join(corpus, "list", "damaged"), filepath.Join(corpus, "expected16", "list-damaged.json")},
		"gen16":   {filepath.Join(corpus16, "list", "gen16"), filepath.Join(corpus16, "expected", "list-gen16.json")},
	}
	for name, f := range folders {
		t.Run(name, func(t *testing.T) {
			want := readExpected(t, f[1])
			for _, indexed := range []string{"cold", "warm"} {
				c := Open(t.TempDir())
				if indexed == "warm" {
					c = Open(filepath.Dir(IndexPath(t.TempDir())))
					if _, err := c.List(Scope{Dir: f[0]}, ListOptions{Empty: true}); err != nil {
						t.Fatal(err)
					}
				}
				got, err := c.List(Scope{Dir: f[0]}, ListOptions{Empty: true})
				c.Close()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, piFields(t, got)); diff != "" {
					t.Errorf("%s listing differs from pi's (-pi +arbor):\n%s", indexed, diff)
				}
			}
		})
	}
}

func readExpected(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no pi expectations: %v", err)
	}
	var v []map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// piFields returns the records as pi prints them: paths relative to the
// repository root, without arbor's entryCount and sizeBytes (checked here).
func piFields(t *testing.T, infos []Info) []map[string]any {
	t.Helper()
	b, err := json.Marshal(infos)
	if err != nil {
		t.Fatal(err)
	}
	var v []map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for i, m := range v {
		st, err := os.Stat(infos[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		if infos[i].SizeBytes != st.Size() {
			t.Errorf("%s: sizeBytes %d, file has %d", infos[i].Path, infos[i].SizeBytes, st.Size())
		}
		if infos[i].EntryCount < infos[i].MessageCount {
			t.Errorf("%s: entryCount %d < messageCount %d", infos[i].Path, infos[i].EntryCount, infos[i].MessageCount)
		}
		delete(m, "entryCount")
		delete(m, "sizeBytes")
		m["path"] = strings.TrimPrefix(m["path"].(string), "../")
	}
	return v
}

// TestListEqualsPiLive has pi write random sessions and list them, and
// compares arbor's listing of the same folder.
func TestListEqualsPiLive(t *testing.T) {
	pi := piPeer(t)
	if testing.Short() {
		t.Skip("runs node")
	}
	dir := t.TempDir()
	if out, err := exec.Command("node", pi, "gen", dir, "11", "25").CombinedOutput(); err != nil {
		t.Fatalf("pi gen: %v\n%s", err, out)
	}
	out, err := exec.Command("node", pi, "list", dir).Output()
	if err != nil {
		t.Fatalf("pi list: %v", err)
	}
	var want []map[string]any
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	c := Open(t.TempDir())
	defer c.Close()
	got, err := c.List(Scope{Dir: dir}, ListOptions{Empty: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, piFields(t, got)); diff != "" {
		t.Errorf("listing differs from pi's (-pi +arbor):\n%s", diff)
	}
}

func piPeer(t *testing.T) string { return pitest.Script(t, pitest.V073) }
