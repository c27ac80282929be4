package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
)

// TestStoreFlagErrors: a bad --store or a database that does not answer is
// one line on stderr, and nothing is read from files instead.
func TestStoreFlagErrors(t *testing.T) {
	r := runArbor(t, "", "ls", "--store", "mysql://x/y")
	if r.code != 2 || strings.Count(r.err, "arbor:") != 1 || !strings.Contains(r.err, "postgres://") {
		t.Errorf("bad scheme: exit %d, %q", r.code, r.err)
	}
	down := "postgres:///nodb?host=" + t.TempDir() + "&user=arbor&connect_timeout=2"
	for _, args := range [][]string{{"ls", "--store", down}, {"search", "x", "--store", down}, {"tree", "abc", "--store", down}} {
		r := runArbor(t, "", args...)
		if r.code != 1 || strings.Count(strings.TrimSpace(r.err), "\n") != 0 || !strings.Contains(r.err, "store postgres:") {
			t.Errorf("%v on a server that is down: exit %d, %q", args, r.code, r.err)
		}
	}
	for _, args := range [][]string{{"rm", "x"}, {"fsck", "x"}, {"index"}} {
		r := runArbor(t, "", append(args, "--store", down)...)
		if r.code != 2 || !strings.Contains(r.err, "session files") {
			t.Errorf("%v with a database store: exit %d, %q", args, r.code, r.err)
		}
	}
	t.Setenv("ARBOR_STORE", "postgres://user:secret@[::1/x")
	r = runArbor(t, "", "ls")
	if r.code == 0 || strings.Contains(r.err, "secret") {
		t.Errorf("bad URL from ARBOR_STORE: exit %d, %q (the password must not be shown)", r.code, r.err)
	}
}

