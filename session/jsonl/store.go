package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/arborlog/arbor/session"
)

// Durability says when appended entries are fsynced (SPEC §7).
type Durability int

const (
	// Turn fsyncs after every assistant message, every compaction and on close (the default).
	Turn Durability = iota
	// Always fsyncs after every entry.
	Always
	// Never leaves flushing to the operating system.
	Never
)

// ParseDurability reads "always", "turn" or "never".
func ParseDurability(s string) (Durability, error) {
	switch s {
	case "turn", "":
		return Turn, nil
	case "always":
		return Always, nil
	case "never":
		return Never, nil
	}
	return Turn, fmt.Errorf("unknown fsync policy %q: use always, turn or never", s)
}

func (d Durability) String() string {
	return [...]string{"turn", "always", "never"}[d]
}

// repair is what must happen to the file before the first append (SPEC §8).
type repair int

const (
	repairNone      repair = iota
	repairRewrite          // no header or an old version: keep a backup, rewrite atomically
	repairTerminate        // the last line lacks its newline: write one before appending
	repairBlankFile        // empty or only blank lines: write the header first
)

// span is a range of the file this store wrote itself; lead when it begins
// with a newline of its own, which ends whatever line of others' is before it.
type span struct {
	start, end int64
	lead       bool
}

// store persists a Log's appends to one file. Its methods run with the Log's lock held.
//
// Other programs (pi) may append to the same file at any moment, with
// O_APPEND, and never take arbor's lock. So the store never shrinks the file
// on the append path, finds where each of its own lines landed (the
// descriptor's offset after the write), and reads everything else as theirs.
type store struct {
	mu     sync.Mutex
	fs     FS
	path   string
	policy Durability
	lock   *writerLock

	f       File
	size    int64  // [0, size) of the file is accounted for: read, or written by this store
	own     []span // this store's lines past size, in file order, with others' bytes before them
	created bool   // the file exists with a header
	defer_  bool   // hold entries until the first user or assistant message
	header  []byte
	pending []*session.Entry

	repair   repair
	snapshot []*session.Entry // entries to write when the repair rewrites the file
	backup   string           // where the original goes before a rewrite
	repairs  []string         // what the repairs did, in order, for fsck and the caller
	buf      []byte           // reused line buffer: one write(2) per line
	tornAt   int64            // where a torn last line starts, when repairTerminate is for one
	// whole is where the lines readOthers indexed end: size, or the start of
	// a torn last line it left for later.
	whole int64
	// snapEnd is where the bytes the snapshot was read from end, in the file a
	// rewrite replaces: what follows them is others' and is carried over.
	snapEnd int64
	others  []*session.Entry // others' entries read while writing, for the next Refresh
	cuts    [][]byte         // beginnings of others' lines that a line of this store split
	mended  [][]byte         // others' lines put back together, to write again
	// lead: another writer was seen leaving its last line without its
	// newline between its writes (a writer that puts the newline first), so
	// every line of this store begins with a newline of its own: none can be
	// glued onto a line of that writer begun after the store's last look.
	lead   bool
	broken error // the path no longer names the open file: every write fails with this
	closed bool
}

var _ session.Store = (*store)(nil)

// settle is how long a tail without its newline is watched for the rest of a
// write in flight before it is taken for a torn line.
var settle = []time.Duration{time.Millisecond, 4 * time.Millisecond, 16 * time.Millisecond}

// closeWait is how long Close waits, at most, for a line in flight at the
// end of the file to be finished before it writes again a line put back
// together (about a quarter of a second, only while one waits).
var closeWait = []time.Duration{time.Millisecond, 4 * time.Millisecond, 16 * time.Millisecond, 32 * time.Millisecond, 64 * time.Millisecond, 128 * time.Millisecond}

// Refresh returns entries another program appended since this store last looked.
func (s *store) Refresh() ([]*session.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("%s: session is closed", s.path)
	}
	if s.broken != nil {
		return nil, s.broken
	}
	if !s.created || s.f == nil {
		return nil, nil
	}
	stash := s.others
	s.others = nil
	if s.repair == repairRewrite {
		// The rewrite has not happened yet: index what others appended to the
		// original since it was read (the rewrite carries those bytes over),
		// and leave the fragment, if any, to the rewrite.
		tornAt := s.tornAt
		out, err := s.readOthers()
		s.repair, s.tornAt = repairRewrite, tornAt
		return append(stash, out...), err
	}
	out, err := s.readOthers()
	if err == nil {
		if err = s.writeMended(); errors.Is(err, errLater) {
			err = nil
		}
	}
	out = append(append(stash, out...), s.others...)
	s.others = nil
	return out, err
}

