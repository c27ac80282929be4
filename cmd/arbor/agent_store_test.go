package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath)) // the arbor the tests built
	}
	os.Exit(code)
}

// TestAgentInDatabase: with --store (here $ARBOR_STORE) naming PostgreSQL the
// agent writes its sessions there, and -c and --fork find them there; no
// session file is written.
func TestAgentInDatabase(t *testing.T) {
	url := pgtest.Shared(t).NewDB(t)
	w := newWorld(t)
	w.env = append(w.env, "ARBOR_STORE="+url, "CI="+os.Getenv("CI"))
	s := agenttest.New(t, "openai", agenttest.Reply{Text: "A1"}, agenttest.Reply{Text: "A2"}, agenttest.Reply{Text: "F1"})
	r := w.run("", with(s, "-p", "Q1")...)
	if r.code != 0 || r.stdout != "A1\n" {
		t.Fatalf("first run: %d %q %q", r.code, r.stdout, r.stderr)
	}
	id := regexp.MustCompile(`session: ([0-9a-f-]{36})`).FindStringSubmatch(r.stderr)
	if id == nil {
		t.Fatalf("no session id on stderr: %q", r.stderr)
	}
	if got := w.sessions(); len(got) != 0 {
		t.Fatalf("session files written with a database store: %v", got)
	}
	r = w.run("", with(s, "-c", "-p", "Q2")...)
	if r.code != 0 || !strings.Contains(r.stderr, "session: "+id[1]) {
		t.Fatalf("continue: %d %q", r.code, r.stderr)
	}
	texts := func(i int) string { return history(s, i) }
	if got := texts(1); got != "Q1 A1 Q2" {
		t.Errorf("history after -c: %q", got)
	}
	if r := w.run("", "name", id[1], "mine"); r.code != 0 {
		t.Fatalf("name: %d %q", r.code, r.stderr)
	}
	other := filepath.Join(w.home, "other")
	os.MkdirAll(other, 0o755)
	r = w.runIn(other, "", with(s, "--fork", id[1], "-p", "QF")...)
	if r.code != 0 || !strings.Contains(r.stderr, "(forked from "+id[1]+")") {
		t.Fatalf("fork: %d %q", r.code, r.stderr)
	}
	fork := regexp.MustCompile(`session: ([0-9a-f-]{36}) \(forked`).FindStringSubmatch(r.stderr)
	if fork == nil {
		t.Fatalf("no fork id on stderr: %q", r.stderr)
	}
	if r := w.run("", "info", fork[1], "--json"); r.code != 0 || strings.Contains(r.stdout, `"mine"`) {
		t.Errorf("the fork kept its source's name: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if got := texts(2); got != "Q1 A1 Q2 A2 QF" {
		t.Errorf("history after --fork: %q", got)
	}
	r = w.run("", "ls", "--all", "--json")
	var infos []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil || len(infos) != 2 {
		t.Errorf("ls --all in the database: %v %s %s", err, r.stdout, r.stderr)
	}
	if got := w.sessions(); len(got) != 0 {
		t.Errorf("session files written with a database store: %v", got)
	}
}
