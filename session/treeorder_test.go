package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

// TestTreeOrderMatchesPi: children ordered by timestamp exactly as pi's
// getTree orders them, including timestamps JavaScript cannot parse (where the
// order is V8's sort's), equal milliseconds written with more digits, and
// missing timestamps, in child lists of up to 63 (longer lists with
// unparsable timestamps, which V8 merges, are sorted stably instead).
// Expectations from `pi.mjs tree` (pi 0.73.1); regenerate
// in testdata/treeorder with
//
//	for f in *.jsonl; do node /tmp/peers/pi-0.73.1/pi.mjs tree $f > ${f%.jsonl}.pi.json; done
func TestTreeOrderMatchesPi(t *testing.T) {
	type piNode struct {
		ID       string   `json:"id"`
		Children []piNode `json:"children"`
	}
	var flatten func(ns []piNode) []string
	flatten = func(ns []piNode) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.ID+"(")
			out = append(out, flatten(n.Children)...)
			out = append(out, ")")
		}
		return out
	}
	var ours func(ns []*session.TreeNode) []string
	ours = func(ns []*session.TreeNode) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Entry.ID+"(")
			out = append(out, ours(n.Children)...)
			out = append(out, ")")
		}
		return out
	}
	files, err := filepath.Glob(filepath.Join("testdata", "treeorder", "*.jsonl"))
	check(t, err)
	if len(files) == 0 {
		t.Fatal("no files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		check(t, err)
		raw, err := os.ReadFile(strings.TrimSuffix(f, ".jsonl") + ".pi.json")
		check(t, err)
		var want []piNode
		check(t, json.Unmarshal(raw, &want))
		if diff := cmp.Diff(flatten(want), ours(session.Load(data).Tree())); diff != "" {
			t.Errorf("%s: tree order differs from pi's (-pi +arbor):\n%s", f, diff)
		}
	}
}