// readOthers parses the complete lines others appended past s.size (skipping
// this store's own lines) and advances s.size. A last line without its newline
// may be a write still in flight: it is read again for a moment; a fragment
// that stays is left in place, and the next append first ends it with a
// newline (repairTerminate), so no line is glued onto it and no byte that
// another writer could be completing is moved or cut.
func (s *store) readOthers() ([]*session.Entry, error) {
	for try := 0; ; try++ {
		st, err := s.f.Stat()
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", s.path, err)
		}
		end := st.Size()
		if end < s.size {
			return nil, fmt.Errorf("%s shrank from %d to %d bytes while open: another program rewrote it; reopen the session", s.path, s.size, end)
		}
		if end == s.size {
			return nil, nil
		}
		buf := make([]byte, end-s.size)
		if _, err := s.f.ReadAt(buf, s.size); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", s.path, err)
		}
		// Others' bytes are the pieces between this store's own spans. A piece
		// followed by an own line ends where that line starts: its unfinished
		// last line, if any, had the own line glued on and is unreadable, unless
		// the own line began with a newline of its own, which ended it.
		var out []*session.Entry
		at := int64(0)
		for _, o := range s.own {
			piece := buf[at : o.start-s.size]
			if !o.lead {
				piece = piece[:bytes.LastIndexByte(piece, '\n')+1]
			}
			out = append(out, s.parseOthers(piece)...)
			at = o.end - s.size
		}
		last := buf[at:]
		complete := bytes.LastIndexByte(last, '\n') + 1
		s.whole = end
		switch {
		case buf[len(buf)-1] == '\n':
			s.repair = repairNone
		case len(last) == 0:
			// This store's own line ends the file unfinished (a failed write that could not be cut).
			s.repair = repairTerminate
		case session.IsCompleteJSON(last[complete:]):
			// A whole line whose newline is missing: take it, and end it before
			// appending. Its writer puts the newline first, or has yet to write
			// it: its next line may begin just before this store's write.
			complete, s.repair, s.lead = len(last), repairTerminate, true
		case try < len(settle):
			time.Sleep(settle[try])
			continue
		default:
			// A torn line (its writer died, or writes lines in pieces): leave it,
			// as an unreadable line that fsck reports, ended by the next append.
			s.repair, s.tornAt = repairTerminate, end-int64(len(last)-complete)
			s.whole = s.tornAt
		}
		s.own, s.size = nil, end
		return append(out, s.parseOthers(last[:complete])...), nil
	}
}

// Write persists one entry.
func (s *store) Write(e *session.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%s: session is closed", s.path)
	}
	if s.broken != nil {
		return s.broken
	}
	if !s.created {
		s.pending = append(s.pending, e)
		if s.defer_ && !HasConversation(s.pending) {
			return nil
		}
		err := s.create()
		if err != nil {
			s.pending = s.pending[:len(s.pending)-1]
		}
		return err
	}
	if err := s.put(e.Raw(), s.policy.SyncsAfter(e), false); err != nil {
		return err
	}
	// The entry is in the file on a line of its own: acknowledged. Another
	// writer's line it split, once whole again, is written after it; what
	// keeps that from working now fails the next append.
	_ = s.writeMended()
	return nil
}

