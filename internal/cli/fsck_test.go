package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session/jsonl"
)

const (
	fsckHdr   = `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/p"}`
	fsckU1    = `{"type":"message","id":"aaaaaaa1","parentId":null,"timestamp":"2026-11-29T19:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1764442801000}}`
	fsckU2    = `{"type":"message","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-11-29T19:00:02.000Z","message":{"role":"user","content":"again","timestamp":1764442802000}}`
	fsckDup   = `{"type":"message","id":"aaaaaaa1","parentId":"aaaaaaa2","timestamp":"2026-11-29T19:00:03.000Z","message":{"role":"user","content":"dup","timestamp":1764442803000}}`
	fsckOrph  = `{"type":"message","id":"aaaaaaa3","parentId":"ffffffff","timestamp":"2026-11-29T19:00:04.000Z","message":{"role":"user","content":"orphan","timestamp":1764442804000}}`
	fsckLoopA = `{"type":"message","id":"aaaaaaa4","parentId":"aaaaaaa5","timestamp":"2026-11-29T19:00:05.000Z","message":{"role":"user","content":"a","timestamp":1764442805000}}`
	fsckLoopB = `{"type":"message","id":"aaaaaaa5","parentId":"aaaaaaa4","timestamp":"2026-11-29T19:00:06.000Z","message":{"role":"user","content":"b","timestamp":1764442806000}}`
	fsckTorn  = `{"type":"message","id":"aaaaaaa6","parentId":"aaaaaaa2","timest`
)

func fsckLines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestFsck(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		want     FsckReport // Path is filled in
		code     int
		stderr   string
		repaired FsckReport // after --repair (Repaired checked by count)
		actions  int
		rcode    int
		sidecar  map[string]string // sidecars after --repair
	}{
		{
			name:     "clean",
			data:     fsckLines(fsckHdr, fsckU1, fsckU2),
			want:     FsckReport{OK: true, Version: 3, Lines: 3, Entries: 2},
			code:     0,
			repaired: FsckReport{OK: true, Version: 3, Lines: 3, Entries: 2},
		},
		{
			name:   "bad lines, duplicate id, loop, orphan",
			data:   fsckLines(fsckHdr, fsckU1, "{oops", fsckU2, fsckDup, fsckOrph, fsckLoopA, fsckLoopB, "", "also bad"),
			want:   FsckReport{Version: 3, Lines: 10, Entries: 5, BadLines: []int{3, 10}, DuplicateIDs: []string{"aaaaaaa1"}, Cycles: []string{"aaaaaaa4"}, Orphans: []string{"aaaaaaa3"}},
			code:   1,
			stderr: "the bytes stay in the file",
			// Nothing to repair: the bytes stay, the report is the same.
			repaired: FsckReport{Version: 3, Lines: 10, Entries: 5, BadLines: []int{3, 10}, DuplicateIDs: []string{"aaaaaaa1"}, Cycles: []string{"aaaaaaa4"}, Orphans: []string{"aaaaaaa3"}},
			rcode:    1,
		},
		{
			name:     "torn tail",
			data:     fsckLines(fsckHdr, fsckU1, fsckU2) + fsckTorn,
			want:     FsckReport{Version: 3, Lines: 4, Entries: 2, TornTail: true},
			code:     1,
			stderr:   "fsck --repair",
			repaired: FsckReport{OK: true, Version: 3, Lines: 3, Entries: 2},
			actions:  1,
			sidecar:  map[string]string{"s.jsonl.torn": fsckTorn},
		},
		{
			name:     "missing newline",
			data:     fsckLines(fsckHdr, fsckU1) + fsckU2,
			want:     FsckReport{Version: 3, Lines: 3, Entries: 2, MissingNewline: true},
			code:     1,
			repaired: FsckReport{OK: true, Version: 3, Lines: 3, Entries: 2},
			actions:  1,
		},
		{
			name:     "no header",
			data:     fsckLines(fsckU1, fsckU2),
			want:     FsckReport{Version: 3, Lines: 2, Entries: 2, NoHeader: true},
			code:     1,
			repaired: FsckReport{OK: true, Version: 3, Lines: 3, Entries: 2},
			actions:  1,
			sidecar:  map[string]string{"s.jsonl.bak": fsckLines(fsckU1, fsckU2)},
		},
		{
			name:   "nothing parses",
			data:   "garbage\n\x00\x01\n",
			want:   FsckReport{Version: 3, Lines: 2, BadLines: []int{1, 2}, NoHeader: true},
			code:   1,
			stderr: "not a session file",
			// Not a session: --repair refuses to write to it, and the file stays as it is.
			repaired: FsckReport{Version: 3, Lines: 2, BadLines: []int{1, 2}, NoHeader: true},
			rcode:    1,
		},
		{
			name:     "empty",
			data:     "",
			want:     FsckReport{OK: true, Empty: true, Version: 3},
			code:     0,
			repaired: FsckReport{OK: true, Version: 3, Lines: 1},
			actions:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			check := func(res result, want FsckReport, code int, actions int) {
				t.Helper()
				if res.code != code {
					t.Errorf("exit %d, want %d (stderr %q)", res.code, code, res.err)
				}
				var got FsckReport
				if err := json.Unmarshal([]byte(res.out), &got); err != nil {
					t.Fatalf("stdout is not a report: %v\n%s", err, res.out)
				}
				if len(got.Repaired) != actions {
					t.Errorf("repaired %q, want %d actions", got.Repaired, actions)
				}
				got.Repaired = nil
				want.Path = path
				for _, s := range []*[]int{&want.BadLines, &want.ExtraHeaders} {
					if *s == nil {
						*s = []int{}
					}
				}
				for _, s := range []*[]string{&want.DuplicateIDs, &want.Cycles, &want.Orphans} {
					if *s == nil {
						*s = []string{}
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("report (-want +got):\n%s", diff)
				}
				if code == 1 && (strings.Count(res.err, "\n") != 1 || !strings.Contains(res.err, path)) {
					t.Errorf("stderr should be one line naming the file: %q", res.err)
				}
			}
			res := runArbor(t, "", "fsck", path, "--json")
			check(res, tt.want, tt.code, 0)
			if !strings.Contains(res.err, tt.stderr) {
				t.Errorf("stderr %q does not say %q", res.err, tt.stderr)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.data {
				t.Fatal("fsck without --repair changed the file")
			}

			// The human report says the same.
			human := runArbor(t, "", "fsck", path)
			if human.code != tt.code || !strings.Contains(human.out, path) {
				t.Errorf("human report: exit %d\n%s", human.code, human.out)
			}

			check(runArbor(t, "", "fsck", path, "--repair", "--json"), tt.repaired, tt.rcode, tt.actions)
			for name, want := range tt.sidecar {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q, %v; want %q", name, got, err, want)
				}
			}
		})
	}
}

