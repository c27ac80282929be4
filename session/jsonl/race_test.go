package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arborlog/arbor/session"
)

// newlineFirst is the i-th line of a writer that puts its newline first:
// "\n{json}", one write(2), so the file ends without a newline between its
// writes although every line it wrote is complete.
func newlineFirst(i int) string { return "\n" + foreignLine(i) }

// loadsOnce fails unless every id loads from the file exactly once.
func loadsOnce(t *testing.T, path string, ids ...string) *session.Log {
	t.Helper()
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if l.Entry(id) == nil {
			t.Errorf("entry %s does not load from %s", id, path)
		}
	}
	if d := l.Report().DuplicateIDs; len(d) > 0 {
		t.Errorf("entries in the file twice: %v", d)
	}
	return l
}

// TestNewlineFirstWriter: another writer's line "\n{json}" lands between the
// store's last look and its write(2). Both entries load afterwards, each once:
// the other writer's line, complete when arbor's landed on it, is written again
// whole, and once such a writer has been seen arbor's lines begin with a
// newline of their own, so no later line of it is glued onto.
func TestNewlineFirstWriter(t *testing.T) {
	for _, times := range []int{1, 50} {
		t.Run(strconv.Itoa(times), func(t *testing.T) {
			path, _ := seed(t)
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs), WithDurability(Never))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			landed := 0
			ffs.write = func(name string, p []byte) (int, error) {
				if name == path && landed < times && bytes.Contains(p, []byte("mine")) {
					appendRaw(t, path, newlineFirst(landed))
					landed++
				}
				return len(p), nil
			}
			var ids []string
			for i := range times {
				e, err := s.AppendMessage(user(t, "mine"+strconv.Itoa(i)))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, e.ID)
			}
			ffs.write = nil
			e, err := s.AppendMessage(assistant(t, "after"))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
			for i := range landed {
				id := fmt.Sprintf("f%07d", i)
				ids = append(ids, id)
				if s.Entry(id) == nil {
					t.Errorf("the session did not index the other writer's line %d", i)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			l := loadsOnce(t, path, ids...)
			if bad := l.Report().BadLines; len(bad) > 1 {
				t.Errorf("%d lines glued together (lines %v): arbor kept landing on the other writer's lines", len(bad), bad)
			}
		})
	}
}

// TestNewlineFirstWriterRace races arbor's appends against a writer that puts
// the newline first, appending as fast as it can: afterwards every line of
// both loads, once.
func TestNewlineFirstWriterRace(t *testing.T) {
	deadline := time.Now().Add(3 * time.Second)
	for run := 0; run < 400 && time.Now().Before(deadline); run++ {
		path, _ := seed(t)
		s, err := Open(path, WithDurability(Never))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		var wrote atomic.Int64
		done := make(chan error, 1)
		go func() {
			for i := 0; !stop.Load() && i < 200; i++ {
				if _, err := f.WriteString(newlineFirst(i)); err != nil {
					done <- err
					return
				}
				wrote.Add(1)
			}
			done <- nil
		}()
		var ids []string
		for i := range 20 {
			e, err := s.AppendMessage(user(t, "u"+strconv.Itoa(i)))
			if err != nil {
				t.Fatalf("run %d: append %d: %v", run, i, err)
			}
			ids = append(ids, e.ID)
		}
		stop.Store(true)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for i := range int(wrote.Load()) {
			ids = append(ids, fmt.Sprintf("f%07d", i))
		}
		loadsOnce(t, path, ids...)
		if t.Failed() {
			t.Fatalf("run %d failed", run)
		}
	}
}

// TestReappendWaitsForALineInFlight: a line of another writer that arbor's
// line split is put back together while the session closes, but the file
// then ends in a third line still being written. The line put back together
// is written only once that line is finished, so it is not split too; when
// it is not finished in time, it is left out and the line in flight is
// still whole.
func TestReappendWaitsForALineInFlight(t *testing.T) {
	for _, rest := range []time.Duration{60 * time.Millisecond, -1} {
		name := "rest after " + rest.String()
		if rest < 0 {
			name = "rest after close"
		}
		t.Run(name, func(t *testing.T) {
			path, _ := seed(t)
			ffs := newFaultFS()
			s, err := Open(path, WithFS(ffs), WithDurability(Never))
			if err != nil {
				t.Fatal(err)
			}
			split, inFlight := foreignLine(1), foreignLine(2)
			ffs.write = func(name string, p []byte) (int, error) {
				if name == path && bytes.Contains(p, []byte("mine")) {
					ffs.write = nil
					appendRaw(t, path, split[:30]) // a slow writer's first piece
				}
				return len(p), nil
			}
			e, err := s.AppendMessage(user(t, "mine"))
			if err != nil {
				t.Fatal(err)
			}
			appendRaw(t, path, split[30:]+"\n")
			appendRaw(t, path, inFlight[:30])
			var wg sync.WaitGroup
			if rest >= 0 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(rest)
					appendRaw(t, path, inFlight[30:]+"\n")
				}()
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if rest < 0 {
				appendRaw(t, path, inFlight[30:]+"\n")
			}
			data := readString(t, path)
			if !strings.Contains(data, "\n"+inFlight+"\n") {
				t.Fatalf("the line in flight while the session closed was split:\n%s", data)
			}
			l := loadsOnce(t, path, e.ID, "f0000002")
			if rest >= 0 && l.Entry("f0000001") == nil {
				t.Errorf("the line arbor's line split was not written again once the line in flight was finished:\n%s", data)
			}
		})
	}
}

// TestSwappedFolder: the session's folder is swapped for a copy while entries
// are appended (mv d d.old; mkdir d; cp d.old/s.jsonl d/). Every entry
// acknowledged is in the file the path names afterwards; the first append
// that went only to the old file is refused.
func TestSwappedFolder(t *testing.T) {
	deadline := time.Now().Add(3 * time.Second)
	for run := 0; run < 300 && time.Now().Before(deadline); run++ {
		root := t.TempDir()
		dir := filepath.Join(root, "d")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(path, []byte(lines(hdr, user1, asst1)), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(path, WithDurability(Never))
		if err != nil {
			t.Fatal(err)
		}
		swapped := make(chan error, 1)
		go func() {
			time.Sleep(time.Duration(run%5) * 100 * time.Microsecond)
			swapped <- swapFolder(dir)
		}()
		var acked []string
		var refused error
		for i := 0; i < 100000 && refused == nil; i++ {
			e, err := s.AppendMessage(user(t, "u"+strconv.Itoa(i)))
			if err != nil {
				refused = err
				break
			}
			acked = append(acked, e.ID)
		}
		if err := <-swapped; err != nil {
			t.Fatal(err)
		}
		s.Close()
		if refused == nil || !strings.Contains(refused.Error(), path) {
			t.Fatalf("run %d: appends after the swap: %v, want an error naming %s", run, refused, path)
		}
		l, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range acked {
			if l.Entry(id) == nil {
				t.Fatalf("run %d: acknowledged entry %s (of %d) is only in the old folder's file", run, id, len(acked))
			}
		}
	}
}

// swapFolder does what mv d d.old; mkdir d; cp d.old/s.jsonl d/ does.
func swapFolder(dir string) error {
	old := dir + ".old"
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(old, "s.jsonl"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), data, 0o600); err != nil {
		return errors.Join(err, os.RemoveAll(dir))
	}
	return nil
}
