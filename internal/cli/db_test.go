package cli

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
)

// TestDBMigrateSays: 'db migrate' on a new database says it created the
// schema (and --json that it had none); on a migrated one, that there was
// nothing to do.
func TestDBMigrateSays(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	r := runArbor(t, "", "db", "migrate", "--store", url)
	want := fmt.Sprintf("created arbor's schema, version %d\n", pgstore.SchemaVersion)
	if r.code != 0 || !strings.HasSuffix(r.out, want) {
		t.Errorf("a new database: %d %q %q, want …%q", r.code, r.out, r.err, want)
	}
	r = runArbor(t, "", "db", "migrate", "--store", url)
	want = fmt.Sprintf("arbor's schema is at version %d, already up to date\n", pgstore.SchemaVersion)
	if r.code != 0 || !strings.HasSuffix(r.out, want) {
		t.Errorf("migrated: %d %q %q, want …%q", r.code, r.out, r.err, want)
	}
	r = runArbor(t, "", "db", "migrate", "--json", "--store", pgtest.Shared(t).NewDB(t))
	if want := fmt.Sprintf(`{"from":0,"to":%d}`, pgstore.SchemaVersion); r.code != 0 || strings.TrimSpace(r.out) != want {
		t.Errorf("a new database, --json: %q %q, want %s", r.out, r.err, want)
	}
}

// TestSyncPushSays: the summary of a push counts what it copied, and speaks
// of sessions already up to date only when there were some.
func TestSyncPushSays(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	dir := t.TempDir()
	for _, name := range []string{"v3-tree.jsonl", "gen-s1-0.jsonl"} {
		copyFile(t, filepath.Join("..", "..", "testdata", "pi", "sessions", name), dir)
	}
	for i, want := range []string{"pushed 2 sessions\n", "pushed nothing: 2 sessions already up to date\n"} {
		r := runArbor(t, "", "sync", "push", "--session-dir", dir, "--store", url)
		if r.code != 0 || !strings.HasSuffix(r.out, want) || strings.Contains(r.out, "others") {
			t.Errorf("push %d: %d %q %q, want …%q", i+1, r.code, r.out, r.err, want)
		}
	}
	r := runArbor(t, "", "sync", "push", "--session-dir", t.TempDir(), "--store", url)
	if r.code != 0 || r.out != "pushed nothing: no sessions in scope\n" {
		t.Errorf("push of an empty folder: %d %q %q", r.code, r.out, r.err)
	}
}

// TestStoreRefused: a database server that is not there is one line that
// names the address, says the connection was refused (once) and what to do,
// and does not show the password.
func TestStoreRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sock := t.TempDir()
	for _, c := range []struct{ url, addr string }{
		{"postgres://alice:AlicePw123@" + addr + "/sessions", addr},
		{"postgres:///sessions?host=" + sock + "&password=AlicePw123", filepath.Join(sock, ".s.PGSQL.5432")},
	} {
		r := runArbor(t, "", "ls", "--store", c.url)
		msg := strings.TrimSuffix(r.err, "\n")
		if r.code != 1 || strings.Contains(msg, "\n") || strings.Contains(msg, "AlicePw123") || strings.Count(msg, "refused") != 1 ||
			!strings.Contains(msg, "PostgreSQL at "+c.addr+" ") || !strings.Contains(msg, "start it, or correct the host and port") {
			t.Errorf("%s: exit %d, %q", c.url, r.code, r.err)
		}
	}
	r := runArbor(t, "", "ls", "--store", "host=db password=AlicePw123")
	if r.code != 2 || strings.Contains(r.err, "AlicePw123") {
		t.Errorf("a key=value connection string: exit %d, %q", r.code, r.err)
	}
}
