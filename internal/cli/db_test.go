package cli

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

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
