package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arborlog/arbor/session"
)

// The test binary doubles as the child process of the crash and lock tests:
// with ARBOR_JSONL_CHILD set it runs childMain instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("ARBOR_JSONL_CHILD"); mode != "" {
		os.Exit(childMain(mode, os.Args[len(os.Args)-2:]))
	}
	// Writer records go to a folder of the test's own (children inherit it).
	if os.Getenv("ARBOR_DIR") == "" {
		dir, err := os.MkdirTemp("", "arbor-jsonl-test")
		if err != nil {
			panic(err)
		}
		os.Setenv("ARBOR_DIR", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// childMain runs a writer: "append PATH POLICY" appends messages forever and
// prints each entry id once Append has returned (acknowledged); "hold PATH -"
// opens the session, prints "ready" and keeps it open until stdin closes.
func childMain(mode string, args []string) int {
	path := args[0]
	switch mode {
	case "append":
		policy, err := ParseDurability(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		s, err := Open(path, WithDurability(policy), Immediate())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		// Bounded, so the file stays small enough to check after every kill;
		// then wait for the kill.
		for i := 0; i < 300; i++ {
			m := user(nil, "u"+strconv.Itoa(i))
			if i%2 == 1 {
				m = assistant(nil, "a"+strconv.Itoa(i))
			}
			e, err := s.AppendMessage(m)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			// One write(2) per id: the parent never sees half an id as acknowledged.
			if _, err := os.Stdout.WriteString(e.ID + "\n"); err != nil {
				return 3
			}
		}
		select {}
	case "foreign":
		// Another program (a shell's >>, pi's appendFileSync): whole lines, one
		// write(2) each, on a descriptor opened with O_APPEND, no lock.
		n, _ := strconv.Atoi(args[1])
		for i := range n {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			if _, err := f.Write([]byte(foreignLine(i) + "\n")); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			f.Close()
		}
		return 0
	case "churn":
		// Opens and closes the session over and over until stdin closes.
		done := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
		fmt.Println("ready")
		for {
			select {
			case <-done:
				return 0
			default:
			}
			s, err := Open(path)
			if err != nil {
				continue
			}
			s.Close()
		}
	case "lockfork":
		// Another program takes the lock, leaves it to a process it starts with
		// the descriptor, and exits: the kernel's lock table names the one gone.
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		heir := exec.Command("sleep", "60")
		heir.ExtraFiles = []*os.File{f}
		if err := heir.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println(heir.Process.Pid)
		return 0
	case "hold":
		s, err := Open(path, Immediate())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		if _, err := s.AppendMessage(user(nil, "held")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		return 0
	}
	return 3
}

func child(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), "ARBOR_JSONL_CHILD="+mode)
	cmd.Stderr = os.Stderr
	return cmd
}

// startPiped starts cmd with pipes to its standard input and from its standard
// output.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return in, out
}

// TestCrash kills a writing process with SIGKILL at random moments, over and
// over on the same file, under each durability policy. The file starts as a
// version 2 session, so the first writer rewrites it (and may be killed doing
// so); sometimes a torn line is left at the end, as a crash of another writer
// would; some kills land before the child's first append, in the middle of its
// repairs. After every kill the file opens, every id the child acknowledged is
// in it exactly once, and no line is glued onto another.
func TestCrash(t *testing.T) {
	kills := 70 // per policy: 210 kills in all
	if testing.Short() {
		kills = 15
	}
	const planted = `{"type":"message","id":"deadbeef","parentId":null,"timestamp":"2026-11-29T19:00:04.000Z","message":{"role":"us`
	orig := lines(hdrV2, user1, hookV2)
	for _, policy := range []string{"always", "turn", "never"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			acked := map[string]bool{"aaaaaaa1": true, "aaaaaaa2": true}
			plants, early := 0, 0
			for kill := range kills {
				if data := readString(t, path); strings.HasSuffix(data, "\n") && rng.IntN(5) == 0 {
					appendRaw(t, path, planted)
					plants++
				}
				cmd := child(t, "append", path, policy)
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				r := bufio.NewReader(out)
				if rng.IntN(4) == 0 {
					early++ // anywhere from before the child opens the file to its first appends
				} else if _, err := r.Peek(1); err != nil {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
					t.Fatalf("kill %d: child wrote nothing: %v", kill, err)
				}
				time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				acks, _ := io.ReadAll(r)
				_ = cmd.Wait()
				for ln := range strings.Lines(string(acks)) {
					if strings.HasSuffix(ln, "\n") { // an id cut short by the kill was never acknowledged
						acked[strings.TrimSuffix(ln, "\n")] = true
					}
				}
				checkAfterCrash(t, path, acked)
			}
			t.Logf("%d kills (%d early), %d acknowledged entries, %d torn lines planted", kills, early, len(acked), plants)

			// A last writer ends what a kill left; every planted fragment is
			// then a line of its own in the file (never moved, never cut), or in
			// the version 2 original kept before the first rewrite.
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(assistant(t, "last")); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			data := readString(t, path)
			if !strings.HasSuffix(data, "\n") {
				t.Errorf("the last writer left the file without a final newline")
			}
			kept := strings.Count(data, planted+"\n")
			notTmp := func(n string) bool { return strings.HasSuffix(n, ".tmp") }
			baks, _ := filepath.Glob(path + ".v2.bak*")
			baks = slices.DeleteFunc(baks, notTmp)
			if len(baks) == 0 {
				t.Error("the version 2 original was not kept")
			}
			inBak := false
			for _, name := range baks {
				switch got := readString(t, name); got {
				case orig:
				case orig + planted:
					inBak = true
				default:
					t.Errorf("%s = %q, want the version 2 original", name, got)
				}
			}
			if inBak {
				kept++
			}
			if kept < plants {
				t.Errorf("%d torn lines planted, %d kept", plants, kept)
			}
			if torns, _ := filepath.Glob(path + ".torn*"); len(torns) > 0 {
				t.Errorf("appends moved fragments aside: %v", torns)
			}
		})
	}
}

