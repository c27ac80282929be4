package pgstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
)

// message is the package tests' message (bench_test.go).
var message = pgstore.MessageForTest

// connect opens a connection to the database at url; the caller closes it.
func connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// oneMessage creates a session holding one user message, text, closes it and
// returns its ref.
func oneMessage(t testing.TB, st *pgstore.Store, text string) string {
	t.Helper()
	s, err := st.Create("/p", "", store.Options{Immediate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Log().AppendMessage(message(t, "user", text)); err != nil {
		t.Fatal(err)
	}
	return s.Ref()
}

// stored returns the ids of a session's entries in the database, in order.
func stored(t testing.TB, url, id string) []string {
	t.Helper()
	ctx := context.Background()
	c := connect(t, url)
	defer c.Close(ctx)
	rows, _ := c.Query(ctx, `SELECT id FROM arbor_entries WHERE session_id = $1 ORDER BY position`, id)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestServerKilledMidAppend kills the server (as a crash: no shutdown
// checkpoint) while a writer appends, then restarts it. Every entry the
// writer acknowledged is there, under Always each one, under Turn each one up
// to the last acknowledged assistant message; nothing is there that was
// neither acknowledged nor the append in flight; the writer reports the loss
// and refuses later appends; a new writer carries on.
func TestServerKilledMidAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	c, err := pgtest.Start()
	if err != nil {
		if pgtest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer c.Stop()
	for _, d := range []store.Durability{store.Always, store.Turn} {
		t.Run(d.String(), func(t *testing.T) {
			url := c.NewDB(t)
			st, err := pgstore.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s, err := st.Create("/p", "", store.Options{Durability: d, Immediate: true})
			if err != nil {
				t.Fatal(err)
			}
			var acked []string
			var lastTurn int // len(acked) at the last acknowledged assistant message
			var inFlight string
			killed := make(chan error, 1)
			var failure error
			for i := 0; ; i++ {
				if i == 40 {
					go func() { killed <- c.Kill() }()
				}
				role := "user"
				if i%2 == 1 {
					role = "assistant"
				}
				e, err := s.Log().AppendMessage(message(t, role, fmt.Sprint(i)))
				if err != nil {
					failure = err
					inFlight = fmt.Sprint(i)
					break
				}
				acked = append(acked, e.ID)
				if role == "assistant" {
					lastTurn = len(acked)
				}
				if i > 100000 {
					t.Fatal("appends never failed after the kill")
				}
			}
			if err := <-killed; err != nil {
				t.Fatal(err)
			}
			if _, err := s.Log().AppendMessage(message(t, "user", "after")); err == nil {
				t.Error("the writer appended after it had lost its server")
			}
			s.Close()
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d acknowledged, then: %v", len(acked), failure)
			got := stored(t, url, s.Ref())
			want := acked
			if d == store.Turn {
				want = acked[:lastTurn]
			}
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Fatalf("after the crash the database holds %d entries, the writer acknowledged %d (%d must survive)", len(got), len(acked), len(want))
			}
			if len(got) > len(acked)+1 || (len(got) == len(acked)+1 && inFlight == "") {
				t.Errorf("the database holds %d entries, more than the %d acknowledged and the one in flight", len(got), len(acked))
			}
			// A new writer carries on.
			s2, err := st.Open(s.Ref(), store.Options{Durability: d})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s2.Log().AppendMessage(message(t, "user", "carry on")); err != nil {
				t.Fatal(err)
			}
			s2.Close()
		})
	}
}

// backendOf returns the server process holding session id's lock.
func backendOf(t *testing.T, url, id string) int32 {
	t.Helper()
	ctx := context.Background()
	c := connect(t, url)
	defer c.Close(ctx)
	var pid int32
	if err := c.QueryRow(ctx, `SELECT backend_pid FROM arbor_writers WHERE session_id = $1`, id).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

func terminate(t *testing.T, url string, pid int32) {
	t.Helper()
	ctx := context.Background()
	c := connect(t, url)
	defer c.Close(ctx)
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate backend %d: %v", pid, err)
	}
}

// TestConnectionCutWhileLocked cuts the connection that holds a writer's
// lock. The next writer gets in; the old one learns that it lost the lock at
// its next append, which it does not acknowledge and which is not written.
// When nobody took the lock meanwhile, the old writer gets it back and its
// append (known not to have committed) goes through.
func TestConnectionCutWhileLocked(t *testing.T) {
	st, url := open(t)
	a, err := st.Create("/p", "", store.Options{Immediate: true, Durability: store.Always})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Log().AppendMessage(message(t, "user", "first")); err != nil {
		t.Fatal(err)
	}
	// Nobody else: the cut is healed.
	terminate(t, url, backendOf(t, url, a.Ref()))
	e, err := a.Log().AppendMessage(message(t, "assistant", "second"))
	if err != nil {
		t.Fatalf("append after a cut nobody used: %v", err)
	}
	if got := stored(t, url, a.Ref()); len(got) != 2 || got[1] != e.ID {
		t.Fatalf("stored %v", got)
	}
	// Now another writer takes the lock after the cut.
	terminate(t, url, backendOf(t, url, a.Ref()))
	b, err := st.Open(a.Ref(), store.Options{})
	if err != nil {
		t.Fatalf("the next writer did not get in: %v", err)
	}
	defer b.Close()
	if _, err := b.Log().AppendMessage(message(t, "user", "from b")); err != nil {
		t.Fatal(err)
	}
	_, err = a.Log().AppendMessage(message(t, "user", "from a, too late"))
	if !errors.Is(err, jsonl.ErrLocked) || !strings.Contains(err.Error(), "not written") {
		t.Fatalf("the old writer's append: %v, want a refusal that names the lock and says it was not written", err)
	}
	got := stored(t, url, a.Ref())
	if len(got) != 3 || b.Log().Len() != 3 {
		t.Errorf("stored %d entries, want the 2 of a and the 1 of b", len(got))
	}
	if _, err := a.Log().AppendMessage(message(t, "user", "again")); err == nil {
		t.Error("the old writer appended again")
	}
}

// TestManyWriters: 8 writers on 8 sessions at once, then a crowd of 16
// taking turns on one session: each gets the lock in turn, nobody's entry is
// lost or written twice.
func TestManyWriters(t *testing.T) {
	st, url := open(t)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	refs := make([]string, writers)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			s, err := st.Create("/p", "", store.Options{Immediate: true})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			refs[w] = s.Ref()
			for i := range each {
				role := []string{"user", "assistant"}[i%2]
				if _, err := s.Log().AppendMessage(message(t, role, fmt.Sprint(w, i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, ref := range refs {
		if got := stored(t, url, ref); len(got) != each {
			t.Errorf("session %s holds %d entries, want %d", ref, len(got), each)
		}
	}

	// The crowd.
	id := oneMessage(t, st, "start")
	const crowd = 16
	var mu sync.Mutex
	var acked []string
	refused := 0
	for c := range crowd {
		wg.Go(func() {
			for {
				s, err := st.Open(id, store.Options{})
				if errors.Is(err, jsonl.ErrLocked) {
					mu.Lock()
					refused++
					mu.Unlock()
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				e, err := s.Log().AppendMessage(message(t, "user", fmt.Sprint("crowd ", c)))
				if err != nil {
					t.Error(err)
				} else {
					mu.Lock()
					acked = append(acked, e.ID)
					mu.Unlock()
				}
				s.Close()
				return
			}
		})
	}
	wg.Wait()
	got := stored(t, url, id)
	if len(got) != crowd+1 || len(acked) != crowd {
		t.Fatalf("after the crowd: %d stored, %d acknowledged, want %d", len(got), len(acked), crowd)
	}
	slices.Sort(acked)
	rest := slices.Clone(got[1:])
	slices.Sort(rest)
	if !slices.Equal(acked, rest) {
		t.Error("the stored entries are not the acknowledged ones")
	}
	// Each writer saw every earlier one: the entries form one chain.
	l, err := st.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Context().Messages); n != crowd+1 {
		t.Errorf("the chain holds %d messages, want %d (a writer did not see an earlier one)", n, crowd+1)
	}
	t.Logf("the crowd was refused %d times", refused)
}

// TestFollow: a follower sees each new entry as it is committed.
func TestFollow(t *testing.T) {
	st, _ := open(t)
	s, err := st.Create("/p", "", store.Options{Immediate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Log().AppendMessage(message(t, "user", "before")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seen := make(chan string, 10)
	go st.Follow(ctx, s.Ref(), 0, func(pos int, raw []byte) error {
		e, _ := session.ParseLine(raw)
		seen <- fmt.Sprint(pos, " ", e.ID)
		return nil
	})
	want := []string{fmt.Sprint(1, " ", s.Log().Leaf().ID)}
	if got := <-seen; got != want[0] {
		t.Fatalf("follower first saw %s, want %s", got, want[0])
	}
	for i := range 3 {
		e, err := s.Log().AppendMessage(message(t, "assistant", fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-seen:
			if got != fmt.Sprint(i+2, " ", e.ID) {
				t.Errorf("follower saw %s, want %d %s", got, i+2, e.ID)
			}
		case <-ctx.Done():
			t.Fatal("the follower did not see a new entry")
		}
	}
}

// TestWriterProcessKilled: a writer process is killed (SIGKILL) while it
// appends. Its lock dies with it: the next writer gets in at once, finds every
// entry the killed one acknowledged, and goes on.
func TestWriterProcessKilled(t *testing.T) {
	st, url := open(t)
	id := oneMessage(t, st, "parent")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ARBOR_PG_CHILD_URL="+url, "ARBOR_PG_CHILD_SESSION="+id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var acked []string
	for sc.Scan() {
		acked = append(acked, sc.Text())
		if len(acked) == 30 {
			// While it holds the lock, a second writer is refused, naming it.
			_, err := st.Open(id, store.Options{})
			if !errors.Is(err, jsonl.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprint("pid ", cmd.Process.Pid)) {
				t.Errorf("while the child writes: %v, want a refusal naming pid %d", err, cmd.Process.Pid)
			}
			cmd.Process.Kill()
			break
		}
	}
	for sc.Scan() {
		acked = append(acked, sc.Text()) // acknowledged before the kill landed
	}
	cmd.Wait()
	if len(acked) < 30 {
		t.Fatalf("the child acknowledged %d entries: %s", len(acked), stderr.Bytes())
	}
	var s2 store.Session
	deadline := time.Now().Add(10 * time.Second)
	for {
		s2, err = st.Open(id, store.Options{})
		if err == nil || !errors.Is(err, jsonl.ErrLocked) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // the server notices the closed socket
	}
	if err != nil {
		t.Fatalf("after the writer was killed: %v", err)
	}
	defer s2.Close()
	got := stored(t, url, id)
	if len(got) < len(acked)+1 || !slices.Equal(got[1:len(acked)+1], acked) {
		t.Fatalf("stored %d entries; the killed writer acknowledged %d", len(got)-1, len(acked))
	}
	if _, err := s2.Log().AppendMessage(message(t, "user", "after the kill")); err != nil {
		t.Fatal(err)
	}
}
