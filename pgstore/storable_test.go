package pgstore_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/pgstore"
)

// TestNULInASession pushes sessions with a NUL character in each field: one
// the database keeps as bytes (message text, a label) round-trips exactly; one
// that is a text column (the session's id, an entry's id, type, timestamp) is
// refused with ErrUnstorable, naming the value, and nothing is stored.
func TestNULInASession(t *testing.T) {
	t.Setenv("ARBOR_DIR", t.TempDir())
	st, _ := open(t)
	const user = `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`
	cases := []struct {
		name, id, body string
		refused        bool
	}{
		{"text", "s-text", `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi\u0000there","timestamp":1}}`, false},
		{"label", "s-label", user + "\n" + `{"type":"label","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","targetId":"a1","label":"x\u0000y"}`, false},
		{"session id", `s\u0000id`, user, true},
		{"entry id", "s-entry", `{"type":"message","id":"a\u00001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1}}`, true},
		{"timestamp", "s-ts", `{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01\u0000","message":{"role":"user","content":"hi","timestamp":1}}`, true},
		{"type", "s-type", user + "\n" + `{"type":"custom\u0000","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","customType":"x"}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(`{"type":"session","version":3,"id":"` + c.id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/a\u0000b"}` + "\n" + c.body + "\n")
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := st.PushFile(p)
			if !c.refused {
				if err != nil {
					t.Fatal(err)
				}
				got, err := st.Export(r.ID)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("export = %q, %v; want the file", got, err)
				}
				return
			}
			if !errors.Is(err, pgstore.ErrUnstorable) {
				t.Fatalf("push = %v; want ErrUnstorable", err)
			}
			list, lerr := st.List(catalog.Scope{All: true}, catalog.ListOptions{})
			if lerr != nil {
				t.Fatal(lerr)
			}
			if r.ID == "" {
				t.Fatal("the refused push names no session")
			}
			for _, in := range list {
				if in.ID == r.ID {
					t.Fatalf("a refused session is listed: %+v", in)
				}
			}
		})
	}
}
