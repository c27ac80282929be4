package pgstore_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/store"
)

const password = "AlicePw123"

// TestRedact: every form of connection string a user gives is shown with its
// password masked and the rest as written, including passwords that break
// the URL's syntax (which a parser would put in the host or the path).
func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://alice:AlicePw123@db.internal:5432/sessions", "postgres://alice:xxxxx@db.internal:5432/sessions"},
		{"postgresql://alice:AlicePw123@db/s?sslmode=require&application_name=a/b", "postgresql://alice:xxxxx@db/s?sslmode=require&application_name=a/b"},
		{"postgres://alice@db/s?sslmode=disable&password=AlicePw123&connect_timeout=2", "postgres://alice@db/s?sslmode=disable&password=xxxxx&connect_timeout=2"},
		{"postgres:///s?host=/tmp/x&user=arbor", "postgres:///s?host=/tmp/x&user=arbor"},
		{"postgres://alice@db/s", "postgres://alice@db/s"},
		{"postgres://alice:p@ssAlicePw123@db/s", "postgres://alice:xxxxx@db/s"},
		{"postgres://alice:Al/AlicePw123@db/s", "postgres://alice:xxxxx@db/s"},
		{"postgres://alice:12/AlicePw123@db/s", "postgres://alice:xxxxx@db/s"},
		{"postgres://alice:12?AlicePw123@db/s", "postgres://alice:xxxxx@db/s"},
		{"postgres://alice:AlicePw123@[::1/x", "postgres://alice:xxxxx@[::1/x"},
		{"host=db user=alice password=AlicePw123 dbname=s", "host=db user=alice password=xxxxx dbname=s"},
		{"host=db password = 'Alice AlicePw123 \\' x' dbname=s", "host=db password = xxxxx dbname=s"},
		{"host=db sslpassword=AlicePw123", "host=db sslpassword=xxxxx"},
	} {
		got := pgstore.Redact(c.in)
		if got != c.want || strings.Contains(got, password) {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWriterRecordHasNoPassword: a writer started with the password on its
// command line (--store postgres://alice:…@…) records its program, pid, host
// and user in arbor_writers, which every role reads, and a second writer's
// refusal names them; neither holds the password. A record left by an older
// arbor with its command line is shown as its program alone.
func TestWriterRecordHasNoPassword(t *testing.T) {
	st, url := open(t)
	id := oneMessage(t, st, "held")
	pwURL := strings.Replace(url, "postgres:///", "postgres://arbor:"+password+"@/", 1)
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--store", pwURL, "--dsn", "host=db password="+password)
	cmd.Env = append(os.Environ(), "ARBOR_PG_CHILD_URL="+pwURL, "ARBOR_PG_CHILD_SESSION="+id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !bufio.NewScanner(out).Scan() {
		t.Fatal("the child writer acknowledged nothing")
	}

	other, err := pgstore.Open(pwURL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	me, _ := user.Current()
	prog := filepath.Base(os.Args[0])
	_, err = other.Open(id, store.Options{})
	var le *pgstore.LockError
	if !errors.As(err, &le) {
		t.Fatalf("a second writer: %v, want a LockError", err)
	}
	msg := err.Error()
	for _, want := range []string{"pid " + strconv.Itoa(cmd.Process.Pid), `"` + prog + `"`, `user "` + me.Username + `"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not name %s", msg, want)
		}
	}
	if strings.Contains(msg, password) {
		t.Errorf("refusal shows the password: %s", msg)
	}

	c := connect(t, url)
	defer c.Close(context.Background())
	var row string
	if err := c.QueryRow(context.Background(), `SELECT row_to_json(w)::text FROM arbor_writers w WHERE session_id = $1`, id).Scan(&row); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row, password) || !strings.Contains(row, `"command":"`+prog+`"`) || !strings.Contains(row, `"os_user":"`+me.Username+`"`) {
		t.Errorf("writer record %s: want the program and the user, no password", row)
	}

	// An arbor from before the fix records its command line.
	execSQL(t, url, `UPDATE arbor_writers SET command = '/usr/bin/arbor chat --store postgres://alice:`+password+`@db/s'`)
	_, err = other.Open(id, store.Options{})
	if !errors.As(err, &le) || strings.Contains(err.Error(), password) || !strings.Contains(err.Error(), `by "arbor"`) {
		t.Errorf("refusal by an older arbor's record: %v", err)
	}
}

// TestMigrationCutsCommandLines: schema 2 cuts the command lines that
// writers recorded under schema 1 to their program.
func TestMigrationCutsCommandLines(t *testing.T) {
	_, url := open(t)
	execSQL(t, url, `ALTER TABLE arbor_writers DROP COLUMN os_user`,
		`UPDATE arbor_schema SET version = 1`,
		`INSERT INTO arbor_writers VALUES ('s1', 1, 2, 'h', '/usr/local/bin/arbor chat --store postgres://alice:`+password+`@db/s', 'now')`,
		`INSERT INTO arbor_writers VALUES ('s2', 3, 4, 'h', '  arbor', 'now')`)
	st, err := pgstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	c := connect(t, url)
	defer c.Close(context.Background())
	rows, err := c.Query(context.Background(), `SELECT command FROM arbor_writers ORDER BY session_id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		got = append(got, s)
	}
	if strings.Join(got, ",") != "arbor,arbor" {
		t.Errorf("commands after migrating: %q", got)
	}
}

// TestConnectRefused: a server that is not there is one ConnectError naming
// the address tried and the refusal once, without the password, over TCP
// (where the driver tries twice, with TLS and without) and a Unix socket.
func TestConnectRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sock := t.TempDir()
	for _, c := range []struct{ url, addr string }{
		{"postgres://alice:" + password + "@" + addr + "/db", addr},
		{"postgres://alice:" + password + "@" + addr + "/db?sslmode=require", addr},
		{"postgres:///db?host=" + sock + "&password=" + password, filepath.Join(sock, ".s.PGSQL.5432")},
		{"host=" + sock + " password=" + password, filepath.Join(sock, ".s.PGSQL.5432")},
	} {
		_, err := pgstore.Open(c.url)
		var ce *pgstore.ConnectError
		if !errors.As(err, &ce) || !errors.Is(err, pgstore.ErrRefused) || ce.Addr != c.addr {
			t.Errorf("%s: %v, want a refusal at %s", c.url, err, c.addr)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, password) || strings.Count(msg, "refused") != 1 || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q, want the refusal once on one line, no password", c.url, msg)
		}
	}
}

// TestUnescapedPassword: a password holding '/' unescaped, which the driver
// would take for part of the database's name (and echo in its errors), is
// refused before connecting, without showing any part of it.
func TestUnescapedPassword(t *testing.T) {
	_, err := pgstore.Open("postgres://alice:12/" + password + "@127.0.0.1:1/db")
	if !errors.Is(err, pgstore.ErrUnescaped) || strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "12/") {
		t.Errorf("got %v", err)
	}
}