func TestJoinInts(t *testing.T) {
	var many []int
	for i := 1; i <= 100; i++ {
		many = append(many, 2*i)
	}
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{3}, "3"},
		{[]int{3, 4}, "3, 4"},
		{[]int{3, 4, 5, 6, 9}, "3-6, 9"},
		{many, "2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40 and 80 more (--json lists them all)"},
	} {
		if got := joinInts(tc.in); got != tc.want {
			t.Errorf("joinInts(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFsckErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(fsckLines(fsckHdr, fsckU1)+fsckTorn), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no session", []string{"fsck"}, 2, "accepts 1 arg"},
		{"unknown flag", []string{"fsck", path, "--fix"}, 2, "unknown flag"},
		{"missing file", []string{"fsck", filepath.Join(dir, "nope.jsonl")}, 1, "nope.jsonl: no such session file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runArbor(t, "", tt.args...)
			if res.code != tt.code || !strings.Contains(res.err, tt.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", res.code, res.err, tt.code, tt.err)
			}
		})
	}

	t.Run("a newer format version is sound but read-only", func(t *testing.T) {
		v4 := filepath.Join(dir, "v4.jsonl")
		data := fsckLines(strings.Replace(fsckHdr, `"version":3`, `"version":4`, 1), fsckU1)
		if err := os.WriteFile(v4, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		res := runArbor(t, "", "fsck", v4, "--json")
		if res.code != 0 || !strings.Contains(res.out, `"ok":true`) || !strings.Contains(res.out, `"readOnly":true`) || !strings.Contains(res.out, `"version":4`) {
			t.Errorf("exit %d, %s %s", res.code, res.out, res.err)
		}
		res = runArbor(t, "", "fsck", v4, "--repair")
		if res.code != 1 || !strings.Contains(res.err, "version 4") || !strings.Contains(res.err, v4) {
			t.Errorf("repair of a newer version: exit %d, stderr %q", res.code, res.err)
		}
		if b, _ := os.ReadFile(v4); string(b) != data {
			t.Error("the file changed")
		}
	})

	t.Run("repair while another writer holds the session", func(t *testing.T) {
		s, err := jsonl.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res := runArbor(t, "", "fsck", path, "--repair")
		if res.code != 1 || !strings.Contains(res.err, "open for writing by pid") {
			t.Errorf("exit %d, stderr %q", res.code, res.err)
		}
		// A plain check is a reader: it never waits for the writer.
		if res := runArbor(t, "", "fsck", path, "--json"); !strings.Contains(res.out, `"tornTail":true`) {
			t.Errorf("check while locked: %q %q", res.out, res.err)
		}
	})
}
