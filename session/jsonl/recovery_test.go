package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

// Lines of the files the recovery table starts from.
const (
	hdr     = `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/old"}`
	user1   = `{"type":"message","id":"aaaaaaa1","parentId":null,"timestamp":"2026-11-29T19:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1764442801000}}`
	asst1   = `{"type":"message","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-11-29T19:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1764442802000}}`
	user2   = `{"type":"message","id":"aaaaaaa3","parentId":"aaaaaaa2","timestamp":"2026-11-29T19:00:03.000Z","message":{"role":"user","content":"more","timestamp":1764442803000}}`
	torn    = `{"type":"message","id":"aaaaaaa4","parentId":"aaaaaaa3","timestamp":"2026-11-29T19:00:04.000Z","message":{"role":"assi`
	hdrV1   = `{"type":"session","id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/old"}`
	hdrV1m  = `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/old"}`
	userV1  = `{"type":"message","timestamp":"2026-11-29T19:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1764442801000}}`
	hdrV2   = `{"type":"session","version":2,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/old"}`
	hookV2  = `{"type":"message","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-11-29T19:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"note","display":true,"timestamp":1764442802000}}`
	hookV2m = `{"type":"message","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-11-29T19:00:02.000Z","message":{"role":"custom","customType":"x","content":"note","display":true,"timestamp":1764442802000}}`
	hdrV4   = `{"type":"session","version":4,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/old"}`
	dupUser = `{"type":"message","id":"aaaaaaa1","parentId":"aaaaaaa2","timestamp":"2026-11-29T19:00:05.000Z","message":{"role":"user","content":"dup","timestamp":1764442805000}}`
)

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// tokens stand for bytes only known after the append, in expected file contents.
const (
	tokHeader = "<HEADER>" // the session's header line as the store wrote it
	tokNew    = "<NEW>"    // the appended entry's line
)

// assistant and user build messages; t may be nil (in the child process).
func assistant(t testing.TB, text string) session.Message {
	m, err := session.ParseMessage([]byte(`{"role":"assistant","content":[{"type":"text","text":"` + text + `"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1764442900000}`))
	if err != nil {
		panic(err)
	}
	return m
}

func user(t testing.TB, text string) session.Message {
	m, err := session.ParseMessage([]byte(`{"role":"user","content":"` + text + `","timestamp":1764442900000}`))
	if err != nil {
		panic(err)
	}
	return m
}

