package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

// The pi interop corpus (testdata/pi/README.md): sessions pi 0.73.1 wrote or
// read, and what pi's own SessionManager printed for each of them.
const piCorpus = "../../testdata/pi"

// reducedNode is one node of a tree as pi.mjs reduces getTree(): {id, type,
// label?, children}. arbor's `tree --json` is reduced the same way.
type reducedNode struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Label    string        `json:"label,omitempty"`
	Children []reducedNode `json:"children"`
}

// reduceTree reduces `arbor tree --json` output to pi.mjs's tree shape.
func reduceTree(t *testing.T, b []byte) []reducedNode {
	t.Helper()
	type node struct {
		Entry struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"entry"`
		Label    string `json:"label"`
		Children []node `json:"children"`
	}
	var ns []node
	if err := json.Unmarshal(b, &ns); err != nil {
		t.Fatalf("tree --json is not a JSON array of nodes: %v", err)
	}
	var reduce func([]node) []reducedNode
	reduce = func(ns []node) []reducedNode {
		out := make([]reducedNode, 0, len(ns))
		for _, n := range ns {
			out = append(out, reducedNode{ID: n.Entry.ID, Type: n.Entry.Type, Label: n.Label, Children: reduce(n.Children)})
		}
		return out
	}
	return reduce(ns)
}

// piInfo is what pi.mjs info prints.
type piInfo struct {
	SessionID string  `json:"sessionId"`
	LeafID    *string `json:"leafId"`
	Name      *string `json:"name"`
	Entries   int     `json:"entries"`
}

// arborInfo reduces `arbor info --json` to the fields pi reports.
func arborInfo(t *testing.T, b []byte) piInfo {
	t.Helper()
	var i Info
	if err := json.Unmarshal(b, &i); err != nil {
		t.Fatalf("info --json: %v", err)
	}
	p := piInfo{SessionID: i.ID, LeafID: i.LeafID, Entries: i.EntryCount}
	if i.Name != "" {
		p.Name = &i.Name
	}
	return p
}

// jsonDiff is a diff of two JSON documents' decoded values: "" when they hold
// the same data, however spelled.
func jsonDiff(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "the expected output is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "arbor's output is not JSON: " + err.Error()
	}
	return cmp.Diff(w, g)
}

// piDeviation says what arbor prints where it differs from pi on purpose
// (SPEC §8): the test asserts arbor's documented behaviour instead of pi's.
type piDeviation struct {
	spec  string // the SPEC §8 row
	check func(t *testing.T, file string, r result, pi []byte)
}

// v1Sessions are version 1 files: pi gives their entries random ids each time
// it opens them, so their trees and leaf ids are compared by position.
var v1Sessions = map[string]bool{"v1-basic": true, "v1-branched": true, "dmg-v1-garbage": true}

// TestPiInterop runs arbor on every session of the pi corpus and checks that
// `context --json` (at the leaf, at each leaf in leaves.json and at null),
// `context --format llm`, `tree --json` and `info --json` say what pi says.
// Context and llm output must be byte for byte pi's; the tree and info are
// compared field by field, being different shapes of the same facts.
func TestPiInterop(t *testing.T) {
	sessions, _ := filepath.Glob(filepath.Join(piCorpus, "sessions", "*.jsonl"))
	if len(sessions) == 0 {
		t.Fatalf("no sessions under %s/sessions: the pi corpus is missing", piCorpus)
	}
	var leaves map[string][]string
	b, err := os.ReadFile(filepath.Join(piCorpus, "leaves.json"))
	if err != nil {
		t.Fatalf("the pi corpus has no leaves.json: %v", err)
	}
	if err := json.Unmarshal(b, &leaves); err != nil {
		t.Fatalf("leaves.json: %v", err)
	}
	exact, deviated := 0, 0
	for _, file := range sessions {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			defer unchanged(t, file)()
			type check struct {
				what     string
				expected string
				args     []string
				compare  func(t *testing.T, want, got []byte)
			}
			checks := []check{
				{"context", "context.json", []string{"context", file, "--json"}, sameBytes},
				{"llm", "llm.json", []string{"context", file, "--format", "llm"}, sameBytes},
				{"tree", "tree.json", []string{"tree", file, "--json"}, sameTree},
				{"info", "info.json", []string{"info", file, "--json"}, sameInfo},
			}
			if v1Sessions[name] {
				checks[2].compare, checks[3].compare = sameTreeShape, sameInfoShape
			}
			for _, leaf := range leaves[name] {
				checks = append(checks, check{"context-" + leaf, "context-" + leaf + ".json", []string{"context", file, "--json", "--leaf", leaf}, sameBytes})
			}
			for _, c := range checks {
				t.Run(c.what, func(t *testing.T) {
					want, err := os.ReadFile(filepath.Join(piCorpus, "expected", name+"."+c.expected))
					if err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
					r := runArbor(t, "", c.args...)
					dev, ok := piDeviations[name][c.what]
					if !ok {
						dev, ok = piDeviations[name]["*"]
					}
					if ok {
						t.Logf("arbor differs from pi here on purpose (SPEC §8, %s)", dev.spec)
						deviated++
						dev.check(t, file, r, want)
						return
					}
					if want == nil {
						// pi hangs on this file (missing.json); a deviation must say
						// what arbor does instead.
						t.Fatalf("pi has no %s output for %s and no deviation says what arbor should print", c.what, name)
					}
					if leaf := strings.TrimPrefix(c.what, "context-"); leaf != c.what && leaf != "null" && !hasEntry(t, file, leaf) {
						unknownLeaf(t, file, leaf, r, want)
						return
					}
					if r.code != 0 {
						t.Fatalf("arbor %s: exit %d: %s", strings.Join(c.args, " "), r.code, r.err)
					}
					exact++
					c.compare(t, want, []byte(r.out))
				})
			}
		})
	}
	t.Logf("%d outputs equal pi's, %d differ as SPEC §8 says", exact, deviated)
}

func hasEntry(t *testing.T, file, id string) bool {
	t.Helper()
	l, err := jsonl.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	return l.Entry(id) != nil
}

// unknownLeaf checks `context --leaf <id>` for an id the file lacks: pi falls
// back to the last entry; arbor's command refuses (exit 1, naming the id and
// the file), because a mistyped id should not silently print another context.
// What pi printed must then be arbor's context at its default leaf, which
// for a file pi wrote is the last entry too.
func unknownLeaf(t *testing.T, file, leaf string, r result, pi []byte) {
	t.Helper()
	if r.code != 1 || !strings.Contains(r.err, fmt.Sprintf("no entry %q in ", leaf)) {
		t.Errorf("--leaf %s (not in the file): exit %d, stderr %q; want exit 1 and 'no entry %q in <file>'", leaf, r.code, r.err, leaf)
	}
	sameBytes(t, pi, []byte(contextJSON(t, file)))
}

func sameBytes(t *testing.T, want, got []byte) {
	t.Helper()
	if bytes.Equal(bytes.TrimRight(want, "\n"), bytes.TrimRight(got, "\n")) {
		return
	}
	if d := jsonDiff(want, got); d != "" {
		t.Errorf("differs from pi (-pi +arbor):\n%s", d)
	} else {
		t.Errorf("same JSON as pi's but not the same bytes:\npi:    %.300s\narbor: %.300s", want, got)
	}
}

func sameTree(t *testing.T, want, got []byte) {
	t.Helper()
	var pi []reducedNode
	if err := json.Unmarshal(want, &pi); err != nil {
		t.Fatal(err)
	}
	// Trees are compared as flat lists of nodes: go-cmp's diff of deeply
	// nested slices takes minutes on a session of thousands of entries.
	if d := cmp.Diff(flatTree(pi), flatTree(reduceTree(t, got))); d != "" {
		t.Errorf("tree differs from pi's (-pi +arbor):\n%s", d)
	}
}

// flatNode is one node of a tree in pre-order, with where it hangs.
type flatNode struct {
	ID, Type, Label string
	Parent          string // "" for a root
	Index           int    // position among its siblings
}

func flatTree(roots []reducedNode) []flatNode {
	var out []flatNode
	type item struct {
		n      *reducedNode
		parent string
		index  int
	}
	var stack []item
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{&roots[i], "", i})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, flatNode{it.n.ID, it.n.Type, it.n.Label, it.parent, it.index})
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{&it.n.Children[i], it.n.ID, i})
		}
	}
	return out
}

func sameInfo(t *testing.T, want, got []byte) {
	t.Helper()
	var pi piInfo
	if err := json.Unmarshal(want, &pi); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(pi, arborInfo(t, got)); d != "" {
		t.Errorf("info differs from pi's (-pi +arbor):\n%s", d)
	}
}
