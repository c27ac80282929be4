package cli

import (
	"encoding/json"
	"fmt"
	"github.com/arborlog/arbor/internal/termtext"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// catalogHome isolates $ARBOR_DIR and pi's folder for one test.
func catalogHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("ARBOR_DIR", home)
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, "pi"))
	return home
}

// listFolder copies the committed pi listing folder into a temporary one.
func listFolder(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "pi", "list", name)
	files, _ := filepath.Glob(filepath.Join(src, "*.jsonl"))
	if len(files) == 0 {
		t.Skipf("no pi listing folder %s", src)
	}
	dir := t.TempDir()
	for _, f := range files {
		copyFile(t, f, dir)
	}
	return dir
}

// TestLsJSONEqualsPi compares `arbor ls --json --empty` with pi 1.6.0's
// listAll(dir) on the committed folders (pi lists empty sessions too, hence
// --empty): those of the 0.73.1 corpus and the sessions pi 1.6.0 wrote.
func TestLsJSONEqualsPi(t *testing.T) {
	catalogHome(t)
	root := filepath.Join("..", "..", "testdata")
	for _, f := range [][3]string{
		{"basic", filepath.Join(root, "pi", "list", "basic"), filepath.Join(root, "pi", "expected16", "list-basic.json")},
		{"damaged", filepath.Join(root, "pi", "list", "damaged"), filepath.Join(root, "pi", "expected16", "list-damaged.json")},
		{"gen16", filepath.Join(root, "pi16", "list", "gen16"), filepath.Join(root, "pi16", "expected", "list-gen16.json")},
	} {
		name, dir := f[0], f[1]
		b, err := os.ReadFile(f[2])
		if err != nil {
			t.Skipf("no pi expectations: %v", err)
		}
		var want []map[string]any
		json.Unmarshal(b, &want)
		r := runArbor(t, "", "ls", "--session-dir", dir, "--json", "--empty")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		// Byte for byte, once arbor's two extra fields are taken out.
		bare := regexp.MustCompile(`,"entryCount":\d+,"sizeBytes":\d+`).ReplaceAllString(r.out, "")
		bare = strings.ReplaceAll(bare, `"path":"../../`, `"path":"`)
		if strings.TrimSpace(bare) != strings.TrimSpace(string(b)) {
			t.Errorf("%s: arbor ls --json is not byte-identical to pi's list (apart from entryCount and sizeBytes)", name)
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			delete(m, "entryCount")
			delete(m, "sizeBytes")
			m["path"] = strings.TrimPrefix(m["path"].(string), "../../")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: arbor ls --json differs from pi's list (-pi +arbor):\n%s", name, diff)
		}
	}
}

func TestLsHidesEmptyAndShowsNames(t *testing.T) {
	catalogHome(t)
	dir := listFolder(t, "damaged")
	r := runArbor(t, "", "ls", "--session-dir", dir)
	if r.code != 0 || strings.Contains(r.out, "(no messages)") {
		t.Errorf("ls shows an empty session or failed (%d): %s%s", r.code, r.out, r.err)
	}
	r = runArbor(t, "", "ls", "--session-dir", dir, "--empty")
	if !strings.Contains(r.out, "(no messages)") {
		t.Errorf("ls --empty does not show the header-only session:\n%s", r.out)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if termtext.Width(line) > 100 {
			t.Errorf("line wider than the 100 columns of a non-terminal: %q", line)
		}
	}
	if r := runArbor(t, "", "ls", "--all", "--session-dir", dir); r.code != 2 {
		t.Errorf("--all with --session-dir: exit %d, want 2", r.code)
	}
}