// files returns every file in dir except writer locks, by base name.
func files(t testing.TB, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func ids(es []*session.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// TestRecovery covers every row of SPEC §8 that concerns a file as found: what
// Open loads, that opening and closing writes nothing, and the exact bytes of
// the file and of every sidecar after the first append.
func TestRecovery(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // s.jsonl and any sidecars already there; no s.jsonl: missing

		wantIDs      []string // entries loaded, file order
		keepsID      bool     // the header id is the file's
		wantCwd      string   // header cwd after open
		wantReport   func(session.Report) bool
		wantReadOnly string // substring of the append error; "" if appends work
		refused      bool   // Open fails with ErrNotSession and changes nothing

		// The append: user messages first (each held back by deferred
		// creation when the file is new), then one assistant message.
		users int
		after map[string]string // files after the append and Close
	}{
		{
			name:    "missing",
			files:   map[string]string{},
			wantIDs: []string{}, wantCwd: "/new",
			after: map[string]string{"s.jsonl": lines(tokHeader, tokNew)},
		},
		{
			name:    "empty",
			files:   map[string]string{"s.jsonl": ""},
			wantIDs: []string{}, wantCwd: "/new",
			after: map[string]string{"s.jsonl": lines(tokHeader, tokNew)},
		},
		{
			name:    "only blank lines, kept",
			files:   map[string]string{"s.jsonl": "\n \n"},
			wantIDs: []string{}, wantCwd: "/new",
			after: map[string]string{"s.jsonl": "\n \n" + lines(tokHeader, tokNew)},
		},
		{
			name:    "blank without final newline",
			files:   map[string]string{"s.jsonl": "\n  "},
			wantIDs: []string{}, wantCwd: "/new",
			after: map[string]string{"s.jsonl": "\n  \n" + lines(tokHeader, tokNew)},
		},
		{
			name:    "header only keeps the id",
			files:   map[string]string{"s.jsonl": lines(hdr)},
			wantIDs: []string{}, keepsID: true, wantCwd: "/old",
			after: map[string]string{"s.jsonl": lines(hdr, tokNew)},
		},
		{
			name:    "clean",
			files:   map[string]string{"s.jsonl": lines(hdr, user1, asst1)},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, keepsID: true, wantCwd: "/old",
			wantReport: func(r session.Report) bool { return r.Clean() },
			after:      map[string]string{"s.jsonl": lines(hdr, user1, asst1, tokNew)},
		},
		{
			name:    "bad lines among good ones are kept",
			files:   map[string]string{"s.jsonl": lines(hdr, user1, "not json {", asst1, `{"type":"message"`)},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, keepsID: true, wantCwd: "/old",
			wantReport: func(r session.Report) bool { return slices.Equal(r.BadLines, []int{3, 5}) },
			after:      map[string]string{"s.jsonl": lines(hdr, user1, "not json {", asst1, `{"type":"message"`, tokNew)},
		},
		{
			name:    "no header: entries kept under a new one, original in .bak",
			files:   map[string]string{"s.jsonl": lines(user1, asst1)},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, wantCwd: "/new",
			wantReport: func(r session.Report) bool { return r.NoHeader },
			after: map[string]string{
				"s.jsonl":     lines(tokHeader, user1, asst1, tokNew),
				"s.jsonl.bak": lines(user1, asst1),
			},
		},
		{
			name:    "garbage first line, then entries",
			files:   map[string]string{"s.jsonl": lines("garbage", user1, asst1)},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, wantCwd: "/new",
			after: map[string]string{
				"s.jsonl":     lines(tokHeader, user1, asst1, tokNew),
				"s.jsonl.bak": lines("garbage", user1, asst1),
			},
		},
		{
			name:    "an older .bak is never overwritten",
			files:   map[string]string{"s.jsonl": lines(user1), "s.jsonl.bak": "mine"},
			wantIDs: []string{"aaaaaaa1"}, wantCwd: "/new",
			after: map[string]string{
				"s.jsonl":       lines(tokHeader, user1, tokNew),
				"s.jsonl.bak":   "mine",
				"s.jsonl.bak.1": lines(user1),
			},
		},
		{
			name:    "nothing parses: refused, left unchanged",
			files:   map[string]string{"s.jsonl": "\x00\x01 binary\nnot json\n{\"half\":"},
			refused: true,
		},
		{
			// Objects with a "type" are not entries by that alone: an
			// application's log is not a header-less session (SPEC §7).
			name: "a log of other objects with a type: refused",
			files: map[string]string{"s.jsonl": lines(`{"type":"http","time":"2026-01-01T00:00:00Z","status":200}`,
				`{"type":"message","msg":"x"}`, `{"type":"custom","id":"abc"}`)},
			refused: true,
		},
		{
			name:    "valid JSON but no entries: refused too",
			files:   map[string]string{"s.jsonl": lines(`{"a":1}`, `[1,2]`), "s.jsonl.corrupt": "older"},
			refused: true,
		},
		{
			name:    "torn last line ended in place",
			files:   map[string]string{"s.jsonl": lines(hdr, user1, asst1) + torn},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, keepsID: true, wantCwd: "/old",
			wantReport: func(r session.Report) bool { return r.TornTail && len(r.BadLines) == 0 },
			after: map[string]string{
				"s.jsonl": lines(hdr, user1, asst1, torn, tokNew),
			},
		},
		{
			name:    "torn line with a .torn already there",
			files:   map[string]string{"s.jsonl": lines(hdr, user1) + torn, "s.jsonl.torn": "old fragment"},
			wantIDs: []string{"aaaaaaa1"}, keepsID: true, wantCwd: "/old",
			after: map[string]string{
				"s.jsonl":      lines(hdr, user1, torn, tokNew),
				"s.jsonl.torn": "old fragment",
			},
		},
		{
			name:    "complete last line without newline gets one",
			files:   map[string]string{"s.jsonl": lines(hdr, user1) + asst1},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, keepsID: true, wantCwd: "/old",
			wantReport: func(r session.Report) bool { return r.MissingNewline && !r.TornTail },
			after:      map[string]string{"s.jsonl": lines(hdr, user1, asst1, tokNew)},
		},
		{
			name:    "reopened before any assistant message: each entry once",
			files:   map[string]string{"s.jsonl": lines(hdr, user1)},
			wantIDs: []string{"aaaaaaa1"}, keepsID: true, wantCwd: "/old",
			users: 1,
			after: map[string]string{"s.jsonl": lines(hdr, user1, "<USER0>", tokNew)},
		},
		{
			name:    "new session: users held until the assistant, then written once",
			files:   map[string]string{},
			wantIDs: []string{}, wantCwd: "/new",
			users: 2,
			after: map[string]string{"s.jsonl": lines(tokHeader, "<USER0>", "<USER1>", tokNew)},
		},
		{
			name:    "version 1 migrated, original in .v1.bak",
			files:   map[string]string{"s.jsonl": lines(hdrV1, userV1)},
			keepsID: true, wantCwd: "/old",
			wantReport: func(r session.Report) bool { return r.Migrated && r.Version == 1 },
			after: map[string]string{
				"s.jsonl":        lines(hdrV1m, "<LOADED0>", tokNew),
				"s.jsonl.v1.bak": lines(hdrV1, userV1),
			},
		},
		{
			name:    "version 2 migrated, original in .v2.bak",
			files:   map[string]string{"s.jsonl": lines(hdrV2, user1, hookV2)},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, keepsID: true, wantCwd: "/old",
			after: map[string]string{
				"s.jsonl":        lines(`{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-29T19:00:00.000Z","cwd":"/old"}`, user1, hookV2m, tokNew),
				"s.jsonl.v2.bak": lines(hdrV2, user1, hookV2),
			},
		},
		{
			name:    "version 4 is read-only",
			files:   map[string]string{"s.jsonl": lines(hdrV4, user1) + torn},
			wantIDs: []string{"aaaaaaa1"}, keepsID: true, wantCwd: "/old",
			wantReadOnly: "s.jsonl: session: read-only: file is format version 4",
			after:        map[string]string{"s.jsonl": lines(hdrV4, user1) + torn},
		},
		{
			name:    "duplicate ids and loops are reported, never rewritten",
			files:   map[string]string{"s.jsonl": lines(hdr, user1, asst1, dupUser)},
			wantIDs: []string{"aaaaaaa1", "aaaaaaa2"}, keepsID: true, wantCwd: "/old",
			wantReport: func(r session.Report) bool { return slices.Equal(r.DuplicateIDs, []string{"aaaaaaa1"}) },
			after:      map[string]string{"s.jsonl": lines(hdr, user1, asst1, dupUser, tokNew)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}

			if tt.refused {
				_, err := Open(path, WithCwd("/new"))
				if !errors.Is(err, ErrNotSession) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "fsck") {
					t.Fatalf("Open: %v, want ErrNotSession naming %s and fsck", err, path)
				}
				if diff := cmp.Diff(tt.files, files(t, dir)); diff != "" {
					t.Fatalf("a refused Open changed files (-before +after):\n%s", diff)
				}
				return
			}
			// Opening and closing never writes.
			s, err := Open(path, WithCwd("/new"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.files, files(t, dir)); diff != "" {
				t.Fatalf("Open+Close changed files (-before +after):\n%s", diff)
			}

			s, err = Open(path, WithCwd("/new"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			loaded := s.Entries()
			if tt.wantIDs != nil {
				if diff := cmp.Diff(tt.wantIDs, ids(loaded)); diff != "" {
					t.Errorf("loaded ids (-want +got):\n%s", diff)
				}
			}
			h := s.Header()
			if got := h.ID == "11111111-2222-4333-8444-555555555555"; got != tt.keepsID {
				t.Errorf("header id %s: kept = %v, want %v", h.ID, got, tt.keepsID)
			}
			if h.Cwd != tt.wantCwd {
				t.Errorf("header cwd = %q, want %q", h.Cwd, tt.wantCwd)
			}
			if tt.wantReport != nil && !tt.wantReport(s.Report()) {
				t.Errorf("report %+v", s.Report())
			}

			var users []*session.Entry
			for i := range tt.users {
				e, err := s.AppendMessage(user(t, "u"+string(rune('0'+i))))
				if err != nil {
					t.Fatal(err)
				}
				users = append(users, e)
			}
			e, err := s.AppendMessage(assistant(t, "new"))
			if tt.wantReadOnly != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantReadOnly) || !strings.Contains(err.Error(), path) {
					t.Fatalf("append to a read-only file: err = %v, want it to name %s and say %q", err, path, tt.wantReadOnly)
				}
				if !errors.Is(err, session.ErrReadOnly) {
					t.Errorf("err = %v, want ErrReadOnly", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			want := map[string]string{}
			for name, data := range tt.after {
				data = strings.ReplaceAll(data, tokHeader, string(s.Header().Raw()))
				if e != nil {
					data = strings.ReplaceAll(data, tokNew, string(e.Raw()))
				}
				for i, u := range users {
					data = strings.ReplaceAll(data, "<USER"+string(rune('0'+i))+">", string(u.Raw()))
				}
				for i, l := range loaded {
					data = strings.ReplaceAll(data, "<LOADED"+string(rune('0'+i))+">", string(l.Raw()))
				}
				want[name] = data
			}
			if diff := cmp.Diff(want, files(t, dir)); diff != "" {
				t.Errorf("files after the append (-want +got):\n%s", diff)
			}

			// The repaired file loads clean with everything in it.
			if tt.wantReadOnly != "" {
				return
			}
			r, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			rep := r.Report()
			if rep.TornTail || rep.NoHeader || rep.MissingNewline || rep.Migrated {
				t.Errorf("after the append the file still needs repair: %+v", rep)
			}
			wantIDs := append(ids(loaded), ids(users)...)
			wantIDs = append(wantIDs, e.ID)
			if diff := cmp.Diff(wantIDs, ids(r.Entries())); diff != "" {
				t.Errorf("reloaded ids (-want +got):\n%s", diff)
			}
		})
	}
}

// A FIFO, a device or a folder at a session's path (a FIFO named like a
// session in the sessions folder, arbor -p --session /dev/zero) is refused at
// once: opening a FIFO waited forever for a writer, in Open, Read, FirstLine
// and so in every arbor -p (which counts the folder's sessions) and -c.
func TestWhatIsNotAFileIsNoSession(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "2026-11-29T19-00-00-000Z_x.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(hdr+"\n"+user1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	within := func(what string, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still waits after 5s", what)
		}
		return nil
	}
	paths := []string{fifo, link, dir}
	if _, err := os.Stat("/dev/null"); err == nil {
		paths = append(paths, "/dev/null")
	}
	for _, p := range paths {
		if err := within("Open "+p, func() error { s, err := Open(p); closeIf(s); return err }); err == nil || !strings.Contains(err.Error(), "not a session file") {
			t.Errorf("Open %s: %v", p, err)
		}
		if err := within("Read "+p, func() error { _, err := Read(p); return err }); err == nil || !strings.Contains(err.Error(), "not a session file") {
			t.Errorf("Read %s: %v", p, err)
		}
		if err := within("FirstLine "+p, func() error { _, err := FirstLine(p); return err }); err == nil {
			t.Errorf("FirstLine %s: no error", p)
		}
	}
	var latest string
	if err := within("MostRecent", func() (err error) { latest, err = MostRecent(dir); return err }); err != nil || latest != good {
		t.Errorf("MostRecent: %q, %v; want %s", latest, err, good)
	}
	// A symlink to a session is still one.
	ok := filepath.Join(dir, "ok-link.jsonl")
	if err := os.Symlink(good, ok); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ok)
	if err != nil || s.Log.Len() != 1 {
		t.Fatalf("Open of a symlink to a session: %v", err)
	}
	s.Close()
}

func closeIf(s *Session) {
	if s != nil {
		s.Close()
	}
}