// put appends one line on a line of its own (SPEC §7, other writers) and
// returns once it is there: the bytes right before it are a newline, read
// back after the write. A line written again (again: another writer's line
// put back together) begins with a newline of its own and is never written
// while the file ends in another writer's unfinished line, which it would
// split: then it returns errLater, and the line waits for a later append or
// for Close.
func (s *store) put(raw []byte, sync, again bool) error {
	lead := again || s.lead
	for {
		if s.repair == repairRewrite {
			if err := s.fix(); err != nil {
				return err
			}
		}
		for look := 0; look < looks && s.grew(); look++ {
			// Others appended since the last look (while the entry was being
			// made): look again right before the write, so a line they have
			// begun is finished (or ended) first.
			if err := s.lookAgain(); err != nil {
				return err
			}
		}
		if again && s.unfinishedTail() {
			return errLater
		}
		// A last line without its newline is ended by the newline this line
		// begins with, in the same write(2): no line of another writer can
		// come between them.
		ends, torn := s.repair == repairTerminate, s.unfinishedTail()
		lead = lead || ends
		n, mark := len(s.own), s.size
		line := raw
		if lead {
			line = append([]byte{'\n'}, raw...)
		}
		s.repair = repairNone
		if err := s.appendLines([][]byte{line}, sync); err != nil {
			if ends {
				s.repair = repairTerminate
			}
			return err
		}
		if ends {
			s.repairs = append(s.repairs, fmt.Sprintf("ended the last line of %s, which lacked its newline (an unreadable fragment stays in place as a line of its own)", s.path))
		}
		start := s.size - int64(len(line)+1)
		if len(s.own) > n {
			start = s.own[n].start
			s.own[n].lead = lead
		} else if !ends {
			// Right after the bytes the store had accounted for, which end in a newline.
			return nil
		}
		prev, unfinished := s.unfinishedBefore(start)
		if !unfinished {
			return nil
		}
		if lead {
			// Another writer's line, ended by this line's newline: whole, it is
			// read in place; unfinished (a torn line, or one begun after the
			// last look), it is split, and put back together when its rest
			// comes.
			switch {
			case prev == nil:
			case !session.IsCompleteJSON(prev):
				if len(s.cuts) < maxCuts {
					s.cuts = append(s.cuts, prev)
				}
			case torn && start-int64(len(prev)) < mark:
				// The torn line the last look left unread was finished
				// meanwhile: read it now (readOthers reads only past mark).
				if e, ok := session.ParseLine(prev); ok {
					s.others = append(s.others, e)
				}
			}
			return nil
		}
		// Another writer began a line after this store last looked and before
		// its write(2) landed: the line went onto the end of it and is
		// unreadable there. It is not acknowledged until it is in the file on
		// a line of its own: written again, after a newline of its own in the
		// same write(2), which no line of another writer can precede.
		waiting := 0
		switch {
		case prev == nil:
		case session.IsCompleteJSON(prev):
			// The other line was whole (its writer puts the newline first):
			// taken now, and written again whole after this one.
			if e, ok := session.ParseLine(prev); ok {
				s.others = append(s.others, e)
			}
			s.mended = append(s.mended, prev)
			s.lead = true
		case len(s.cuts) < maxCuts:
			// Split: its beginning is kept, to be put back together with its rest.
			s.cuts = append(s.cuts, prev)
			waiting = len(s.cuts)
		}
		if err := s.lookAgain(); err != nil {
			return err
		}
		for _, d := range settle {
			if len(s.cuts) < waiting || waiting == 0 {
				break
			}
			// The rest of the other writer's line is usually a moment away.
			time.Sleep(d)
			if s.grew() {
				if err := s.lookAgain(); err != nil {
					return err
				}
			}
		}
		lead = true
	}
}

// errLater: a line put back together waits, as the file ends in another
// writer's unfinished line.
var errLater = errors.New("jsonl: another program's line is being written at the end of the file")

// unfinishedTail reports whether the file ended, at the last look, in
// another writer's line without its newline that is not a whole JSON value:
// a write still in flight, or a torn line.
func (s *store) unfinishedTail() bool {
	return s.repair == repairTerminate && s.whole < s.size
}

// maxCuts bounds the other writers' line beginnings kept at once, and
// maxCut the length of one.
const maxCuts, maxCut = 16, 1 << 20

// unfinishedBefore reads back from start, where this store's line landed, to
// the newline before it: glued is true when what is there is another
// writer's unfinished line (not JSON white space), returned when it is not
// longer than maxCut.
func (s *store) unfinishedBefore(start int64) (cut []byte, glued bool) {
	var back []byte
	for at := start; at > 0; {
		from := max(at-64<<10, 0)
		if at == start {
			from = max(at-64, 0) // most often a newline is right there
		}
		buf := make([]byte, at-from)
		if n, err := s.f.ReadAt(buf, from); n < len(buf) && err != nil {
			return nil, true
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			back = append(buf[i+1:], back...)
			break
		}
		back = append(buf, back...)
		if len(back) > maxCut {
			return nil, true
		}
		at = from
	}
	if len(bytes.Trim(back, " \t\r")) == 0 {
		return nil, false
	}
	return back, true
}

