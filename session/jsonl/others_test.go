package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/arborlog/arbor/session"
)

// foreignLine is the i-th line the "foreign" child appends: a session entry of
// 0 to about 4 KB, every seventh one bigger than a page.
func foreignLine(i int) string {
	pad := (i * 613) % 4000
	if i%7 == 3 {
		pad = 4096 + (i*131)%6000
	}
	return fmt.Sprintf(`{"type":"custom","id":"f%07d","parentId":null,"timestamp":"2026-11-29T19:00:00.000Z","customType":"other-writer","data":{"pad":%q}}`, i, strings.Repeat("x", pad))
}

// TestForeignAppender races arbor's appends against another process appending
// whole lines to the same file with O_APPEND and no lock, over and over:
// afterwards every complete line of both writers is in the file, whole, and
// the session loads without damage.
func TestForeignAppender(t *testing.T) {
	runs, lines := 10, 400
	if testing.Short() {
		runs = 3
	}
	for run := range runs {
		path, _ := seed(t)
		cmd := child(t, "foreign", path, strconv.Itoa(lines))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, WithDurability(Never))
		if err != nil {
			t.Fatal(err)
		}
		var acked []*session.Entry
		for i := 0; i < 300; i++ {
			m := user(t, "u"+strconv.Itoa(i))
			if i%3 == 2 {
				m = assistant(t, "a"+strconv.Itoa(i))
			}
			e, err := s.AppendMessage(m)
			if err != nil {
				t.Fatalf("run %d: append %d: %v", run, i, err)
			}
			acked = append(acked, e)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("run %d: the other writer failed: %v", run, err)
		}
		// One more append after the other writer is done reads all of its lines.
		last, err := s.AppendMessage(assistant(t, "last"))
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, last)
		for i := range lines {
			if s.Entry(fmt.Sprintf("f%07d", i)) == nil {
				t.Fatalf("run %d: the session did not index the other writer's line %d", run, i)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for ln := range strings.Lines(string(data)) {
			have[strings.TrimSuffix(ln, "\n")] = true
		}
		for i := range lines {
			if !have[foreignLine(i)] {
				t.Fatalf("run %d: the other writer's line %d is not in the file whole", run, i)
			}
		}
		for _, e := range acked {
			if !have[string(e.Raw())] {
				t.Fatalf("run %d: acknowledged entry %s is not in the file whole", run, e.ID)
			}
		}
		l := session.Load(data)
		if r := l.Report(); !r.Clean() {
			t.Fatalf("run %d: file damaged: %+v", run, r)
		}
		if l.Len() != 2+lines+len(acked) {
			t.Fatalf("run %d: %d entries, want %d", run, l.Len(), 2+lines+len(acked))
		}
	}
}

// TestGluedOntoAFragment: another writer begins a line after the store last
// looked and before its write(2) lands, so the entry goes onto the end of
// that fragment, where it cannot be read. The entry is acknowledged only once
// it is in the file on a line of its own: written again after a look, and,
// when the other writer keeps beginning lines in the way, after a newline of
// its own. The other writer's line, split in two by the entry, is put back
// together once its rest is there and written again whole.
func TestGluedOntoAFragment(t *testing.T) {
	for _, times := range []int{1, 100} {
		t.Run(strconv.Itoa(times), func(t *testing.T) {
			path, _ := seed(t)
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			begun := 0
			ffs.write = func(name string, p []byte) (int, error) {
				if name == path && begun < times && bytes.Contains(p, []byte("mine")) {
					// The other writer's line i begins (and, before the next one
					// begins, ends) right before this write lands.
					if begun > 0 {
						appendRaw(t, path, foreignLine(begun - 1)[20:]+"\n")
					}
					appendRaw(t, path, foreignLine(begun)[:20])
					begun++
				}
				return len(p), nil
			}
			e, err := s.AppendMessage(assistant(t, "mine"))
			if err != nil {
				t.Fatal(err)
			}
			ffs.write = nil
			appendRaw(t, path, foreignLine(begun - 1)[20:]+"\n")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			data := readString(t, path)
			if !strings.Contains(data, "\n"+string(e.Raw())+"\n") {
				t.Fatalf("acknowledged entry %s is not on a line of its own:\n%s", e.ID, data)
			}
			l, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if l.Entry(e.ID) == nil {
				t.Fatalf("acknowledged entry %s does not load", e.ID)
			}
			if r := l.Report(); len(r.DuplicateIDs) > 0 {
				t.Errorf("the entry is in the file twice: %v", r.DuplicateIDs)
			}
			if times == 1 && strings.Count(data, string(e.Raw())) != 2 {
				t.Errorf("want the glued copy and one copy on its own line")
			}
			// The other writer's lines that the entry split are put back
			// together from their pieces and written again whole.
			for i := range begun {
				if !strings.Contains(data, "\n"+foreignLine(i)+"\n") || l.Entry(fmt.Sprintf("f%07d", i)) == nil {
					t.Errorf("the other writer's line %d, split by the entry, does not load", i)
				}
			}
		})
	}
}

