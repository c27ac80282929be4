package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// TestWriteTwiceChangesNothing: a second import of the same source leaves the
// file byte for byte as the first wrote it.
func TestWriteTwiceChangesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, f := range fixtures(t) {
		s := mustRead(t, f)
		w1, err := Write(s, dir)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(w1.Path)
		if !w1.Created || w1.Added != len(s.Lines) || w1.Pending != s.Torn {
			t.Fatalf("%s: first import %+v", f, w1)
		}
		w2, err := Write(mustRead(t, f), dir)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(w2.Path)
		if w2.Created || w2.Added != 0 || w2.Existing != w1.Added || w2.Path != w1.Path || !bytes.Equal(before, after) {
			t.Errorf("%s: second import %+v changed the file", f, w2)
		}
	}
}

// TestWriteBringsAGrownSourceUpToDate: a source imported while it was shorter
// and again once it grew ends with the entries and context of a fresh import,
// by appending only; what was there is untouched.
func TestWriteBringsAGrownSourceUpToDate(t *testing.T) {
	for _, f := range fixtures(t) {
		data, _ := os.ReadFile(f)
		ls := bytes.SplitAfter(data, []byte("\n"))
		if len(ls) < 4 {
			continue
		}
		t.Run(f, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, filepath.Base(f))
			format := mustRead(t, f).Header.From.Format
			out := filepath.Join(tmp, "out")
			var first []byte
			for _, cut := range []int{len(ls) / 3, 2 * len(ls) / 3, len(ls)} {
				if err := os.WriteFile(src, bytes.Join(ls[:cut], nil), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := Read(Format(format), Input{Path: src, Data: bytes.Join(ls[:cut], nil)})
				if err != nil {
					t.Fatal(err)
				}
				// The session's time comes from the source; a short prefix may not have it yet.
				if first == nil {
					s.Header.Timestamp = mustRead(t, f).Header.Timestamp
				}
				w, err := Write(s, out)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(w.Path)
				if first != nil && !bytes.HasPrefix(got, first) {
					t.Fatalf("the update rewrote what was there")
				}
				first = got
			}
			fresh, err := Read(Format(format), Input{Path: src, Data: data})
			if err != nil {
				t.Fatal(err)
			}
			fw, err := Write(fresh, filepath.Join(tmp, "fresh"))
			if err != nil {
				t.Fatal(err)
			}
			freshData, _ := os.ReadFile(fw.Path)
			got := session.Load(first)
			checkGrown(t, f, first, freshData)
			if !got.Report().Clean() {
				t.Errorf("the updated file has damage: %+v", got.Report())
			}
			checkToolResults(t, f, got)
		})
	}
}

// checkGrown checks that a session imported in steps (updated) holds every
// entry of a fresh import of the whole source (fresh), and what it holds more
// are continuations of them; the two hold the same prompts, texts, calls,
// results and summaries, in order.
func checkGrown(t *testing.T, name string, updated, fresh []byte) {
	t.Helper()
	got, want := session.Load(updated), session.Load(fresh)
	ids := map[string]bool{}
	for _, e := range want.Entries() {
		ids[e.ID] = true
	}
	for _, e := range got.Entries() {
		var o struct {
			Origin struct {
				Continues string `json:"continues"`
			} `json:"origin"`
		}
		_ = json.Unmarshal(e.Raw(), &o)
		if c := o.Origin.Continues; !ids[e.ID] && (c == "" || !ids[c]) {
			t.Errorf("%s: entry %s of the updated import is no entry of a fresh one: %.200s", name, e.ID, e.Raw())
		}
	}
	for id := range ids {
		if got.Entry(id) == nil {
			t.Errorf("%s: entry %s of a fresh import is not in the updated one", name, id)
		}
	}
	checkItems(t, name, importItems(t, fresh), importItems(t, updated))
}