func appendRaw(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func checkAfterCrash(t *testing.T, path string, acked map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := session.Load(data)
	rep := l.Report() // a torn tail may remain: a planted one the child was killed before ending
	if rep.NoHeader || len(rep.DuplicateIDs) > 0 || len(rep.ExtraHeaders) > 0 {
		t.Fatalf("file damaged after a kill: %+v", rep)
	}
	// An unreadable line is a torn fragment left in place: the planted one, or
	// a child's own line cut short by the kill (Linux may cut a write(2) short
	// when SIGKILL arrives part-way). Never a line glued onto another.
	lines := strings.Split(string(data), "\n")
	for _, n := range rep.BadLines {
		ln := lines[n-1]
		glued := strings.Count(ln, `{"type":"message"`) > 1 || strings.Contains(ln, `{"type":"session"`)
		if !strings.HasPrefix(ln, `{"type":"message"`) && !strings.HasPrefix(`{"type":"message"`, ln) || glued {
			t.Fatalf("line %d is not a torn fragment: %q", n, ln)
		}
	}
	// No duplicate ids (checked above) and no bad lines: an entry present is there once.
	for id := range acked {
		if l.Entry(id) == nil {
			t.Fatalf("acknowledged entry %s is not in the file", id)
		}
	}
	if got := bytes.Count(data, []byte("\n")); got != l.Len()+1+len(rep.BadLines) && got != l.Len()+len(rep.BadLines) {
		t.Fatalf("%d lines for %d entries, %d fragments and the header", got, l.Len(), len(rep.BadLines))
	}
	// The writer lock died with the child.
	lock, err := lockFile(path)
	if err != nil {
		t.Fatalf("lock after a kill: %v", err)
	}
	if err := lock.release(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterRecordHasNoSecrets: the holder's command line carries a
// password (arbor sync --store postgres://…); neither its writer record nor
// the message a refused writer prints holds it, only the program and user.
func TestWriterRecordHasNoSecrets(t *testing.T) {
	t.Setenv("ARBOR_DIR", t.TempDir())
	path := filepath.Join(t.TempDir(), "s.jsonl")
	const secret = "AlicePw123"
	cmd := child(t, "hold", "postgres://alice:"+secret+"@db.example/arbor", path, "-")
	in, out := startPiped(t, cmd)
	defer func() { in.Close(); cmd.Wait() }()
	if ln, err := bufio.NewReader(out).ReadString('\n'); err != nil || ln != "ready\n" {
		t.Fatalf("child: %q, %v", ln, err)
	}
	_, err := Open(path)
	var le *LockError
	if !errors.As(err, &le) || !le.Arbor {
		t.Fatalf("second writer: %v, want a LockError naming an arbor", err)
	}
	if strings.Contains(err.Error(), secret) || le.Holder.Program != filepath.Base(os.Args[0]) || le.Holder.User != OSUser() {
		t.Errorf("refused with %q (holder %+v): want the program %q and user %q, and no password", err, le.Holder, filepath.Base(os.Args[0]), OSUser())
	}
	records, _ := filepath.Glob(filepath.Join(LockDir(), "*.json"))
	if len(records) == 0 {
		t.Fatal("no writer record written")
	}
	for _, r := range records {
		if b, err := os.ReadFile(r); err != nil || strings.Contains(string(b), secret) {
			t.Errorf("writer record %s: %s (%v)", r, b, err)
		}
	}
}

// An old record's command line shows as its program alone.
func TestOldWriterRecord(t *testing.T) {
	var h Holder
	if err := json.Unmarshal([]byte(`{"pid":7,"host":"h","started":"2026-12-01T00:00:00Z","command":"/usr/bin/arbor sync push --store postgres://alice:AlicePw123@h/db"}`), &h); err != nil {
		t.Fatal(err)
	}
	if h.Program != "arbor" || h.PID != 7 || h.Host != "h" {
		t.Errorf("old record read as %+v", h)
	}
}

// TestSecondWriterProcess: while one process holds a session, another's Open
// fails at once naming its pid and host; readers are not blocked; when the
// holder is killed, the lock is free.
func TestSecondWriterProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	cmd := child(t, "hold", path, "-")
	in, out := startPiped(t, cmd)
	defer in.Close()
	if ln, err := bufio.NewReader(out).ReadString('\n'); err != nil || ln != "ready\n" {
		t.Fatalf("child: %q, %v", ln, err)
	}

	start := time.Now()
	_, err := Open(path)
	var le *LockError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: err = %v, want a LockError", err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("the second writer waited %v instead of failing at once", elapsed)
	}
	host, _ := os.Hostname()
	if le.Holder.PID != cmd.Process.Pid || le.Holder.Host != host || le.Holder.Started == "" {
		t.Errorf("holder = %+v, want pid %d on %s", le.Holder, cmd.Process.Pid, host)
	}
	for _, want := range []string{path, "pid " + strconv.Itoa(cmd.Process.Pid), host} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	l, err := Read(path)
	if err != nil || l.Len() != 1 {
		t.Fatalf("a reader while the session is held: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("open after the holder died: %v", err)
	}
	defer s.Close()
	if _, err := s.AppendMessage(assistant(t, "mine now")); err != nil {
		t.Fatal(err)
	}
}

// TestSecondWriterSameProcess: the lock is per open session, not per process.
func TestSecondWriterSameProcess(t *testing.T) {
	path, _ := seed(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s.Close()
}

// TestConcurrentAppends: goroutines appending on one session (run with -race)
// produce one line per entry, each the child of the entry before it.
func TestConcurrentAppends(t *testing.T) {
	for _, policy := range []Durability{Never, Turn} {
		t.Run(policy.String(), func(t *testing.T) {
			path, _ := seed(t)
			s, err := Open(path, WithDurability(policy))
			if err != nil {
				t.Fatal(err)
			}
			const workers, each = 8, 40
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						m := user(t, fmt.Sprintf("w%d-%d", w, i))
						if i%3 == 0 {
							m = assistant(t, fmt.Sprintf("w%d-%d", w, i))
						}
						if _, err := s.AppendMessage(m); err != nil {
							t.Error(err)
							return
						}
						_ = s.Context()
					}
				})
			}
			wg.Wait()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			l, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if r := l.Report(); !r.Clean() {
				t.Fatalf("damaged: %+v", r)
			}
			if got, want := l.Len(), 2+workers*each; got != want {
				t.Fatalf("%d entries, want %d", got, want)
			}
			if got := len(l.PathTo(l.Leaf().ID)); got != l.Len() {
				t.Errorf("the path to the leaf has %d entries, want all %d in one chain", got, l.Len())
			}
		})
	}
}