// writeMended appends the other writers' lines that were put back together
// (mend), each on a line of its own, as this store's lines: their first
// copy, split by a line of this store, is unreadable.
func (s *store) writeMended() error {
	for len(s.mended) > 0 {
		m := s.mended[0]
		s.mended = s.mended[1:]
		if err := s.put(m, false, true); err != nil {
			s.mended = append([][]byte{m}, s.mended...)
			return err
		}
		s.repairs = append(s.repairs, fmt.Sprintf("wrote again a line another program was writing to %s when arbor's line split it (%d bytes; both pieces stay as unreadable lines)", s.path, len(m)))
	}
	return nil
}

// parseOthers parses complete lines others appended. A line that is not an
// entry may be the rest of another writer's line that one of this store's
// lines split (cuts): put back together with its beginning, the line is
// indexed, and written again whole (writeMended).
func (s *store) parseOthers(data []byte) []*session.Entry {
	if len(s.cuts) == 0 {
		return session.ParseEntries(data)
	}
	var out []*session.Entry
	for ln := range bytes.Lines(data) {
		t := bytes.TrimRight(ln, "\r\n")
		if len(bytes.TrimSpace(t)) == 0 {
			continue
		}
		if e, ok := session.ParseLine(t); ok {
			out = append(out, e)
			continue
		}
		for i, c := range s.cuts {
			whole := append(slices.Clip(c), t...)
			if !session.IsCompleteJSON(whole) {
				continue
			}
			if e, ok := session.ParseLine(whole); ok {
				out = append(out, e)
				s.mended = append(s.mended, whole)
				s.cuts = slices.Delete(s.cuts, i, i+1)
				break
			}
		}
	}
	return out
}

// looks bounds how often one append looks again at a file that grew since
// the last look.
const looks = 3

// lookAgain reads what others appended, for the next Refresh to index; a
// fragment that stays is left for put to end.
func (s *store) lookAgain() error {
	more, err := s.readOthers()
	if err != nil {
		return err
	}
	s.others = append(s.others, more...)
	return nil
}

// grew reports whether the file is longer than this store knows it to be.
func (s *store) grew() bool {
	end := s.size
	if len(s.own) > 0 {
		end = s.own[len(s.own)-1].end
	}
	st, err := s.f.Stat()
	return err == nil && st.Size() != end
}

// writeBatch is how many bytes of whole lines appendLines gives one write(2):
// a new session of a million entries (a fork) is not written a line at a
// time. A longer line goes alone.
const writeBatch = 1 << 20

// appendLines writes the lines, as many whole ones to a write(2) as fit in
// writeBatch, and records where they landed (O_APPEND puts each write's bytes
// together at the end). Before it returns nil, it checks that the path still
// names the file it wrote to: a line written to a file that was replaced
// (renamed over by an editor or a sync tool) is never acknowledged.
//
// On a failed or short write, or a failed sync, the lines of this call are cut
// from the file only when nothing follows them (no other program appended
// since); otherwise they stay, and a fragment gets its newline before the next
// append. The file never shrinks by a byte another program wrote.
func (s *store) appendLines(lines [][]byte, sync bool) error {
	first := len(s.own)
	mark := s.size
	single := len(lines) == 1
	if !single && cap(s.buf) < writeBatch {
		s.buf = make([]byte, 0, writeBatch) // one buffer for every write
	}
	// An open store keeps no more than an ordinary line's buffer between calls.
	defer func() {
		if cap(s.buf) > 64<<10 {
			s.buf = nil
		}
	}()
	var one int64 // the bytes of a single whole line, placed by the size read after it
	for len(lines) > 0 {
		buf, k := s.buf[:0], 0
		for k < len(lines) && (k == 0 || len(buf)+len(lines[k])+1 <= writeBatch) {
			buf = append(append(buf, lines[k]...), '\n')
			k++
		}
		lines = lines[k:]
		if cap(buf) <= writeBatch {
			s.buf = buf
		}
		n, err := s.f.Write(buf)
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		switch {
		case n > 0 && single && err == nil:
			one = int64(n)
		case n > 0:
			s.wrote(int64(n))
		}
		if err != nil {
			s.undo(mark, first, n > 0)
			return fmt.Errorf("append to %s: %w (the entry was not kept; free space or fix the disk, then retry)", s.path, err)
		}
	}
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w (the entry may be in the file but was not acknowledged)", s.path, err)
	}
	if one > 0 {
		s.landed(one, st.Size())
	}
	if sync {
		if err := s.f.Sync(); err != nil {
			s.undo(mark, first, false)
			return fmt.Errorf("fsync %s: %w (the entry was not kept)", s.path, err)
		}
	}
	return s.checkPath(st)
}

