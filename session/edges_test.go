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

// TestEdgeFilesMatchPi: files that pi can read but that are not written the
// way pi writes them (duplicate and escaped names, other member orders, CRLF,
// values of unexpected types, unparsable timestamps, a version 1 file with a
// compaction) give the context pi 0.73.1 gave (testdata/edges/*.pi.json, from
// `pi.mjs context`). The comparison is of JSON values: pi re-encodes what it
// read, arbor passes it through as written.
//
// Regenerate, in testdata/edges, with the pi peer:
//
//	for f in *.jsonl; do node /tmp/peers/pi-0.73.1/pi.mjs context $f > ${f%.jsonl}.pi.json; done
func TestEdgeFilesMatchPi(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "edges", "*.jsonl"))
	check(t, err)
	if len(files) == 0 {
		t.Fatal("no edge files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			check(t, err)
			wantRaw, err := os.ReadFile(strings.TrimSuffix(f, ".jsonl") + ".pi.json")
			check(t, err)
			var want, got any
			check(t, json.Unmarshal(wantRaw, &want))
			gotRaw := contextJSON(t, session.Load(data).Context())
			if err := json.Unmarshal([]byte(gotRaw), &got); err != nil {
				t.Fatalf("arbor's context is not JSON: %v\n%s", err, gotRaw)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("context differs from pi's (-pi +arbor):\n%s", diff)
			}
		})
	}
}