// TestRefresh: entries another program (pi) appended behind the store's back
// are indexed before the next append, which then hangs off them; a torn line it
// left stays where it is, ended by a newline, never moved or cut.
func TestRefresh(t *testing.T) {
	path, _ := seed(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mine, err := s.AppendMessage(assistant(t, "mine"))
	if err != nil {
		t.Fatal(err)
	}
	theirs := `{"type":"message","id":"bbbbbbb1","parentId":"` + mine.ID + `","timestamp":"2026-11-29T19:10:00.000Z","message":{"role":"user","content":"from pi","timestamp":1764443400000}}`
	label := `{"type":"label","id":"bbbbbbb2","parentId":"bbbbbbb1","timestamp":"2026-11-29T19:10:01.000Z","targetId":"bbbbbbb1","label":"pi was here"}`
	frag := `{"type":"message","id":"bbbbbbb3","parentId":"bbbbbbb2","timest`
	appendRaw(t, path, lines(theirs, label)+frag)

	next, err := s.AppendMessage(assistant(t, "after pi"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Entry("bbbbbbb1") == nil || s.Label("bbbbbbb1") != "pi was here" {
		t.Errorf("pi's entries were not indexed before the append")
	}
	if next.ParentID != "bbbbbbb2" {
		t.Errorf("new entry's parent = %s, want pi's last entry bbbbbbb2", next.ParentID)
	}
	want := lines(hdr, user1, asst1, string(mine.Raw()), theirs, label, frag, string(next.Raw()))
	if got := readString(t, path); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(path + ".torn"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the fragment was moved aside: %v", err)
	}

	// A complete line without its newline gets one, and is indexed.
	last := `{"type":"message","id":"bbbbbbb4","parentId":"` + next.ID + `","timestamp":"2026-11-29T19:11:00.000Z","message":{"role":"user","content":"no newline","timestamp":1764443460000}}`
	appendRaw(t, path, last)
	e, err := s.AppendMessage(assistant(t, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if e.ParentID != "bbbbbbb4" {
		t.Errorf("parent = %s, want bbbbbbb4", e.ParentID)
	}
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Report(); len(r.BadLines) != 1 || r.TornTail || r.MissingNewline || len(r.DuplicateIDs) > 0 || l.Len() != 8 {
		t.Errorf("after refresh: %d entries, report %+v; want 8 and the fragment as one unreadable line", l.Len(), r)
	}

	// A file that shrank under us was rewritten by someone else: refuse.
	if err := os.WriteFile(path, []byte(lines(hdr)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(user(t, "y")); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("append to a file that shrank: err = %v", err)
	}
}

// TestAppendAfterClose: a closed session refuses appends, naming the file, and
// its lock is free for the next writer.
func TestAppendAfterClose(t *testing.T) {
	path, before := seed(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.AppendMessage(user(t, "late")); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("append after Close: err = %v", err)
	}
	if got := readString(t, path); got != before {
		t.Errorf("file changed after Close:\n%s", got)
	}
	s2, err := Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}