// landed records a line of n bytes this store has just written, given the
// file's size right after: when the file grew by exactly n it ends the file;
// otherwise another program appended too, and the descriptor's offset says
// where the line is (wrote).
func (s *store) landed(n, size int64) {
	if len(s.own) == 0 && size == s.size+n {
		s.size = size
		return
	}
	s.wrote(n)
}

// wrote records that the last write put n bytes at the descriptor's offset.
func (s *store) wrote(n int64) {
	end, err := s.f.Seek(0, io.SeekCurrent)
	if err != nil {
		// Without the offset, assume the bytes follow what is accounted for.
		end = s.size + n
		if len(s.own) > 0 {
			end = s.own[len(s.own)-1].end + n
		}
	}
	start := end - n
	if len(s.own) == 0 && start == s.size {
		s.size = end
		return
	}
	s.own = append(s.own, span{start: start, end: end})
}

// undo takes back what one appendLines call wrote (the bytes from mark on,
// and own[first:]): it cuts them when they are one run that ends the file,
// else leaves them, and a fragment gets its newline before the next append.
func (s *store) undo(mark int64, first int, fragment bool) {
	added := s.own[first:]
	from, end := mark, s.size
	if len(added) > 0 {
		if s.size != mark || !contiguous(added) {
			if fragment {
				s.repair = repairTerminate
			}
			return
		}
		from, end = added[0].start, added[len(added)-1].end
	}
	if from == end {
		return
	}
	if st, err := s.f.Stat(); err == nil && st.Size() == end && s.f.Truncate(from) == nil {
		s.own = s.own[:first]
		s.size = min(s.size, from)
		return
	}
	if fragment {
		s.repair = repairTerminate
	}
}

func contiguous(ss []span) bool {
	for i := 1; i < len(ss); i++ {
		if ss[i].start != ss[i-1].end {
			return false
		}
	}
	return true
}

// checkPath fails when the path no longer names the open file: it was
// renamed over or removed, or its folder was moved away (and maybe replaced
// by a copy). What was written then went to a file nobody will read. It runs
// after every write, before the entry is acknowledged, and compares the
// path's file with the open one (device and inode) every time: an entry
// acknowledged after a look at the path is in the file the path named at
// that moment, so a copy made later holds it.
func (s *store) checkPath(mine fs.FileInfo) error {
	now, err := s.fs.Stat(s.path)
	if err == nil && os.SameFile(mine, now) {
		return nil
	}
	how := "was replaced by another file (an editor, sed -i or a sync tool renamed a new file over it, or its folder was moved and replaced)"
	if errors.Is(err, fs.ErrNotExist) {
		how = "was removed or renamed, or its folder was"
	}
	s.broken = fmt.Errorf("%s %s while arbor had it open: the last entry went to the old file and was not kept, and nothing more is written; reopen the session, which now reads what is at %s, and append again", s.path, how, s.path)
	return s.broken
}

// create writes a new file: the header and every entry held so far. A file
// that failed part-way stays open and cut back to where it started, so a retry
// writes everything once.
func (s *store) create() error {
	dir := filepath.Dir(s.path)
	if s.f == nil {
		if err := s.openNew(dir); err != nil {
			return err
		}
	}
	header := s.header
	if s.repair == repairTerminate || s.size > 0 && !s.endsWithNewline() {
		// A file of blank lines: keep them, and start the header on a line of its own.
		header = append([]byte{'\n'}, header...)
		s.repair = repairNone
	}
	lines := [][]byte{header}
	for _, e := range s.pending {
		lines = append(lines, e.Raw())
	}
	mark, first := s.size, len(s.own)
	if err := s.appendLines(lines, s.policy != Never); err != nil {
		return err
	}
	if s.policy != Never {
		if err := s.fs.SyncDir(dir); err != nil {
			s.undo(mark, first, false)
			return fmt.Errorf("fsync %s: %w (the new session was not kept)", dir, err)
		}
	}
	s.created, s.pending = true, nil
	return nil
}

