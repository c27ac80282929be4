// Package pgtest starts a throw-away PostgreSQL cluster for tests: initdb and
// pg_ctl in a temporary folder, listening only on a Unix socket there. When
// the process runs as root, the server runs as nobody (PostgreSQL refuses
// root). Without PostgreSQL installed, tests are skipped, except in CI
// (CI=true), where that is a failure.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running throw-away PostgreSQL.
type Cluster struct {
	dir, data, bin string
	cred           *syscall.Credential
	dbs            atomic.Int64
}

var (
	once    sync.Once
	shared  *Cluster
	initErr error
)

// Shared returns the cluster every test of the process shares, starting it
// the first time. It skips the test when PostgreSQL is not installed (fails
// in CI). Call Stop from TestMain.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	once.Do(func() { shared, initErr = Start() })
	if initErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL: %v", initErr)
		}
		t.Skipf("PostgreSQL not available (%v); CI installs Debian's postgresql", initErr)
	}
	return shared
}

// StopShared stops the shared cluster, if one was started.
func StopShared() {
	if shared != nil {
		shared.Stop()
	}
}

// binDir finds the folder of initdb and pg_ctl: on PATH, else the newest
// /usr/lib/postgresql/<version>/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("initdb not found on PATH or under /usr/lib/postgresql")
}

func versionOf(dir string) int {
	var v int
	fmt.Sscanf(filepath.Base(filepath.Dir(dir)), "%d", &v)
	return v
}

// Start creates and starts a new cluster.
func Start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// A short folder: a socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("/tmp", "arborpg")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, data: filepath.Join(dir, "data"), bin: bin}
	if os.Geteuid() == 0 {
		c.cred = &syscall.Credential{Uid: 65534, Gid: 65534} // nobody
		if err := os.Chown(dir, 65534, 65534); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if out, err := c.run("initdb", "-D", c.data, "-U", "arbor", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLines(out))
	}
	if err := c.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

func lastLines(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// Start starts the (stopped) server and waits until it accepts connections.
func (c *Cluster) Start() error {
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c max_connections=300 -c shared_buffers=32MB", c.dir)
	out, err := c.run("pg_ctl", "-D", c.data, "-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, lastLines(out), lastLines(log))
	}
	return nil
}

// Kill stops the server at once, as a crash would (no shutdown checkpoint).
func (c *Cluster) Kill() error {
	out, err := c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, lastLines(out))
	}
	return nil
}

// Stop stops the server and deletes its folder.
func (c *Cluster) Stop() {
	c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	os.RemoveAll(c.dir)
}

// URL returns the URL of database db.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=arbor", db, c.dir)
}

// NewDB creates an empty database for one test and returns its URL.
func (c *Cluster) NewDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), c.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return c.URL(name)
}

// Required reports whether PostgreSQL must be there (in CI).
func Required() bool { return os.Getenv("CI") == "true" }

// Dir returns the folder of the cluster's Unix socket.
func (c *Cluster) Dir() string { return c.dir }
