package jsonl

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

// TestDurability checks when each policy fsyncs the session file (SPEC §7):
// always after every entry, turn after assistant messages, compactions and on
// close, never not at all.
func TestDurability(t *testing.T) {
	type step struct {
		name   string
		append func(*Session) error
	}
	steps := []step{
		{"user", func(s *Session) error { _, err := s.AppendMessage(user(t, "u")); return err }},
		{"assistant", func(s *Session) error { _, err := s.AppendMessage(assistant(t, "a")); return err }},
		{"model change", func(s *Session) error { _, err := s.AppendModelChange("p", "m"); return err }},
		{"compaction", func(s *Session) error {
			_, err := s.AppendCompaction(session.CompactionData{Summary: "s", FirstKeptEntryID: "aaaaaaa2", TokensBefore: 10})
			return err
		}},
		{"user", func(s *Session) error { _, err := s.AppendMessage(user(t, "u")); return err }},
	}
	tests := []struct {
		policy Durability
		want   []string // after each step, then after Close
	}{
		{Always, []string{"write sync", "write sync", "write sync", "write sync", "write sync", "sync close"}},
		{Turn, []string{"write", "write sync", "write", "write sync", "write", "sync close"}},
		{Never, []string{"write", "write", "write", "write", "write", "close"}},
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			path, _ := seed(t)
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs), WithDurability(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			ops := func() string {
				var out []string
				for _, op := range ffs.ops {
					if strings.HasSuffix(op, filepath.Base(path)) {
						out = append(out, strings.Fields(op)[0])
					}
				}
				ffs.ops = nil
				return strings.Join(out, " ")
			}
			ops()
			for _, st := range steps {
				if err := st.append(s); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				got = append(got, ops())
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			got = append(got, ops())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("file operations per step (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseDurability covers the --fsync values.
func TestParseDurability(t *testing.T) {
	for in, want := range map[string]Durability{"always": Always, "turn": Turn, "": Turn, "never": Never} {
		if got, err := ParseDurability(in); err != nil || got != want {
			t.Errorf("ParseDurability(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseDurability("sometimes"); err == nil || !strings.Contains(err.Error(), "always, turn or never") {
		t.Errorf("ParseDurability(sometimes): %v", err)
	}
}