func (s *store) endsWithNewline() bool {
	var last [1]byte
	_, err := s.f.ReadAt(last[:], s.size-1)
	return err == nil && last[0] == '\n'
}

// openNew opens (creating it) the session's file for appending and takes the
// writer lock on it.
func (s *store) openNew(dir string) error {
	if err := s.fs.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	flags := os.O_RDWR | os.O_APPEND | os.O_CREATE | os.O_EXCL
	if s.repair == repairBlankFile {
		flags &^= os.O_CREATE | os.O_EXCL
	}
	f, err := s.fs.OpenFile(s.path, flags, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: a file appeared there since the session was opened; open it instead", s.path)
		}
		return fmt.Errorf("create %s: %w", s.path, err)
	}
	if s.lock == nil {
		l, err := lockFile(s.path)
		if err != nil {
			f.Close()
			return err
		}
		s.lock = l
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if !os.SameFile(st, s.lock.info) {
		f.Close()
		return fmt.Errorf("create %s: the file was replaced while it was being opened; try again", s.path)
	}
	if s.repair == repairBlankFile {
		s.repair = repairNone
		s.repairs = append(s.repairs, fmt.Sprintf("wrote a session header to %s, which was empty", s.path))
	}
	s.f, s.size = f, st.Size()
	return nil
}

// fix repairs the file before the first append (SPEC §8), keeping every byte
// the user had.
func (s *store) fix() error {
	switch s.repair {
	case repairNone:
		return nil
	case repairTerminate:
		n := len(s.own)
		if err := s.appendLines([][]byte{nil}, false); err != nil {
			return err
		}
		at := s.size - 1
		if len(s.own) > n {
			at = s.own[n].start
		}
		if cut, split := s.unfinishedBefore(at); split && cut != nil && len(s.cuts) < maxCuts && !session.IsCompleteJSON(cut) {
			// Another writer's unfinished line, ended here: should its rest
			// come, the line is put back together and written again whole.
			s.cuts = append(s.cuts, cut)
		}
		s.repairs = append(s.repairs, fmt.Sprintf("ended the last line of %s, which lacked its newline (an unreadable fragment stays in place as a line of its own)", s.path))
	case repairRewrite:
		if err := s.rewrite(); err != nil {
			return err
		}
	}
	s.repair = repairNone
	return nil
}

// moveTornTail, for an explicit repair (fsck --repair) under the lock, copies a
// torn last line to <file>.torn and cuts it from the file, but only when the
// file still ends with that fragment and has stopped growing: bytes another
// program may still be writing are never cut.
func (s *store) moveTornTail() error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if s.repair != repairTerminate || s.tornAt <= 0 || st.Size() <= s.tornAt {
		return nil
	}
	frag, err := readFrom(s.f, s.tornAt)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	if bytes.IndexByte(frag, '\n') >= 0 || session.IsCompleteJSON(frag) {
		return nil
	}
	torn := freeName(s.fs, TornPath(s.path))
	if err := writeAtomic(s.fs, torn, frag); err != nil {
		return fmt.Errorf("save the torn last line of %s to %s: %w (nothing was changed)", s.path, torn, err)
	}
	if now, err := s.f.Stat(); err != nil || now.Size() != st.Size() {
		return fmt.Errorf("%s grew while its torn last line was being saved: another program is writing it; the fragment stays (a copy is in %s)", s.path, torn)
	}
	if err := s.f.Truncate(s.tornAt); err != nil {
		return fmt.Errorf("truncate %s to its last complete line: %w (the fragment is saved in %s)", s.path, err, torn)
	}
	s.size, s.repair, s.tornAt = s.tornAt, repairNone, 0
	s.repairs = append(s.repairs, fmt.Sprintf("moved the torn last line of %s (%d bytes) to %s", s.path, len(frag), torn))
	return nil
}

