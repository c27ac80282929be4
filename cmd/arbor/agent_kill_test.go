package main

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/session/jsonl"
)

// TestAgentSIGKILLThenContinue kills a run at random moments and continues
// it: the session loads, every request the provider saw is backed by what the
// file holds, and the next request answers every tool call.
func TestAgentSIGKILLThenContinue(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range 12 {
		w := newWorld(t)
		s := agenttest.New(t, "openai",
			agenttest.Reply{Delay: 50 * time.Millisecond, Text: "step one", Calls: []agenttest.Call{{ID: "c1", Name: "bash", Args: `{"command":"sleep 0.15; echo one"}`}, {ID: "c2", Name: "bash", Args: `{"command":"sleep 0.1; echo two"}`}}},
			agenttest.Reply{Delay: 50 * time.Millisecond, Calls: []agenttest.Call{{ID: "c3", Name: "write", Args: `{"path":"f.txt","content":"x"}`}}},
			agenttest.Reply{Delay: 50 * time.Millisecond, Stall: true})
		c := w.cmd("", with(s, "-p", "do the steps")...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		seen := len(s.Requests())
		files := w.sessions()
		if seen == 0 {
			if len(files) > 0 {
				// The prompt may be written just before the request goes out.
				checkPrefix(t, files[0], 0)
			}
			continue
		}
		if len(files) != 1 {
			t.Fatalf("run %d: the provider saw %d requests but there are %d session files", i, seen, len(files))
		}
		checkPrefix(t, files[0], seen)
		next := agenttest.New(t, "openai", agenttest.Reply{Text: "recovered"})
		r := w.run("", with(next, "-p", "-c", "go on")...)
		// A child forked by the killed run (bash) holds a copy of the lock's
		// descriptor until it execs; on a loaded machine that can take a moment.
		for deadline := time.Now().Add(5 * time.Second); r.code == 1 && strings.Contains(r.stderr, "is open for writing by pid") && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			r = w.run("", with(next, "-p", "-c", "go on")...)
		}
		if r.code != 0 || r.stdout != "recovered\n" {
			t.Fatalf("run %d: continue after kill: %d %q %q", i, r.code, r.stdout, r.stderr)
		}
		validRequest(t, next, next.Requests()[0])
	}
}

// checkPrefix checks that a killed run's file holds what the provider was sent:
// the prompt, and before the n-th request the n−1 replies before it.
func checkPrefix(t *testing.T, path string, requests int) {
	t.Helper()
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := l.Report()
	if requests == 0 && rep.NoHeader && rep.Lines == 0 {
		return // killed between creating the file and writing its header: an empty file, which the store fills in on open
	}
	if len(rep.BadLines) > 0 || rep.NoHeader {
		t.Fatalf("%s damaged beyond a torn tail: %+v", path, rep)
	}
	var user, asst int
	for _, r := range roles(t, path) {
		switch r {
		case "user":
			user++
		case "assistant":
			asst++
		}
	}
	if requests > 0 && (user != 1 || asst < requests-1) {
		t.Fatalf("%d requests went out but the file holds %d prompts and %d replies: %v", requests, user, asst, roles(t, path))
	}
}

// validRequest checks that every tool call is followed by its results and no
// result stands alone.
func validRequest(t *testing.T, s *agenttest.Server, req agenttest.Request) {
	t.Helper()
	msgs := s.Messages(req)
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "tool" {
			t.Fatalf("a tool result without its call at %d: %+v", i, msgs)
		}
		for _, c := range m.Calls {
			i++
			if i >= len(msgs) || msgs[i].Role != "tool" || msgs[i].ID != c.ID {
				t.Fatalf("call %s not answered: %+v", c.ID, msgs)
			}
		}
	}
	if last := msgs[len(msgs)-1]; last.Role != "user" || !strings.Contains(last.Text, "go on") {
		t.Fatalf("last message %+v", last)
	}
}