// TestSlowWriterMended: another writer's line stays unfinished longer than
// the store waits, so the next append ends it with a newline in place; its
// rest, when it comes, makes an unreadable line of its own. The line is put
// back together from the two and written again whole, once: nothing is cut
// or moved. The same when arbor's lines begin with a newline of their own,
// as they do once a writer that puts the newline first was seen.
func TestSlowWriterMended(t *testing.T) {
	for _, when := range []string{"next append", "close", "newline first, next append", "newline first, close"} {
		t.Run(when, func(t *testing.T) {
			path, _ := seed(t)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(when, "newline first") {
				appendRaw(t, path, newlineFirst(1))
				if _, err := s.AppendMessage(user(t, "after a newline-first line")); err != nil {
					t.Fatal(err)
				}
			}
			line := foreignLine(3) // bigger than a page
			appendRaw(t, path, line[:100])
			if _, err := s.AppendMessage(user(t, "while it waits")); err != nil {
				t.Fatal(err)
			}
			appendRaw(t, path, line[100:]+"\n")
			if strings.HasSuffix(when, "next append") {
				if _, err := s.AppendMessage(user(t, "after the rest")); err != nil {
					t.Fatal(err)
				}
				if s.Entry("f0000003") == nil {
					t.Error("the session did not index the line put back together")
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			data := readString(t, path)
			if !strings.Contains(data, line[:100]+"\n") {
				t.Error("the unfinished line was not ended in place")
			}
			if strings.Count(data, "\n"+line+"\n") != 1 {
				t.Errorf("the other writer's line is in the file whole %d times, want once", strings.Count(data, "\n"+line+"\n"))
			}
			l, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if l.Entry("f0000003") == nil || len(l.Report().DuplicateIDs) > 0 {
				t.Errorf("the other writer's line does not load once: %+v", l.Report())
			}
		})
	}
}

// TestLockBelongsToTheFile: a second writer through a symlink, a hard link or
// a path with ".." meets the lock of the first, named; nothing is created
// beside the session.
func TestLockBelongsToTheFile(t *testing.T) {
	path, _ := seed(t)
	dir := filepath.Dir(path)
	other := t.TempDir()
	sym := filepath.Join(other, "sym.jsonl")
	hard := filepath.Join(dir, "hard.jsonl")
	if err := os.Symlink(path, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	dotdot := filepath.Join(dir, "..", filepath.Base(dir), "s.jsonl")
	before := names(t, dir)

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(user(t, "first writer")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sym, hard, dotdot} {
		_, err := Open(p)
		var le *LockError
		if !errors.As(err, &le) || !le.Arbor || le.Holder.PID != os.Getpid() {
			t.Fatalf("second writer through %s: %v, want a LockError naming pid %d", p, err, os.Getpid())
		}
		if !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name the holder and %s", err, p)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !equal(got, before) {
		t.Errorf("files beside the session changed: %v, was %v", got, before)
	}
	// The records are gone with the lock.
	if recs, _ := filepath.Glob(filepath.Join(LockDir(), "*.json")); len(recs) > 0 {
		t.Errorf("holder records left behind: %v", recs)
	}
	s, err = Open(sym)
	if err != nil {
		t.Fatalf("open through the symlink once the lock is free: %v", err)
	}
	s.Close()
}

// TestLockHolderNotArbor: a lock another program holds is refused, naming its
// pid and command and saying it is not arbor.
func TestLockHolderNotArbor(t *testing.T) {
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no kernel lock table here")
	}
	path, _ := seed(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	var le *LockError
	if !errors.As(err, &le) || le.Arbor || le.Holder.PID != os.Getpid() || le.Holder.Program == "" {
		t.Fatalf("Open: %v (%+v), want a LockError naming this process as not arbor", err, le)
	}
	if !strings.Contains(err.Error(), "not arbor") {
		t.Errorf("error %q does not say the holder is not arbor", err)
	}
}

// TestLockHolderGone: the process that took the lock has exited and left it
// to one that inherited the descriptor; the refusal names that live one,
// never the pid that is gone.
func TestLockHolderGone(t *testing.T) {
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no kernel lock table here")
	}
	path, _ := seed(t)
	cmd := child(t, "lockfork", path, "-")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	heir, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("child printed %q", out)
	}
	defer syscall.Kill(heir, syscall.SIGKILL)
	_, err = Open(path)
	var le *LockError
	if !errors.As(err, &le) {
		t.Fatalf("Open: %v, want a LockError", err)
	}
	if le.Holder.PID != heir || le.Arbor || !strings.Contains(le.Holder.Program, "sleep") {
		t.Fatalf("refusal %q (%+v), want the live holder %d (sleep), not the exited pid %d", err, le.Holder, heir, cmd.Process.Pid)
	}
}

// TestLockHolderOtherArborDir: an arbor that keeps its writer records under
// another ARBOR_DIR leaves none here; the refusal names it as an arbor with
// its records elsewhere, not as a program that is not arbor.
func TestLockHolderOtherArborDir(t *testing.T) {
	if _, err := os.Stat("/proc/locks"); err != nil {
		t.Skip("no kernel lock table here")
	}
	path, _ := seed(t)
	cmd := child(t, "hold", path, "-")
	cmd.Env = append(cmd.Env, "ARBOR_DIR="+t.TempDir())
	in, out := startPiped(t, cmd)
	defer func() { in.Close(); cmd.Wait() }()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	var le *LockError
	if !errors.As(err, &le) || le.Holder.PID != cmd.Process.Pid || le.Holder.Program == "" {
		t.Fatalf("Open: %v (%+v), want a LockError naming the holder %d as this program", err, le, cmd.Process.Pid)
	}
	if msg := err.Error(); strings.Contains(msg, "not arbor") || !strings.Contains(msg, "ARBOR_DIR") {
		t.Errorf("error %q: want it to say the holder is an arbor with another ARBOR_DIR", msg)
	}
}

// TestNoLockFileFollowed: a symlink planted at the old lock path, at a
// sidecar's name or at a temporary file's name is never followed.
func TestNoLockFileFollowed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(lines(hdr, user1)+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "created")
	for _, name := range []string{"s.jsonl.lock", "s.jsonl.torn", "s.jsonl.torn.tmp"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(missing, filepath.Join(dir, "s.jsonl.torn.1")); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repair(); err != nil { // moves the torn line to a sidecar
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(assistant(t, "x")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := readString(t, victim); got != "precious" {
		t.Errorf("the symlinks' target was written: %q", got)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dangling symlink's target was created")
	}
	if got := readString(t, filepath.Join(dir, "s.jsonl.torn.2")); got != torn {
		t.Errorf("the torn line went to %v, want s.jsonl.torn.2 (the first free name)", names(t, dir))
	}
}

// TestReplacedFile: a file renamed over the session (sed -i, an editor's save)
// is noticed before an id is acknowledged, between appends and during a write.
func TestReplacedFile(t *testing.T) {
	replace := func(t *testing.T, path string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tmp := path + ".edit"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("between appends", func(t *testing.T) {
		path, _ := seed(t)
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		kept, err := s.AppendMessage(assistant(t, "before"))
		if err != nil {
			t.Fatal(err)
		}
		replace(t, path)
		_, err = s.AppendMessage(assistant(t, "after"))
		if err == nil || !strings.Contains(err.Error(), "replaced") || !strings.Contains(err.Error(), path) {
			t.Fatalf("append after the replacement: %v, want an error naming %s", err, path)
		}
		if _, err := s.AppendMessage(assistant(t, "again")); err == nil {
			t.Fatal("a later append was acknowledged")
		}
		l, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if l.Entry(kept.ID) == nil {
			t.Errorf("the entry acknowledged before the replacement is missing")
		}
		// Reopened, the session writes to the new file.
		s2, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s2.AppendMessage(assistant(t, "reopened"))
		if err != nil {
			t.Fatal(err)
		}
		s2.Close()
		if l, _ := Read(path); l.Entry(e.ID) == nil {
			t.Errorf("the append after reopening is not in the file")
		}
	})
	t.Run("hard link, then renamed over", func(t *testing.T) {
		// The file keeps a link at the other name, so it is not unlinked; but
		// the session's path names the new file from the rename on.
		path, _ := seed(t)
		if err := os.Link(path, filepath.Join(filepath.Dir(path), "hard.jsonl")); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, WithDurability(Never))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.AppendMessage(user(t, "before")); err != nil {
			t.Fatal(err)
		}
		replace(t, path) // at once, right after an acknowledged append
		e, err := s.AppendMessage(user(t, "after"))
		if err == nil {
			t.Fatalf("entry %s acknowledged though %s names another file", e.ID, path)
		}
		if !strings.Contains(err.Error(), "replaced") || !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not say %s was replaced", err, path)
		}
	})
	t.Run("during a write", func(t *testing.T) {
		path, _ := seed(t)
		ffs := newFaultFS()
		s, err := Open(path, WithFS(ffs))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ffs.write = func(name string, p []byte) (int, error) {
			if name == path {
				ffs.write = nil
				replace(t, path)
			}
			return len(p), nil
		}
		e, err := s.AppendMessage(assistant(t, "lost to the old file"))
		if err == nil {
			t.Fatalf("entry %s acknowledged though it went to the replaced file", e.ID)
		}
		if !strings.Contains(err.Error(), "replaced") {
			t.Errorf("error %q does not say the file was replaced", err)
		}
	})
	t.Run("during a rewrite", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, []byte(lines(hdrV2, user1, hookV2)), 0o600); err != nil {
			t.Fatal(err)
		}
		// A writer that opened the file before the rewrite's rename, as pi does for each line.
		early, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer early.Close()
		ffs := newFaultFS()
		s, err := Open(path, WithFS(ffs))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before := foreignLine(1)
		after := foreignLine(2)
		ffs.rename = func(oldpath, newpath string) error {
			if newpath == path {
				appendRaw(t, path, before+"\n") // lands in the old file before the rename
			}
			return nil
		}
		ffs.syncDir = func(string) error {
			if ffs.rename != nil && fileHasRenamed(t, path) {
				ffs.rename = nil
				if _, err := early.WriteString(after + "\n"); err != nil { // the old inode, after the rename
					t.Fatal(err)
				}
			}
			return nil
		}
		e, err := s.AppendMessage(assistant(t, "mine"))
		if err != nil {
			t.Fatal(err)
		}
		data := readString(t, path)
		for _, want := range []string{before, string(e.Raw())} {
			if !strings.Contains(data, want+"\n") {
				t.Errorf("the rewritten file lacks %.60s…", want)
			}
		}
		// The line written through the early descriptor after the rename is
		// carried over when the store looks last (the rewrite's end).
		if !strings.Contains(data, after+"\n") {
			t.Errorf("the line appended to the old file after the rename was lost")
		}
		if n, _ := Read(path); !n.Report().Clean() {
			t.Errorf("rewritten file damaged: %+v", n.Report())
		}
	})
}