// TestStoreCommands runs the commands on a database: append creates a
// session, name, label, tree, ls and search see it; sync push copies files in
// and the database lists them as the file store does; sync pull writes them
// back as files.
func TestStoreCommands(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	t.Setenv("ARBOR_STORE", url)
	cwd, _ := os.Getwd()
	r := runArbor(t, "", "db", "migrate", "--json")
	if r.code != 0 || !strings.Contains(r.out, fmt.Sprintf(`"to":%d`, pgstore.SchemaVersion)) {
		t.Fatalf("db migrate: %d %s %s", r.code, r.out, r.err)
	}
	in := `{"role":"user","content":"fix the flaky lock test","timestamp":1700000000000}
{"role":"assistant","content":[{"type":"text","text":"the lock is released too early"}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1700000000001}
`
	r = runArbor(t, in, "append", "job-42")
	if r.code != 0 || strings.Count(r.out, "\n") != 2 {
		t.Fatalf("append: %d %q %q", r.code, r.out, r.err)
	}
	ids := strings.Fields(r.out)
	if r := runArbor(t, "", "name", "job-42", "Lock fix"); r.code != 0 {
		t.Fatalf("name: %s", r.err)
	}
	if r := runArbor(t, "", "label", "lock fix", ids[1], "answer"); r.code != 0 {
		t.Fatalf("label by name: %s", r.err)
	}
	r = runArbor(t, "", "ls", "--json")
	var infos []map[string]any
	if err := json.Unmarshal([]byte(r.out), &infos); err != nil || len(infos) != 1 || infos[0]["name"] != "Lock fix" || infos[0]["cwd"] != cwd {
		t.Fatalf("ls: %v %s %s", err, r.out, r.err)
	}
	r = runArbor(t, "", "search", `"released too"`, "--json")
	if r.code != 0 || !strings.Contains(r.out, ids[1]) {
		t.Errorf("search: %s %s", r.out, r.err)
	}
	r = runArbor(t, "", "tree", "job-42")
	if r.code != 0 || !strings.Contains(r.out, "answer") {
		t.Errorf("tree: %s %s", r.out, r.err)
	}
	r = runArbor(t, "", "fork", "job-42", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"parentSession":"job-42"`) {
		t.Errorf("fork: %s %s", r.out, r.err)
	}

	// Files in, and the same listing from both stores.
	dir := t.TempDir()
	for _, name := range []string{"v3-tree.jsonl", "gen-s1-0.jsonl"} {
		copyFile(t, filepath.Join("..", "..", "testdata", "pi", "sessions", name), dir)
	}
	r = runArbor(t, "", "sync", "push", "--session-dir", dir, "--json")
	if r.code != 0 || strings.Count(r.out, `"created":true`) != 2 {
		t.Fatalf("sync push: %d %s %s", r.code, r.out, r.err)
	}
	r = runArbor(t, "", "sync", "push", "--session-dir", dir, "--json")
	if r.code != 0 || strings.Contains(r.out, `"created":true`) || strings.Contains(r.out, `"added":1`) {
		t.Errorf("second sync push copied again: %s %s", r.out, r.err)
	}
	files := runArbor(t, "", "ls", "--json", "--store", "files", "--session-dir", dir)
	db := runArbor(t, "", "ls", "--json", "--all")
	var fi, di []map[string]any
	json.Unmarshal([]byte(files.out), &fi)
	json.Unmarshal([]byte(db.out), &di)
	byID := map[string]map[string]any{}
	for _, in := range di {
		delete(in, "path")
		byID[in["id"].(string)] = in
	}
	for _, in := range fi {
		delete(in, "path")
		b, _ := json.Marshal(in)
		d, _ := json.Marshal(byID[in["id"].(string)])
		if string(b) != string(d) {
			t.Errorf("listing differs:\nfiles    %s\npostgres %s", b, d)
		}
	}
	// And back out, into files pi finds.
	out := t.TempDir()
	r = runArbor(t, "", "sync", "pull", "--session-dir", out, "--json")
	if r.code != 0 || strings.Count(r.out, `"created":true`) != 4 {
		t.Fatalf("sync pull: %d %s %s", r.code, r.out, r.err)
	}
	for _, name := range []string{"v3-tree.jsonl", "gen-s1-0.jsonl"} {
		want, _ := os.ReadFile(filepath.Join(dir, name))
		found := false
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if got, _ := os.ReadFile(p); err == nil && !info.IsDir() && string(got) == string(want) {
				found = true
			}
			return nil
		})
		if !found {
			t.Errorf("%s did not come back byte for byte", name)
		}
	}
}

// TestPullPiOpens: a session written to the database by arbor (with a
// cursor, a label and a name) and pulled into a file is one pi reads as
// arbor reads the database's copy: the same context and tree.
func TestPullPiOpens(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	in := `{"role":"user","content":"why is the build red","timestamp":1700000000000}
{"role":"assistant","content":[{"type":"text","text":"a flaky lock test"}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1700000000001}
{"role":"user","content":"fix it","timestamp":1700000000002}
`
	r := runArbor(t, in, "append", "pulled-1", "--store", url)
	if r.code != 0 {
		t.Fatal(r.err)
	}
	ids := strings.Fields(r.out)
	for _, args := range [][]string{{"cursor", "new", "pulled-1", "side"}, {"branch", "pulled-1", ids[0]}, {"label", "pulled-1", ids[1], "cause"}, {"name", "pulled-1", "Red build"}} {
		if r := runArbor(t, "", append(args, "--store", url)...); r.code != 0 {
			t.Fatalf("%v: %s", args, r.err)
		}
	}
	ctx := runArbor(t, "", "context", "pulled-1", "--json", "--store", url)
	tree := runArbor(t, "", "tree", "pulled-1", "--json", "--store", url)
	if ctx.code != 0 || tree.code != 0 {
		t.Fatal(ctx.err, tree.err)
	}
	out := t.TempDir()
	if r := runArbor(t, "", "sync", "pull", "--session-dir", out, "--store", url); r.code != 0 {
		t.Fatal(r.err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*", "*_pulled-1.jsonl"))
	if len(files) != 1 {
		t.Fatalf("pulled files: %v", files)
	}
	// arbor reads the pulled file as it read the database.
	if got := runArbor(t, "", "context", files[0], "--json", "--store", "files").out; got != ctx.out {
		t.Errorf("the pulled file's context differs:\n%s\n%s", got, ctx.out)
	}
	script := piPeer(t)
	sameBytes(t, runPi(t, script, "context", files[0]), []byte(ctx.out))
	sameTree(t, runPi(t, script, "tree", files[0]), []byte(tree.out))
}
