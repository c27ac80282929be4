package jsonl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

// FuzzOpenAppend feeds arbitrary bytes as a session file, opens it, appends,
// closes and reopens: no panic, the appended entry is there exactly once, the
// file needs no more repair, and every byte the file had is still on disk
// (in the file or a sidecar).
func FuzzOpenAppend(f *testing.F) {
	for _, seed := range []string{
		"", "\n\n", "  ", lines(hdr), lines(hdr, user1, asst1), lines(hdr, user1) + torn, lines(hdr, user1) + asst1,
		lines(user1, asst1), lines("garbage", user1), "\x00\x01\xff", lines(`{"a":1}`), lines(hdrV1, userV1),
		lines(hdrV2, user1, hookV2), lines(hdrV4, user1), lines(hdr, user1, asst1, dupUser), lines(hdr, hdr, user1),
		lines(hdr, "\r", user1), `{"type":"session","id":"x"}`, lines(hdr, `{"type":"message","id":"aaaaaaa1","parentId":"aaaaaaa1"}`),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, orig []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, WithCwd("/fuzz"), WithDurability(Never)) // fsync is not under test, and slows fuzzing 100×
		if errors.Is(err, ErrNotSession) {
			if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
				t.Fatal("a file refused as not a session changed")
			}
			if l, _ := Read(path); l == nil || l.Len() > 0 || !l.Report().NoHeader {
				t.Fatal("a file with session lines was refused")
			}
			return
		}
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		e, err := s.AppendMessage(assistant(t, "fuzz"))
		if cerr := s.Close(); cerr != nil {
			t.Fatalf("close: %v", cerr)
		}
		if errors.Is(err, session.ErrReadOnly) {
			if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
				t.Fatal("a read-only file changed")
			}
			return
		}
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		l, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Entry(e.ID); got == nil || !bytes.Equal(got.Raw(), e.Raw()) {
			t.Fatalf("the appended entry %s is missing after reopening", e.ID)
		}
		data, _ := os.ReadFile(path)
		if n := bytes.Count(data, e.Raw()); n != 1 {
			t.Fatalf("the appended entry is in the file %d times", n)
		}
		if r := l.Report(); r.NoHeader || r.TornTail || r.MissingNewline || r.Migrated {
			t.Fatalf("the file still needs repair after an append: %+v", r)
		}
		if !kept(t, orig, dir, path) {
			t.Fatalf("the original bytes are neither in the file nor in a sidecar")
		}
	})
}

// kept reports whether orig survives: as the start of the file (a torn last
// line ended by a newline in place), or as a sidecar.
func kept(t *testing.T, orig []byte, dir, path string) bool {
	main, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(main, orig) {
		return true
	}
	if bytes.HasPrefix(main, orig[:bytes.LastIndexByte(orig, '\n')+1]) && bytes.Contains(main, orig[bytes.LastIndexByte(orig, '\n')+1:]) {
		return true
	}
	ents, _ := os.ReadDir(dir)
	for _, ent := range ents {
		name := filepath.Join(dir, ent.Name())
		if name == path || strings.HasSuffix(name, ".lock") {
			continue
		}
		side, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(side, orig) {
			return true
		}
	}
	return false
}
