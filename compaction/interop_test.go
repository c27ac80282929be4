package compaction

import (
	"bytes"
	"context"
	"github.com/arborlog/arbor/internal/pitest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/session/jsonl"
)

func piContext(t *testing.T, script, file string) []byte {
	t.Helper()
	out, err := exec.Command("node", script, "context", file).Output()
	if err != nil {
		t.Fatalf("pi context %s: %v", file, err)
	}
	return bytes.TrimSpace(out)
}

func arborContext(t *testing.T, file string) []byte {
	t.Helper()
	l, err := jsonl.Read(file)
	if err != nil {
		t.Fatal(err)
	}
	return contextBytes(t, l)
}

// pi reads the compactions arbor writes, and the undo markers, and builds the
// same context as arbor.
func TestPiReadsArborCompactions(t *testing.T) {
	script := piPeer(t)
	for _, name := range []string{"chain-1", "chain-3", "chain-5", "gen-s001", "gen-s004"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "pi", "sessions", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), name+".jsonl")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			edit := func(f func(s *jsonl.Session) error) {
				t.Helper()
				s, err := jsonl.Open(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := f(s); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			before := arborContext(t, file)
			edit(func(s *jsonl.Session) error {
				_, _, err := Compact(context.Background(), s.Log.Cursor(""), Options{Settings: Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 0}})
				return err
			})
			after := arborContext(t, file)
			if bytes.Equal(after, before) {
				t.Fatal("the compaction changed nothing")
			}
			if got := piContext(t, script, file); !bytes.Equal(got, after) {
				t.Errorf("pi builds another context from arbor's compaction:\n  pi %.300s\narbor %.300s", got, after)
			}
			edit(func(s *jsonl.Session) error { _, err := Undo(s.Log.Cursor("")); return err })
			if got := arborContext(t, file); !bytes.Equal(got, before) {
				t.Error("undo did not restore arbor's context")
			}
			if got := piContext(t, script, file); !bytes.Equal(got, before) {
				t.Errorf("pi does not see the undo:\n  pi %.300s\nwant %.300s", got, before)
			}
			edit(func(s *jsonl.Session) error {
				path := s.PathTo("")
				_, err := BranchWithSummary(context.Background(), s.Log.Cursor(""), path[len(path)/2].ID, BranchOptions{})
				return err
			})
			if got, want := piContext(t, script, file), arborContext(t, file); !bytes.Equal(got, want) {
				t.Errorf("pi builds another context from arbor's branch summary:\n  pi %.300s\narbor %.300s", got, want)
			}
		})
	}
}

func piPeer(t *testing.T) string { return pitest.Script(t, pitest.V073) }
