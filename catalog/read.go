package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"runtime"
	"sync"
)

// state is what the index keeps about one file: the key it was read under,
// how far the fold of its lines got, and the listing record that resulted.
type state struct {
	size    int64
	mtimeNS int64
	ino     uint64

	off       int64  // bytes folded into sum: the file up to and including its last newline
	tailStart int64  // where the last folded line starts
	tailHash  uint64 // crc64 of bytes [tailStart, off): a file that only grew still has them
	headHash  uint64 // crc64 of the first headBytes bytes (at most off): catches a rewritten header
	sum       summary

	listed  bool // the file is a session pi would list
	resumed bool // read from where an earlier state stopped, not from the start
	info    Info // the record, the unterminated last line (if any) included
}

// matches reports whether f is the file st was read from, unchanged.
func (st *state) matches(f file) bool {
	return st.size == f.size && st.mtimeNS == f.mtime.UnixNano() && st.ino == f.ino
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// readBuf is the chunk a file is read in; a longer line grows it.
const readBuf = 256 << 10

type reader struct {
	buf []byte
	l   line
}

var readers = sync.Pool{New: func() any { return &reader{buf: make([]byte, readBuf)} }}

// summarize reads f into a new state. When prev describes an earlier version
// of the same file that only grew since, only the new bytes are read.
func summarize(f file, prev *state) (*state, error) {
	fh, err := os.Open(f.abs)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := readers.Get().(*reader)
	defer readers.Put(r)

	st := &state{size: f.size, mtimeNS: f.mtime.UnixNano(), ino: f.ino}
	if info, err := fh.Stat(); err == nil { // the file may have changed since the walk
		st.size, st.mtimeNS, st.ino = info.Size(), info.ModTime().UnixNano(), inode(info)
	}
	// Another agent's file is read whole, as the pi session it converts to; it
	// keeps no offsets, so it is never resumed nor put in the text index.
	head := r.buf[:min(len(r.buf), 4096)]
	if n, _ := fh.ReadAt(head, 0); n > 0 {
		if pi, ok, err := foreign(f.abs, head[:n], timeFromNS(st.mtimeNS)); ok {
			if err != nil {
				return nil, err
			}
			st.sum.feed(&r.l, pi)
			st.off = int64(len(pi)) // what the text index reads, in the conversion
			st.listed = st.sum.isSession()
			st.info = st.sum.info(f.path, st.size, timeFromNS(st.mtimeNS))
			return st, nil
		}
	}
	if prev != nil && grewFrom(fh, prev, st, r.buf) {
		st.off, st.tailStart, st.tailHash, st.headHash, st.sum = prev.off, prev.tailStart, prev.tailHash, prev.headHash, prev.sum
		st.resumed = true
	}
	if _, err := fh.Seek(st.off, io.SeekStart); err != nil {
		return nil, err
	}
	buf := r.buf
	have := 0 // bytes of an unfinished line at the start of buf
	pos := st.off
	headDone := st.resumed
	for {
		if have == len(buf) { // one line longer than the buffer
			nb := make([]byte, 2*len(buf))
			copy(nb, buf)
			buf = nb
		}
		n, err := fh.Read(buf[have:])
		chunk := buf[:have+n]
		used := 0
		if st.sum.Phase != phaseOther && !st.sum.Drop {
			used = st.sum.feed(&r.l, chunk)
		} else if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			used = i + 1
		}
		if used > 0 {
			// The last complete line is in this chunk: hash it now, and the
			// file's first bytes when this chunk starts the file.
			start := 0
			if j := bytes.LastIndexByte(chunk[:used-1], '\n'); j >= 0 {
				start = j + 1
			}
			st.tailStart = pos + int64(start)
			st.tailHash = crc64.Checksum(chunk[start:used], crcTable)
			if pos == 0 && used >= headBytes {
				st.headHash = crc64.Checksum(chunk[:headBytes], crcTable)
				headDone = true
			}
			pos += int64(used)
			st.off = pos
			have = copy(buf, chunk[used:])
		} else {
			have = len(chunk)
		}
		if err == io.EOF || (err == nil && pos+int64(have) >= st.size) {
			break // as much as the stat said is read: no need to ask for the EOF
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.path, err)
		}
	}
	if st.off > 0 && !headDone {
		st.headHash = hashRange(fh, 0, min(st.off, headBytes), make([]byte, headBytes))
	}
	final := st.sum
	if have > 0 && final.Phase != phaseOther && !final.Drop {
		final.add(&r.l, buf[:have]) // pi parses an unterminated last line too
	}
	st.listed = final.isSession()
	st.info = final.info(f.path, st.size, timeFromNS(st.mtimeNS))
	if cap(buf) > readBuf {
		r.buf = make([]byte, readBuf) // do not keep a huge buffer in the pool
	}
	return st, nil
}

// grewFrom reports whether fh is prev's file with bytes appended: same inode,
// longer, and the last line prev folded still in place. A file rewritten to the
// same size is read again.
func grewFrom(fh *os.File, prev, now *state, buf []byte) bool {
	if prev.ino != now.ino || prev.off == 0 || now.size <= prev.size {
		return false
	}
	return hashRange(fh, prev.tailStart, prev.off, buf) == prev.tailHash && hashRange(fh, 0, min(prev.off, headBytes), buf) == prev.headHash
}

// headBytes is how much of a file's start is checked before resuming a read.
const headBytes = 4096

// hashRange returns the crc64 of bytes [from, to) of fh, read through buf.
func hashRange(fh *os.File, from, to int64, buf []byte) uint64 {
	var crc uint64
	for from < to {
		n, err := fh.ReadAt(buf[:min(int64(len(buf)), to-from)], from)
		crc = crc64.Update(crc, crcTable, buf[:n])
		from += int64(n)
		if err != nil && from < to {
			return 0
		}
	}
	return crc
}

// progress reports how many of total files have been read.
type progress func(done, total int)

// summarizeAll reads files in parallel, one worker per core. prev holds the
// earlier states by index (nil where there is none). Files that vanish are
// skipped (nil state); other errors stop the scan.
func summarizeAll(files []file, prev []*state, report progress) ([]*state, error) {
	out := make([]*state, len(files))
	if len(files) == 0 {
		return out, nil
	}
	workers := min(runtime.GOMAXPROCS(0), len(files))
	var (
		next     = make(chan int)
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		done     int
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				st, err := summarize(files[i], prev[i])
				mu.Lock()
				switch {
				case err == nil:
					out[i] = st
				case errors.Is(err, os.ErrNotExist):
				case firstErr == nil:
					firstErr = err
				}
				done++
				if report != nil {
					report(done, len(files))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, firstErr
}