// TestWriteRefusesAForeignFile: a file of the import's name that is another
// session is never appended to: one that is no import of this source leaves
// the import to a file of its own; one that says it is, under another id,
// fails the import.
func TestWriteRefusesAForeignFile(t *testing.T) {
	dir := t.TempDir()
	s := mustRead(t, "testdata/claude/compact-preserved/s2.jsonl")
	w, err := Write(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	other := []byte(`{"type":"session","version":3,"id":"someone-else","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}` + "\n")
	if err := os.WriteFile(w.Path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	w2, err := Write(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustFile(t, w.Path), other) || w2.Path == w.Path || !w2.Created || w2.Conflict == nil || w2.Conflict.Path != w.Path {
		t.Fatalf("import beside another session's file: %+v", w2)
	}

	forged, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": "someone-else", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x", "importedFrom": s.Header.From})
	if err := os.WriteFile(w2.Path, append(forged, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(s, dir); err == nil || !strings.Contains(err.Error(), "someone-else") {
		t.Fatalf("appended to a file with another session id: %v", err)
	}
	if !bytes.Equal(mustFile(t, w2.Path), append(forged, '\n')) {
		t.Error("the file with another session id changed")
	}
}

// TestWriteWaitsForNoWriter: while an agent has the imported session open,
// bringing it up to date fails, naming the lock, and changes nothing.
func TestWriteWaitsForNoWriter(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile("testdata/claude/compact-preserved/s2.jsonl")
	lines := bytes.SplitAfter(data, []byte("\n"))
	src := filepath.Join(dir, "s2.jsonl")
	short, err := Read(Claude, Input{Path: src, Data: bytes.Join(lines[:6], nil)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Write(short, filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := jsonl.Open(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	before, _ := os.ReadFile(w.Path)
	full, _ := Read(Claude, Input{Path: src, Data: data})
	var le *jsonl.LockError
	if _, err := Write(full, filepath.Join(dir, "out")); !errors.As(err, &le) {
		t.Fatalf("import into a file a writer holds: %v", err)
	}
	if after, _ := os.ReadFile(w.Path); !bytes.Equal(before, after) {
		t.Error("the held file changed")
	}
}

// sameIDSources are two source files of one format claiming one session id,
// with overlapping source ids and different text: a copy edited, or a forged id.
var sameIDSources = []struct {
	format Format
	name   string
	file   func(text string) string
	more   string // a turn the source goes on with
}{
	{Claude, "same-id.jsonl", func(text string) string {
		env := `"sessionId":"0b5c1e9e-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:00.000Z"`
		return `{"parentUuid":null,` + env + `,"type":"user","message":{"role":"user","content":"question ` + text + `"},"uuid":"u1"}` + "\n" +
			`{"parentUuid":"u1",` + env + `,"type":"assistant","requestId":"r1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"answer ` + text + `"}],"stop_reason":"end_turn"},"uuid":"a1"}` + "\n"
	}, `{"parentUuid":"a1","sessionId":"0b5c1e9e-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:01:00.000Z","type":"user","message":{"role":"user","content":"one more question"},"uuid":"u2"}` + "\n"},
	{Codex, "rollout-2026-05-01T10-00-00-same.jsonl", func(text string) string {
		return `{"timestamp":"2026-05-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0b5c1e9e-1111-4222-8333-944445555666","cwd":"/work/app","originator":"codex_cli_rs","cli_version":"0.46.0","source":"cli","model_provider":"openai"}}` + "\n" +
			`{"timestamp":"2026-05-01T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"question ` + text + `"}]}}` + "\n" +
			`{"timestamp":"2026-05-01T10:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"answer ` + text + `"}]}}` + "\n" +
			`{"timestamp":"2026-05-01T10:00:02.000Z","type":"event_msg","payload":{"type":"task_complete"}}` + "\n"
	}, `{"timestamp":"2026-05-01T10:01:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one more question"}]}}` + "\n"},
}

// TestWriteTwoFilesOneID: two source files claiming one session id become two
// sessions, each with its own text; the second's result names the first, none
// of its entries counts as already there, and importing either again changes
// nothing.
func TestWriteTwoFilesOneID(t *testing.T) {
	for _, src := range sameIDSources {
		t.Run(string(src.format), func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "out")
			paths := []string{filepath.Join(tmp, "a", src.name), filepath.Join(tmp, "b", src.name)}
			texts := []string{"alpha", "bravo"}
			for i, p := range paths {
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src.file(texts[i])), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var ws []Written
			for _, p := range paths {
				s, err := ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				w, err := Write(s, out)
				if err != nil {
					t.Fatalf("import %s: %v", p, err)
				}
				if !w.Created || w.Existing != 0 || w.Added != len(s.Lines) || w.Added == 0 {
					t.Errorf("import %s: %+v, want a new file with all %d entries", p, w, len(s.Lines))
				}
				ws = append(ws, w)
			}
			if ws[0].Path == ws[1].Path {
				t.Fatalf("both files were imported into %s", ws[0].Path)
			}
			if ws[0].Conflict != nil {
				t.Errorf("the first import reports a conflict: %+v", ws[0].Conflict)
			}
			if c := ws[1].Conflict; c == nil || c.Source != paths[0] || c.Path != ws[0].Path || c.ID != "0b5c1e9e-1111-4222-8333-944445555666" {
				t.Errorf("the second import's conflict is %+v, want the first file and its import", c)
			}
			for i, w := range ws {
				data, _ := os.ReadFile(w.Path)
				other := texts[1-i]
				if !bytes.Contains(data, []byte("question "+texts[i])) || !bytes.Contains(data, []byte("answer "+texts[i])) || bytes.Contains(data, []byte(other)) {
					t.Errorf("%s does not hold exactly the text of %s:\n%s", w.Path, paths[i], data)
				}
				l := session.Load(data)
				if l.Header().ID == "" || !l.Report().Clean() {
					t.Errorf("%s: header %+v, report %+v", w.Path, l.Header(), l.Report())
				}
				if !bytes.Contains(data, []byte(`"path":"`+paths[i]+`"`)) || !bytes.Contains(data, []byte(`"id":"0b5c1e9e-1111-4222-8333-944445555666"`)) {
					t.Errorf("%s does not record its source file and claimed id:\n%.400s", w.Path, data)
				}
			}
			if session.Load(mustFile(t, ws[0].Path)).Header().ID == session.Load(mustFile(t, ws[1].Path)).Header().ID {
				t.Error("the two imports have one session id")
			}
			// Again, in either order: nothing changes, nothing is created.
			for _, i := range []int{1, 0, 1} {
				before := mustFile(t, ws[i].Path)
				s, err := ReadFile(paths[i])
				if err != nil {
					t.Fatal(err)
				}
				w, err := Write(s, out)
				if err != nil {
					t.Fatal(err)
				}
				if w.Path != ws[i].Path || w.Created || w.Added != 0 || w.Existing != ws[i].Added || !bytes.Equal(before, mustFile(t, w.Path)) {
					t.Errorf("re-import of %s: %+v changed something", paths[i], w)
				}
				if got := Find(s, out); got != ws[i].Path {
					t.Errorf("Find(%s) = %s, want %s", paths[i], got, ws[i].Path)
				}
			}
			// Each file grown goes on in its own session.
			for i, p := range paths {
				before := mustFile(t, ws[i].Path)
				if err := os.WriteFile(p, []byte(src.file(texts[i])+src.more), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				w, err := Write(s, out)
				if err != nil {
					t.Fatal(err)
				}
				after := mustFile(t, w.Path)
				if w.Path != ws[i].Path || w.Added != 1 || w.Conflict != nil || !bytes.HasPrefix(after, before) || !bytes.Contains(after[len(before):], []byte("one more question")) {
					t.Errorf("import of %s grown: %+v", p, w)
				}
			}
			if m, _ := filepath.Glob(filepath.Join(out, "*.jsonl")); len(m) != 2 {
				t.Errorf("%d files in the output, want 2: %v", len(m), m)
			}
		})
	}
}

func mustFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