// TestRewriteCarriesWhatOthersAppendedSinceOpen: a file that the first append
// rewrites (an old version, no header) keeps what others appended to it
// between Open and that append, and the line another writer was still
// writing when it was opened: all carried over whole, and indexed once.
func TestRewriteCarriesWhatOthersAppendedSinceOpen(t *testing.T) {
	half := foreignLine(2)[:40]
	for name, start := range map[string]string{
		"version 2":           lines(hdrV2, user1, hookV2),
		"no header":           lines(user1, asst1),
		"version 2, torn end": lines(hdrV2, user1, hookV2) + half,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, []byte(start), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			want := []string{foreignLine(1)}
			if strings.HasSuffix(start, half) {
				appendRaw(t, path, foreignLine(2)[len(half):]+"\n") // the line in flight is finished
				want = append(want, foreignLine(2))
			}
			appendRaw(t, path, foreignLine(1)+"\n")
			e, err := s.AppendMessage(assistant(t, "mine"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(user(t, "again")); err != nil {
				t.Fatal(err)
			}
			data := readString(t, path)
			for _, w := range append(want, string(e.Raw())) {
				if !strings.Contains(data, "\n"+w+"\n") {
					t.Errorf("the rewritten file lacks %.70s…", w)
				}
			}
			for _, id := range []string{"f0000001", "f0000002"} {
				if s.Entry(id) == nil && strings.Contains(data, id) {
					t.Errorf("the other writer's entry %s is not indexed", id)
				}
			}
			if r := s.Report(); len(r.DuplicateIDs) > 0 {
				t.Errorf("lines carried over were indexed twice: %v", r.DuplicateIDs)
			}
			if n, _ := Read(path); !n.Report().Clean() {
				t.Errorf("rewritten file damaged: %+v", n.Report())
			}
		})
	}
}