func TestLookupErrors(t *testing.T) {
	catalogHome(t)
	dir := listFolder(t, "basic")
	// pi's generated sessions share their first 8 id characters (UUID v7).
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	last := filepath.Base(files[len(files)-1])
	prefix := last[strings.IndexByte(last, '_')+1:][:8]
	shared := 0
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "_"+prefix) {
			shared++
		}
	}
	if shared < 2 {
		t.Fatalf("the corpus has no shared id prefix (%s)", prefix)
	}
	r := runArbor(t, "", "info", "--session-dir", dir, prefix)
	if r.code != 1 || !strings.Contains(r.err, fmt.Sprintf("matches %d sessions", shared)) || strings.Count(r.err, "\n") != 1 {
		t.Errorf("ambiguous prefix: exit %d, stderr %q", r.code, r.err)
	}
	r = runArbor(t, "", "info", "--session-dir", dir, "tree shapes", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"id":"0194a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b"`) {
		t.Errorf("lookup by name: exit %d %s %s", r.code, r.out, r.err)
	}
	r = runArbor(t, "", "info", "--session-dir", dir, "0194c1a2")
	if r.code != 0 {
		t.Errorf("lookup by prefix: exit %d %s", r.code, r.err)
	}
	r = runArbor(t, "", "info", "--session-dir", dir, "no-such-session")
	if r.code != 1 || !strings.Contains(r.err, `"no-such-session" is not a path, session id, id prefix or name`) {
		t.Errorf("unknown: exit %d, stderr %q", r.code, r.err)
	}
}

func TestLifecycleCommands(t *testing.T) {
	home := catalogHome(t)
	dir := listFolder(t, "basic")
	id := "0194c1a2-7b3c-7d4e-8f50-617283940a1b"
	path := filepath.Join(dir, "2026-02-02T11-00-00-000Z_"+id+".jsonl")
	orig, _ := os.ReadFile(path)

	if r := runArbor(t, "", "rename", "--session-dir", dir, id, "  edge cases  "); r.code != 0 {
		t.Fatalf("rename: %d %s", r.code, r.err)
	}
	renamed, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(renamed), string(orig)) || !strings.Contains(string(renamed[len(orig):]), `"type":"session_info"`) ||
		!strings.Contains(string(renamed[len(orig):]), `"name":"edge cases"`) {
		t.Fatalf("rename did not append one session_info entry: %q", renamed[len(orig):])
	}
	if r := runArbor(t, "", "ls", "--session-dir", dir, "--json"); !strings.Contains(r.out, `"name":"edge cases"`) {
		t.Errorf("ls does not show the new name")
	}

	if r := runArbor(t, "", "rm", "--session-dir", dir, "edge cases"); r.code != 0 {
		t.Fatalf("rm: %d %s", r.code, r.err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("rm left the file in place")
	}
	if r := runArbor(t, "", "ls", "--session-dir", dir, "--json"); strings.Contains(r.out, id) {
		t.Error("ls still lists a removed session")
	}
	if r := runArbor(t, "", "restore", "--list"); !strings.Contains(r.out, path) {
		t.Errorf("restore --list: %s", r.out)
	}
	if r := runArbor(t, "", "restore", "edge cases"); r.code != 0 {
		t.Fatalf("restore: %d %s", r.code, r.err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(renamed) {
		t.Fatal("restore did not bring back the same bytes")
	}
	if r := runArbor(t, "", "restore", "edge cases"); r.code != 1 {
		t.Errorf("restoring twice: exit %d", r.code)
	}

	if r := runArbor(t, "", "archive", "--session-dir", dir, id); r.code != 0 {
		t.Fatalf("archive: %d %s", r.code, r.err)
	}
	if r := runArbor(t, "", "ls", "--session-dir", dir, "--json"); strings.Contains(r.out, id) {
		t.Error("ls lists an archived session")
	}
	if r := runArbor(t, "", "ls", "--session-dir", dir, "--json", "--archived"); !strings.Contains(r.out, `"archived":true`) {
		t.Error("ls --archived does not show it")
	}
	if r := runArbor(t, "", "unarchive", "--session-dir", dir, id); r.code != 0 {
		t.Fatalf("unarchive: %d %s", r.code, r.err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(renamed) {
		t.Fatal("archive/unarchive changed the session file")
	}

	if r := runArbor(t, "", "rm", "--purge", "--session-dir", dir, id); r.code != 0 {
		t.Fatalf("rm --purge: %d %s", r.code, r.err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("rm --purge left the file")
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "trash")); len(entries) != 0 {
		t.Errorf("rm --purge used the trash: %v", entries)
	}

	// A session already in the trash is purged from there.
	other := "0194a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b"
	if r := runArbor(t, "", "rm", "--session-dir", dir, other); r.code != 0 {
		t.Fatalf("rm: %d %s", r.code, r.err)
	}
	if r := runArbor(t, "", "rm", "--purge", "--session-dir", dir, other); r.code != 0 || !strings.Contains(r.out, "from the trash") {
		t.Fatalf("rm --purge of a trashed session: %d %s %s", r.code, r.out, r.err)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "trash")); len(entries) != 0 {
		t.Errorf("the trash still holds %v", entries)
	}
	if r := runArbor(t, "", "restore", other); r.code != 1 {
		t.Errorf("restore after purge: exit %d", r.code)
	}
}

func TestSearchAndLatestCommands(t *testing.T) {
	catalogHome(t)
	dir := listFolder(t, "basic")
	r := runArbor(t, "", "search", "--session-dir", dir, "--json", "screenshot")
	var hits []map[string]string
	if err := json.Unmarshal([]byte(r.out), &hits); err != nil || r.code != 0 {
		t.Fatalf("search --json: %v %d %s", err, r.code, r.err)
	}
	if len(hits) == 0 {
		t.Fatal("no hit for a word of the first message")
	}
	for _, h := range hits {
		for _, k := range []string{"path", "sessionId", "entryId", "role", "timestamp", "snippet"} {
			if h[k] == "" {
				t.Errorf("hit without %s: %v", k, h)
			}
		}
		if !strings.Contains(strings.ToLower(h["snippet"]), "screenshot") {
			t.Errorf("snippet %q does not show the match", h["snippet"])
		}
	}
	if r := runArbor(t, "", "search", "--session-dir", dir, "&&"); r.code != 2 {
		t.Errorf("a query without words: exit %d, want 2", r.code)
	}
	if r := runArbor(t, "", "search", "--session-dir", dir, "re:("); r.code != 2 {
		t.Errorf("a bad regular expression: exit %d, want 2", r.code)
	}
	r = runArbor(t, "", "latest", "--session-dir", dir)
	if r.code != 0 || !strings.HasSuffix(strings.TrimSpace(r.out), ".jsonl") {
		t.Errorf("latest: %d %q %s", r.code, r.out, r.err)
	}
}

// TestRmRefusesWhatIsNotASession: rm and rm --purge on a plain file, a JSONL
// log or a symlink fail with one line naming it, and touch nothing; writes
// to a file that is not a session are refused the same way.
func TestRmRefusesWhatIsNotASession(t *testing.T) {
	catalogHome(t)
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o600)
	log := filepath.Join(dir, "app.jsonl")
	os.WriteFile(log, []byte(`{"level":"info"}`+"\n"), 0o600)
	for _, p := range []string{notes, log} {
		for _, args := range [][]string{{"rm", p}, {"rm", "--purge", p}} {
			r := runArbor(t, "", args...)
			if r.code != 1 || !strings.Contains(r.err, p) || strings.Count(r.err, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want exit 1 and one line naming the file", args, r.code, r.err)
			}
		}
	}
	for _, args := range [][]string{
		{"name", log, "x"}, {"label", log, "aaaaaaa1", "x"}, {"branch", log, "aaaaaaa1"}, {"compact", log}, {"fork", log},
	} {
		r := runArbor(t, `{"role":"user","content":"x"}`+"\n", args...)
		if r.code != 1 || !strings.Contains(r.err, log) || !strings.Contains(r.err, "not a session") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 saying %s is not a session", args, r.code, r.err, log)
		}
	}
	r := runArbor(t, `{"role":"user","content":"x"}`+"\n", "append", log)
	if r.code != 1 || !strings.Contains(r.err, log) || !strings.Contains(r.err, "fsck") {
		t.Errorf("append: exit %d, stderr %q; want exit 1 naming the file and fsck", r.code, r.err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Errorf("notes.txt changed")
	}
	if b, _ := os.ReadFile(log); string(b) != `{"level":"info"}`+"\n" {
		t.Errorf("app.jsonl changed: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files beside them: %d, want 2", len(ents))
	}
}

// TestRmHintRestores: the command rm prints to bring a session back, pasted
// into sh, restores that session, whatever its id: an id "--purge" is not
// read as the flag that would delete it for good, and quotes and spaces in an
// id stay in it.
func TestRmHintRestores(t *testing.T) {
	for _, id := range []string{"--purge", "it's a 'b' $(x)"} {
		t.Run(id, func(t *testing.T) {
			catalogHome(t)
			f := filepath.Join(t.TempDir(), "s.jsonl")
			head, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"})
			data := string(head) + "\n" + `{"type":"message","id":"aaaaaaa1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}` + "\n"
			if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			r := runArbor(t, "", "rm", f)
			_, hint, ok := strings.Cut(strings.TrimSpace(r.out), "to bring it back: ")
			if r.code != 0 || !ok {
				t.Fatalf("rm: exit %d\n%s%s", r.code, r.out, r.err)
			}
			// sh reads the hint; a function in arbor's place hands back the words.
			out, err := exec.Command("/bin/sh", "-c", `arbor() { for a; do printf '%s\0' "$a"; done; }; `+hint).Output()
			if err != nil {
				t.Fatalf("sh -c %q: %v", hint, err)
			}
			args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if r := runArbor(t, "", args...); r.code != 0 {
				t.Fatalf("%s: exit %d\n%s%s", hint, r.code, r.out, r.err)
			}
			if got, err := os.ReadFile(f); err != nil || string(got) != data {
				t.Errorf("%s did not bring %s back as it was: %v", hint, f, err)
			}
		})
	}
}
