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

	"github.com/arborlog/arbor/internal/inorder"
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
	// headDone: st.headHash is of the first min(st.off, headBytes) bytes, as
	// grewFrom will check it.
	headDone := st.resumed && st.off >= headBytes
	var tail []byte // an unterminated last line
	if st.size-st.off > 2*pieceBytes {
		tail, err = foldPieces(fh, st, &r.l)
	} else {
		var headSet bool
		tail, headSet, err = foldAll(fh, st, r)
		headDone = headDone || headSet
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.path, err)
	}
	if st.off > 0 && !headDone {
		st.headHash = hashRange(fh, 0, min(st.off, headBytes), make([]byte, headBytes))
	}
	final := st.sum
	if len(tail) > 0 && final.Phase != phaseOther && !final.Drop {
		final.add(&r.l, tail) // pi parses an unterminated last line too
	}
	st.listed = final.isSession()
	st.info = final.info(f.path, st.size, timeFromNS(st.mtimeNS))
	return st, nil
}

// foldAll folds st's file from st.off on, a chunk at a time, and returns the
// unterminated last line (if any) and whether it set st.headHash.
func foldAll(fh *os.File, st *state, r *reader) (tail []byte, headSet bool, err error) {
	if _, err := fh.Seek(st.off, io.SeekStart); err != nil {
		return nil, false, err
	}
	buf := r.buf
	defer func() {
		if cap(buf) > readBuf {
			r.buf = make([]byte, readBuf) // do not keep a huge buffer in the pool
		}
	}()
	have := 0 // bytes of an unfinished line at the start of buf
	pos := st.off
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
				headSet = true
			}
			pos += int64(used)
			st.off = pos
			have = copy(buf, chunk[used:])
		} else {
			have = len(chunk)
		}
		if err == io.EOF || (err == nil && pos+int64(have) >= st.size) {
			return buf[:have], headSet, nil // as much as the stat said is read: no need to ask for the EOF
		}
		if err != nil {
			return nil, false, err
		}
	}
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

// foldPieces folds st's file from st.off to st.size as foldAll does, but in
// pieces of about pieceBytes of whole lines, on every core: each piece is
// folded as if a session's header came before it, and the folds are joined
// in order. Only while no header has been seen is a piece folded again,
// where the one before it ended, since the header may be in it.
func foldPieces(fh *os.File, st *state, l *line) (tail []byte, err error) {
	cuts, err := cutLines(fh, st.off, st.size)
	if err != nil {
		return nil, err
	}
	type part struct {
		from  int64
		data  []byte
		short bool    // the file ended before the piece did
		sum   summary // the fold of data's lines after a header
		used  int     // bytes of complete lines
		last  int     // where the last of them starts
		crc   uint64  // its crc64
		err   error
	}
	ended := false // a piece held less than it should have: the file changed, stop there
	err = inorder.Do(len(cuts), 1, func(i, _ int) *part {
		p := &part{from: cuts[i]}
		to := st.size
		if i+1 < len(cuts) {
			to = cuts[i+1]
		}
		p.data = pieceBuf(to - p.from)
		n, err := fh.ReadAt(p.data, p.from)
		if err != nil && !errors.Is(err, io.EOF) {
			p.err = err
			return p
		}
		p.data, p.short = p.data[:n], int64(n) < to-p.from
		r := readers.Get().(*reader)
		p.sum = summary{Phase: phaseSession, Started: true}
		p.used = p.sum.feed(&r.l, p.data)
		readers.Put(r)
		if p.used > 0 {
			p.last = bytes.LastIndexByte(p.data[:p.used-1], '\n') + 1
			p.crc = crc64.Checksum(p.data[p.last:p.used], crcTable)
		}
		return p
	}, func(p *part) error {
		defer putPieceBuf(p.data)
		if p.err != nil || ended {
			return p.err
		}
		if st.sum.Phase == phaseStart {
			st.sum.feed(l, p.data)
		} else {
			st.sum.join(&p.sum)
		}
		if p.used > 0 {
			st.off = p.from + int64(p.used)
			st.tailStart, st.tailHash = p.from+int64(p.last), p.crc
		}
		if p.used < len(p.data) || p.short {
			tail = bytes.Clone(p.data[p.used:])
			ended = true
		}
		return nil
	})
	return tail, err
}

// cutLines returns where the pieces of [from, end) of r start: from, then the
// start of the last line that begins within pieceBytes of the piece before
// (or, when a line is longer than that, of the line after it).
func cutLines(r io.ReaderAt, from, end int64) ([]int64, error) {
	cuts := []int64{from}
	win := make([]byte, 64<<10)
	for prev := from; end-prev > pieceBytes; {
		c, err := lineStartNear(r, prev, prev+pieceBytes, end, win)
		if err != nil {
			return nil, err
		}
		if c < 0 {
			break // the rest is one line
		}
		cuts = append(cuts, c)
		prev = c
	}
	return cuts, nil
}

// lineStartNear returns the start of the last line that starts in (prev, t],
// else of the first that starts in (t, end), else -1.
func lineStartNear(r io.ReaderAt, prev, t, end int64, win []byte) (int64, error) {
	for hi := t; hi > prev; {
		lo := max(prev, hi-int64(len(win)))
		b := win[:hi-lo]
		if _, err := r.ReadAt(b, lo); err != nil {
			if errors.Is(err, io.EOF) {
				return -1, nil // the file shrank
			}
			return -1, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return lo + int64(i) + 1, nil
		}
		hi = lo
	}
	for lo := t; lo < end-1; {
		b := win[:min(int64(len(win)), end-1-lo)]
		n, err := r.ReadAt(b, lo)
		if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
			return lo + int64(i) + 1, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return -1, nil
			}
			return -1, err
		}
		lo += int64(n)
	}
	return -1, nil
}