// rewrite replaces the file with the header and the snapshot of entries,
// through a temporary file, after keeping the original as a backup. The new
// file is locked before it takes the path, and whatever others append to the
// old one until then (and, through descriptors opened before, until this
// store looks last) is carried over to its end.
func (s *store) rewrite() error {
	orig, err := readAll(s.f)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	bak := freeName(s.fs, s.backup)
	if err := writeAtomic(s.fs, bak, orig); err != nil {
		return fmt.Errorf("back up %s to %s: %w (nothing was changed)", s.path, bak, err)
	}
	var b bytes.Buffer
	b.Write(s.header)
	b.WriteByte('\n')
	for _, e := range s.snapshot {
		b.Write(e.Raw())
		b.WriteByte('\n')
	}
	tmp := freeName(s.fs, s.path+".tmp")
	nf, err := s.fs.OpenFile(tmp, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("rewrite %s: %w (the original is kept in %s)", s.path, err, bak)
	}
	fail := func(err error) error {
		nf.Close()
		s.fs.Remove(tmp)
		return fmt.Errorf("rewrite %s: %w (the original is kept in %s)", s.path, err, bak)
	}
	nl, err := lockFile(tmp)
	if err != nil {
		return fail(err)
	}
	failLocked := func(err error) error {
		nl.release()
		return fail(err)
	}
	if _, err := nf.Write(b.Bytes()); err != nil {
		return failLocked(err)
	}
	// Everything past what the snapshot was read from is others': carried over
	// as it is, and what of it was indexed already is not read again.
	carried := s.snapEnd
	indexed := s.whole - s.snapEnd
	carry := func(dst File) error {
		more, err := readFrom(s.f, carried)
		if err != nil || len(more) == 0 {
			return err
		}
		if !bytes.HasSuffix(more, []byte{'\n'}) {
			more = append(more, '\n')
		}
		if _, err := dst.Write(more); err != nil {
			return err
		}
		carried += int64(len(more))
		return nil
	}
	if err := carry(nf); err != nil {
		return failLocked(err)
	}
	if err := nf.Sync(); err != nil {
		return failLocked(err)
	}
	if err := s.fs.Rename(tmp, s.path); err != nil {
		return failLocked(err)
	}
	if err := s.fs.SyncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("rewrite %s: %w (the original is kept in %s)", s.path, err, bak)
	}
	// Last look: what a writer that opened the old file before the rename wrote since.
	if err := carry(nf); err != nil {
		return fmt.Errorf("rewrite %s: carry over what was appended during the rewrite: %w (the original is kept in %s)", s.path, err, bak)
	}
	s.f.Close()
	s.lock.release()
	s.f, s.lock, s.own, s.snapshot = nf, nl, nil, nil
	// What was carried over and not indexed yet is read as others' lines.
	s.size = int64(b.Len()) + max(indexed, 0)
	s.whole = s.size
	s.repairs = append(s.repairs, fmt.Sprintf("kept the original of %s as %s and rewrote it with a version %d header", s.path, bak, session.CurrentVersion))
	return nil
}

func readAll(f File) ([]byte, error) { return readFrom(f, 0) }

// readFrom reads f from off to its current end.
func readFrom(f File, off int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= off {
		return nil, nil
	}
	buf := make([]byte, st.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

func (s *store) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.created || s.closed {
		return nil
	}
	return s.create()
}

func (s *store) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if !s.created && len(s.pending) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d for %s (Flush writes them)", ErrUnwritten, len(s.pending), s.path))
	}
	if len(s.cuts)+len(s.mended) > 0 && s.f != nil && s.created && s.broken == nil && s.repair != repairRewrite {
		// Another writer's line that a line of this store split: a last
		// moment for its rest, to write it again whole, and for a line still
		// being written at the end of the file, which writing it would split.
		for i := 0; ; i++ {
			if err := s.writeMended(); err != nil && !errors.Is(err, errLater) {
				errs = append(errs, err)
				break
			}
			rest := len(s.cuts) > 0 && i < len(settle)
			if !rest && len(s.mended) == 0 || i == len(closeWait) {
				break
			}
			time.Sleep(closeWait[i])
			if s.grew() {
				if _, err := s.readOthers(); err != nil {
					break
				}
			}
		}
		if n := len(s.mended); n > 0 {
			s.repairs = append(s.repairs, fmt.Sprintf("did not write again %d line(s) of another program that arbor's lines split in %s: the file ended in a line still being written, which writing them would have split (the pieces stay as unreadable lines)", n, s.path))
		}
	}
	if s.f != nil {
		if s.policy != Never {
			if err := s.f.Sync(); err != nil {
				errs = append(errs, fmt.Errorf("fsync %s: %w", s.path, err))
			}
		}
		if err := s.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", s.path, err))
		}
	}
	if err := s.lock.release(); err != nil {
		errs = append(errs, fmt.Errorf("unlock %s: %w", s.path, err))
	}
	return errors.Join(errs...)
}
