package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

const pi16Corpus = "../testdata/pi16"

// projected is one entry of pi 1.6.0's buildSessionProjection as the peer
// reduces it: {id, type, messages:[roles]}.
type projected struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Messages []string `json:"messages"`
}

// TestPi16Projection checks the projection (the entries a context is made of
// and the roles each contributes after compaction and context edits) against
// pi 1.6.0's on every session of the 1.6.0 corpus, at the file's leaf and at
// each leaf in leaves.json.
func TestPi16Projection(t *testing.T) {
	var leaves map[string][]string
	b, err := os.ReadFile(filepath.Join(pi16Corpus, "leaves.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &leaves); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(pi16Corpus, "sessions", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("the pi 1.6.0 corpus is missing")
	}
	edited := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		for _, leaf := range append([]string{""}, leaves[name]...) {
			want := filepath.Join(pi16Corpus, "expected", name+".projection.json")
			p := l.Projection()
			if leaf != "" {
				want = filepath.Join(pi16Corpus, "expected", name+".projection-"+leaf+".json")
				p = l.ProjectionAt(&leaf)
			}
			got := []projected{}
			for _, e := range p.Entries {
				roles := []string{}
				for _, m := range e.Messages {
					roles = append(roles, m.Role)
				}
				if e.Edit != nil {
					edited++
				}
				got = append(got, projected{e.Entry.ID, e.Entry.Type, roles})
			}
			gb, _ := json.Marshal(got)
			wb, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(wb)) != string(gb) {
				t.Errorf("%s at %q: projection differs from pi 1.6.0's\npi:    %.400s\narbor: %.400s", name, leaf, wb, gb)
			}
		}
	}
	if edited == 0 {
		t.Error("no projection applied a context edit: the corpus does not exercise them")
	}
}