// fileHasRenamed reports whether path is now a file whose first line is a version 3 header.
func fileHasRenamed(t *testing.T, path string) bool {
	line, err := FirstLine(path)
	return err == nil && bytes.Contains(line, []byte(`"version":3`))
}

// TestHostileIDs: a session id that could leave the folder never names a file.
func TestHostileIDs(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"../escape", "/abs/path", "a/b", "nul\x00id", ".hidden", "..", strings.Repeat("a", 129), "new\nline"} {
		if _, err := Create("/cwd", dir, WithLog(session.WithID(id)), Immediate()); err == nil {
			t.Errorf("Create with id %q succeeded", id)
		}
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("files created: %v", got)
	}
	if !SafeID("019a7c2e-1b2c-7d3e-8f40-123456789abc") {
		t.Error("a UUID is refused")
	}
}

// TestSidecars: every form of every sidecar is found, nothing else.
func TestSidecars(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	want := []string{"s.jsonl.bak", "s.jsonl.bak.1", "s.jsonl.corrupt.2", "s.jsonl.lock", "s.jsonl.tmp", "s.jsonl.tmp.3",
		"s.jsonl.torn", "s.jsonl.torn.1", "s.jsonl.torn.1.tmp", "s.jsonl.v2.bak", "s.jsonl.v2.bak.1.tmp"}
	others := []string{"s.jsonl", "s.jsonl2", "s.jsonl.notes", "s.jsonl.bak.x", "t.jsonl.torn", "s.jsonl.v.bak", "s.jsonl.1.jsonl"}
	for _, n := range append(append([]string{}, want...), others...) {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// At a sidecar's name, only a regular file is one: a symlink (to a file or
	// dangling), a folder or a FIFO is not arbor's and is left alone.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	for n, target := range map[string]string{"s.jsonl.bak.7": victim, "s.jsonl.torn.7": filepath.Join(dir, "missing")} {
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "s.jsonl.corrupt.7"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "s.jsonl.tmp.7"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Sidecars(path)
	if err != nil {
		t.Fatal(err)
	}
	var base []string
	for _, g := range got {
		base = append(base, filepath.Base(g))
	}
	if !equal(base, want) {
		t.Errorf("Sidecars = %v, want %v", base, want)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLockErrorAlwaysNamesHolder: while another process opens and closes the
// session as fast as it can, every refusal names that process as an arbor
// writer, never nobody and never a dead pid.
func TestLockErrorAlwaysNamesHolder(t *testing.T) {
	path, _ := seed(t)
	cmd := child(t, "churn", path, "-")
	in, out := startPiped(t, cmd)
	defer func() { in.Close(); cmd.Wait() }()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i := 0; i < 400 && refused < 100; i++ {
		s, err := Open(path)
		if err == nil {
			s.Close()
			continue
		}
		var le *LockError
		if !errors.As(err, &le) {
			t.Fatalf("Open: %v", err)
		}
		refused++
		if le.Holder.PID != cmd.Process.Pid || !le.Arbor || le.Holder.Started == "" {
			t.Fatalf("refusal %d: %v (%+v), want the churning arbor process %d named", refused, err, le.Holder, cmd.Process.Pid)
		}
	}
	if refused == 0 {
		t.Skip("never refused: the other process did not hold the lock when tried")
	}
	t.Logf("%d refusals, each naming the holder", refused)
}

// TestLockRecordsNotThroughALink: a symlink planted at $ARBOR_DIR/locks is not
// followed: the writer's record is not written where it points (the lock on
// the file itself still holds).
func TestLockRecordsNotThroughALink(t *testing.T) {
	root := t.TempDir()
	home, elsewhere := filepath.Join(root, "home"), filepath.Join(root, "elsewhere")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(elsewhere, 0o700)
	t.Setenv("ARBOR_DIR", home)
	if err := os.Symlink(elsewhere, LockDir()); err != nil {
		t.Fatal(err)
	}
	path, _ := seed(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := names(t, elsewhere); len(got) != 0 {
		t.Errorf("a writer record was written through the link: %v", got)
	}
	if _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Errorf("a second writer: %v, want ErrLocked", err)
	}
	if got := names(t, elsewhere); len(got) != 0 {
		t.Errorf("a refused writer's record was written through the link: %v", got)
	}
}

// TestFileNameHostileTimestamp: a header's timestamp is part of a file name
// (pgstore's pull names a new file from the database's header), so whatever
// it holds stays one name in the folder; pi's own timestamps are named as pi
// names them.
func TestFileNameHostileTimestamp(t *testing.T) {
	if got := FileName("2026-11-29T19:00:03.461Z", "abc"); got != "2026-11-29T19-00-03-461Z_abc.jsonl" {
		t.Errorf("FileName of pi's timestamp = %q", got)
	}
	for _, ts := range []string{"../../../etc/x", "/abs/olute", `..\..\x`, "a\x00b", "\n", "..", ".", "", strings.Repeat("9/", 5000), "2026\u2215x"} {
		got := FileName(ts, "abc")
		if filepath.Base(got) != got || strings.ContainsAny(got, "/\\\x00\n") || strings.HasPrefix(got, ".") || len(got) > 100 {
			t.Errorf("FileName(%.40q) = %.80q: not one plain name", ts, got)
		}
	}
}

// racedFS is the real file system where another process creates a file at
// each new name just before this one does (between freeName and the open).
type racedFS struct{ FS }

func (r racedFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if flag&os.O_EXCL != 0 {
		os.WriteFile(name, []byte("theirs"), 0o600)
	}
	return r.FS.OpenFile(name, flag, perm)
}

// TestWriteAtomicLeavesOthersFiles: when the temporary name is taken meanwhile,
// the write fails and the file that took it (not arbor's) stays.
func TestWriteAtomicLeavesOthersFiles(t *testing.T) {
	target := filepath.Join(t.TempDir(), "s.jsonl.torn")
	if err := writeAtomic(racedFS{OS}, target, []byte("mine")); err == nil {
		t.Fatal("writeAtomic succeeded over a name another process took")
	}
	if b, err := os.ReadFile(target + ".tmp"); string(b) != "theirs" {
		t.Errorf("the other process's file is %q, %v; want it left as it was", b, err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the target was written")
	}
}
