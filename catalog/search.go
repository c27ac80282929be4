package catalog

import (
	"bytes"
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// The text index: one FTS5 row per entry with text, whose rowid is the file's
// id in the high bits and the byte offset of the entry's line in the low bits
// (offsetBits). The table keeps no copy of the text (content=''): a hit's
// snippet is cut from the session file itself, so the index stays small and
// fast to build. files.text_off says how far each file's text is indexed; it
// only grows, except when a file is replaced, which drops its rows.

// Hit is one entry that matched a search (SPEC §10).
type Hit struct {
	Path      string `json:"path"`
	SessionID string `json:"sessionId"`
	EntryID   string `json:"entryId"`
	Role      string `json:"role"`
	Timestamp string `json:"timestamp"`
	Snippet   string `json:"snippet"`
	// Marks are the byte ranges of Snippet that matched, for highlighting.
	Marks [][2]int `json:"-"`
}

// SearchOptions limit a search.
type SearchOptions struct {
	Limit    int  // at most this many hits; 0 for all
	Archived bool // include archived sessions, which are left out otherwise (as from List)
}

// Search finds the entries in scope that match q, best first: by relevance
// (BM25) for words and phrases, newest first for a regular expression.
func (c *Catalog) Search(s Scope, q Query, opt SearchOptions) ([]Hit, error) {
	es, err := c.scan(s, true)
	if err != nil {
		return nil, err
	}
	if !opt.Archived {
		arch, err := c.archived()
		if err != nil {
			return nil, err
		}
		es = slices.DeleteFunc(es, func(e entry) bool { return arch[e.abs] })
	}
	if q.Regex == nil && c.idx != nil {
		if _, err := c.indexTexts(es); err == nil {
			hits, err := c.searchIndex(es, q, opt)
			if err == nil {
				return hits, nil
			}
			if !isDamage(err) {
				return nil, err
			}
			c.dropIndex()
		}
	}
	return c.searchFiles(es, q, opt)
}

// Update brings the index of the sessions in scope up to date, full text
// included; rebuild deletes the index first.
func (c *Catalog) Update(s Scope, rebuild bool) (UpdateStats, error) {
	if rebuild {
		c.dropIndex()
	}
	var st UpdateStats
	files, roots, err := s.walk()
	if err != nil {
		return st, err
	}
	if x := c.index(); x != nil {
		old, err := x.load(roots)
		if err == nil {
			for _, f := range files {
				if r := old[f.abs]; r == nil || !r.st.matches(f) {
					st.FilesRead++
					st.BytesRead += f.size
				}
			}
		}
	}
	es, err := c.scan(s, true)
	if err != nil {
		return st, err
	}
	st.Sessions = len(es)
	if c.idx == nil {
		return st, fmt.Errorf("catalog: cannot open the index in %s (%v); set ARBOR_DIR to a writable folder", c.home, c.idxErr)
	}
	n, err := c.indexTexts(es)
	if n > st.BytesRead {
		st.BytesRead = n
	}
	return st, err
}

// textJob is a file whose text index is behind its summary.
type textJob struct {
	e          *entry
	from, to   int64
	mtime, ino int64 // the version of the file the offsets are of
}

// piece is a run of whole lines of a job's file, [from, to), and the text of
// its entries once a worker has extracted it.
type piece struct {
	job      *textJob
	from, to int64
	data     []byte
	docs     []doc
	last     bool // the job's last piece
	err      error
	ready    chan struct{} // closed once docs (or err) are set
}

// pieceBytes is about how many bytes of lines a piece holds: a large file is
// extracted a piece at a time, by the workers, while the writer indexes the
// pieces before it. (A test makes it small.)
var pieceBytes int64 = 4 << 20

// indexTexts adds the text of whatever the index has not indexed yet (files
// that are new or grew) and returns how many bytes it read. One goroutine
// cuts the files into pieces of whole lines, workers extract their text in
// parallel, and one writer feeds SQLite in order, committing in batches so
// that other processes get their turn.
func (c *Catalog) indexTexts(es []entry) (int64, error) {
	x := c.idx
	type behind struct{ from, to, mtime, ino int64 }
	offs := map[int64]behind{} // by fid
	rows, err := x.db.Query("SELECT fid, text_off, off, mtime, ino FROM files WHERE text_off < off")
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var fid int64
		var b behind
		if err := rows.Scan(&fid, &b.from, &b.to, &b.mtime, &b.ino); err != nil {
			rows.Close()
			return 0, err
		}
		offs[fid] = b
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	var jobs []*textJob
	for i := range es {
		e := &es[i]
		if o, ok := offs[e.fid]; ok && e.fid != 0 {
			jobs = append(jobs, &textJob{e: e, from: o.from, to: o.to, mtime: o.mtime, ino: o.ino})
		}
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	// FTS5 writes a segment whenever a rowid is not above the previous one, so
	// rows go in ascending rowid order: by file id, then by offset.
	slices.SortFunc(jobs, func(a, b *textJob) int { return cmp.Compare(a.e.fid, b.e.fid) })

	// ahead bounds how many pieces are cut before the writer consumes them, so
	// memory stays small however large the files are.
	ahead := make(chan struct{}, 4*runtime.GOMAXPROCS(0))
	order := make(chan *piece, cap(ahead)) // to the writer, in order
	work := make(chan *piece)              // to the workers
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(work)
		for _, j := range jobs {
			if !cutPieces(j, func(p *piece) bool {
				select {
				case ahead <- struct{}{}:
				case <-stop:
					return false
				}
				p.ready = make(chan struct{})
				order <- p
				if p.err != nil {
					close(p.ready)
				} else {
					work <- p
				}
				return true
			}) {
				return
			}
		}
	}()
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				p.docs = extractLines(p.data, p.from)
				putPieceBuf(p.data)
				p.data = nil
				close(p.ready)
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)

	const batchBytes = 32 << 20
	var tx *sql.Tx
	var ins textInserter
	var upd *sql.Stmt
	begin := func() error {
		var err error
		if tx, err = x.db.Begin(); err != nil {
			return err
		}
		if ins, err = newTextInserter(tx); err != nil {
			return err
		}
		// Only advance from where this process started, in the version of the file
		// it read: another process may have indexed the same bytes meanwhile, or
		// found the file replaced and dropped its rows.
		upd, err = tx.Prepare("UPDATE files SET text_off = ? WHERE fid = ? AND text_off = ? AND mtime = ? AND ino = ?")
		return err
	}
	abort := func() {
		if tx != nil {
			tx.Rollback()
			tx = nil
		}
	}
	defer abort()
	var batch, done int64
	jobsDone := 0
	for p := range order {
		<-p.ready
		<-ahead
		j := p.job
		if p.last {
			jobsDone++
		}
		if p.err != nil {
			if !errors.Is(p.err, os.ErrNotExist) {
				return done, p.err
			}
			continue
		}
		if tx == nil {
			if err := begin(); err != nil {
				return done, err
			}
		}
		// Each piece advances the file's text_off from its start to its end,
		// so a batch may end within a file.
		res, err := upd.Exec(p.to, j.e.fid, p.from, j.mtime, j.ino)
		if err != nil {
			return done, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			for _, d := range p.docs {
				if err := ins.add(j.e.fid<<offsetBits|d.off, d.text); err != nil {
					return done, err
				}
			}
		}
		batch += p.to - p.from
		done += p.to - p.from
		p.docs = nil
		if p.last && c.Progress != nil {
			c.Progress(jobsDone, len(jobs))
		}
		if batch >= batchBytes {
			if err := ins.flush(); err != nil {
				return done, err
			}
			if err := tx.Commit(); err != nil {
				tx = nil
				return done, err
			}
			tx, batch = nil, 0
		}
	}
	if tx != nil {
		if err := ins.flush(); err != nil {
			return done, err
		}
		err := tx.Commit()
		tx = nil
		return done, err
	}
	return done, nil
}

// rowsPerInsert is how many text rows one INSERT statement carries: as many
// as SQLite allows (32766 parameters). A statement per row costs about as
// much to run (database/sql, binding, starting and ending the VM) as FTS5
// spends indexing a short text. But FTS5 writes its pending terms as a new
// segment at the end of every statement that inserts several rows (SQLite
// opens a statement savepoint for it), so the fewer statements the fewer
// segments (see automerge in index.go).
const rowsPerInsert = 16383

// textInserter adds rows to the text index rowsPerInsert rows at a time.
// Rows must come in ascending rowid order (see indexTexts), and flush must be
// called before the transaction commits.
type textInserter struct {
	tx   *sql.Tx
	full *sql.Stmt // inserts rowsPerInsert rows
	args []any     // the queued rows: rowid, body, rowid, body, ...
}

func newTextInserter(tx *sql.Tx) (textInserter, error) {
	full, err := tx.Prepare(insertTexts(rowsPerInsert))
	return textInserter{tx: tx, full: full, args: make([]any, 0, 2*rowsPerInsert)}, err
}

// insertTexts is the statement that inserts n rows into texts.
func insertTexts(n int) string {
	return "INSERT INTO texts(rowid, body) VALUES" + strings.Repeat("(?,?),", n-1) + "(?,?)"
}

// add queues a row, and writes the queue when it is full.
func (w *textInserter) add(rowid int64, body string) error {
	w.args = append(w.args, rowid, body)
	if len(w.args) < 2*rowsPerInsert {
		return nil
	}
	_, err := w.full.Exec(w.args...)
	w.args = w.args[:0]
	return err
}

// flush writes the queued rows.
func (w *textInserter) flush() error {
	if len(w.args) == 0 {
		return nil
	}
	_, err := w.tx.Exec(insertTexts(len(w.args)/2), w.args...)
	w.args = w.args[:0]
	return err
}

// cutPieces hands the complete lines of j's file in [j.from, j.to) to emit,
// in pieces of about pieceBytes (a longer line makes a piece of its own), and
// reports whether emit took them all. A file that cannot be read gives one
// piece with the error; one that shrank ends early: the next listing reads it
// again.
func cutPieces(j *textJob, emit func(*piece) bool) bool {
	src, err := textSource(j.e.abs)
	if err != nil {
		return emit(&piece{job: j, err: err, last: true})
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	for from := j.from; from < j.to; {
		data := pieceBuf(min(pieceBytes, j.to-from))
		if _, err := src.ReadAt(data, from); err != nil {
			return emit(endPiece(j, from, err))
		}
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		} else {
			// One line longer than a piece: find its end, then read it into a
			// buffer of its size (doubling one would cost up to three times it).
			putPieceBuf(data)
			end, err := lineEnd(src, from+int64(len(data)), j.to)
			if err != nil || end < 0 { // end < 0: no longer the lines that were summarized
				return emit(endPiece(j, from, err))
			}
			data = pieceBuf(end - from)
			if _, err := src.ReadAt(data, from); err != nil {
				return emit(endPiece(j, from, err))
			}
		}
		to := from + int64(len(data))
		if !emit(&piece{job: j, from: from, to: to, data: data, last: to == j.to}) {
			return false
		}
		from = to
	}
	return true
}

// endPiece is the last piece of j when its file could not be read at from:
// the error, or none when the file ended (it shrank: the next listing reads
// it again).
func endPiece(j *textJob, from int64, err error) *piece {
	if err == nil || errors.Is(err, io.EOF) {
		return &piece{job: j, from: from, to: from, last: true}
	}
	return &piece{job: j, err: err, last: true}
}

// lineEnd returns the offset just past the first newline of r in [from, end),
// or -1 when there is none.
func lineEnd(r io.ReaderAt, from, end int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for from < end {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), end-from)], from)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return from + int64(i) + 1, nil
		}
		from += int64(n)
		if err != nil {
			return -1, err
		}
	}
	return -1, nil
}

// pieceBufs keeps the buffers of pieces of pieceBytes for the next ones.
var pieceBufs sync.Pool

// pieceBuf returns a buffer of n bytes.
func pieceBuf(n int64) []byte {
	if n <= pieceBytes {
		if b, ok := pieceBufs.Get().(*[]byte); ok && int64(cap(*b)) >= n {
			return (*b)[:n]
		}
		return make([]byte, n, pieceBytes)
	}
	return make([]byte, n)
}

// putPieceBuf keeps b for the next pieces if pieceBuf made it for one.
func putPieceBuf(b []byte) {
	if int64(cap(b)) == pieceBytes {
		b = b[:0]
		pieceBufs.Put(&b)
	}
}

// textSource opens a file for its text: a pi session as it is, another
// agent's session as its conversion (which the offsets are of).
func textSource(path string) (io.ReaderAt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if pi, ok, err := foreignFile(path); ok {
		f.Close()
		if err != nil {
			return nil, err
		}
		return bytes.NewReader(pi), nil
	}
	return f, nil
}

// extractLines returns the text of each entry with some among data's lines,
// whose first starts at offset base of its file.
func extractLines(data []byte, base int64) []doc {
	var out []doc
	var l line
	var text []byte
	pos := 0
	for pos < len(data) {
		n := bytes.IndexByte(data[pos:], '\n')
		if n < 0 {
			break
		}
		b := data[pos : pos+n]
		if len(b) > 0 && l.scan(b) {
			if text = appendEntryText(text, &l); len(text) > 0 {
				out = append(out, doc{off: base + int64(pos), text: string(text)})
			}
		}
		pos += n + 1
	}
	return out
}

// rankWindow is how many of the last matches (by rowid: the files indexed
// last, each from its end) a limited search ranks. Ranking every match of a
// common word or of a one-letter prefix costs a second on 2,000 sessions
// (BM25 for each of hundreds of thousands of rows, then a sort), far too slow
// for a query a keystroke; FTS5 yields matches in rowid order lazily, so
// ranking a window of them costs the window, whatever the corpus. A query
// with fewer matches is ranked whole, as before.
const rankWindow = 1000

// searchIndex runs q through the full-text index: every match best first
// without a limit, or with one the best of the last rankWindow (at least 4
// times the limit) matches in scope.
func (c *Catalog) searchIndex(es []entry, q Query, opt SearchOptions) ([]Hit, error) {
	byFid := make(map[int64]*entry, len(es))
	for i := range es {
		if es[i].fid != 0 {
			byFid[es[i].fid] = &es[i]
		}
	}
	sqlText := "SELECT rowid, rank FROM texts WHERE texts MATCH ? ORDER BY rank"
	window := 0
	if opt.Limit > 0 {
		sqlText = "SELECT rowid, rank FROM texts WHERE texts MATCH ? ORDER BY rowid DESC"
		window = max(rankWindow, 4*opt.Limit)
	}
	type match struct {
		id   int64
		rank float64
	}
	var ms []match
	err := func() error {
		rows, err := c.idx.db.Query(sqlText, q.fts())
		if err != nil {
			return fmt.Errorf("catalog: search: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var m match
			if err := rows.Scan(&m.id, &m.rank); err != nil {
				return err
			}
			if byFid[m.id>>offsetBits] == nil {
				continue // another scope's file
			}
			ms = append(ms, m)
			if len(ms) == window {
				break
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, err
	}
	if window > 0 {
		// Ties in rowid order, as ORDER BY rank gives them.
		slices.SortFunc(ms, func(a, b match) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id)) })
	}
	var hits []Hit
	converted := map[string][]byte{} // other agents' files, converted once per search
	for _, m := range ms {
		h, ok := hitAt(byFid[m.id>>offsetBits], m.id&(1<<offsetBits-1), q, converted)
		if !ok {
			continue // the file changed since it was indexed
		}
		hits = append(hits, h)
		if opt.Limit > 0 && len(hits) == opt.Limit {
			break
		}
	}
	return hits, nil
}

// hitAt reads the entry whose line starts at off and makes a hit of it. An
// other agent's file is read as its conversion, kept in converted (by path)
// for the next hit in it; nil there marks a pi file.
func hitAt(e *entry, off int64, q Query, converted map[string][]byte) (Hit, bool) {
	f, err := os.Open(e.abs)
	if err != nil {
		return Hit{}, false
	}
	defer f.Close()
	var src io.ReaderAt = f
	pi, seen := converted[e.abs]
	if !seen {
		var ok bool
		pi, ok, err = foreignFile(e.abs)
		if err != nil {
			return Hit{}, false
		}
		if !ok {
			pi = nil
		}
		converted[e.abs] = pi
	}
	if pi != nil {
		src = bytes.NewReader(pi)
	}
	b, err := readLine(src, off)
	if err != nil {
		return Hit{}, false
	}
	var l line
	if !l.scan(b) {
		return Hit{}, false
	}
	text := entryText(&l)
	marks, ok := q.Match(text)
	if !ok {
		return Hit{}, false
	}
	return makeHit(e, &l, text, marks), true
}

func makeHit(e *entry, l *line, text string, marks [][2]int) Hit {
	mi := l.fieldIndex("message")
	h := Hit{Path: e.Path, SessionID: e.ID, EntryID: l.strField(-1, "id"), Timestamp: l.strField(-1, "timestamp")}
	if mi >= 0 {
		h.Role = l.strField(mi, "role")
	}
	h.Snippet, h.Marks = snippet(text, marks)
	return h
}

// readLine reads the line that starts at off, without its newline. It finds
// the line's end first, so a huge line is read into a buffer of its size.
func readLine(f io.ReaderAt, off int64) ([]byte, error) {
	end, err := lineEnd(f, off, math.MaxInt64)
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		return nil, err
	case end < 0: // the last line, without a newline
		return readRest(f, off)
	}
	b := make([]byte, end-off)
	n, err := f.ReadAt(b, off)
	if n < len(b) {
		return nil, err
	}
	return b[:n-1], nil
}

// readRest reads f from off to its end.
func readRest(f io.ReaderAt, off int64) ([]byte, error) {
	return io.ReadAll(io.NewSectionReader(f, off, math.MaxInt64-off))
}

// searchFiles scans the files themselves: for a regular expression, which the
// index cannot answer, and when there is no index. Hits are newest first.
func (c *Catalog) searchFiles(es []entry, q Query, opt SearchOptions) ([]Hit, error) {
	type result struct {
		hits []Hit
		err  error
	}
	results := make([]result, len(es))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i].hits, results[i].err = scanFile(&es[i], q)
			}
		}()
	}
	for i := range es {
		next <- i
	}
	close(next)
	wg.Wait()
	var hits []Hit
	for _, r := range results {
		if r.err != nil && !errors.Is(r.err, os.ErrNotExist) {
			return nil, r.err
		}
		hits = append(hits, r.hits...)
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return strings.Compare(b.Timestamp, a.Timestamp) })
	if opt.Limit > 0 && len(hits) > opt.Limit {
		hits = hits[:opt.Limit]
	}
	return hits, nil
}

// scanFile returns the hits of q in one session file, in file order.
func scanFile(e *entry, q Query) ([]Hit, error) {
	data, ok, err := foreignFile(e.abs)
	if !ok && err == nil {
		data, err = os.ReadFile(e.abs)
	}
	if err != nil {
		return nil, err
	}
	var hits []Hit
	var l line
	var lower []byte
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n')
		if n < 0 {
			n = len(data)
		}
		if len(q.needs) > 0 && !bytes.Contains(data[:n], []byte(`\u`)) {
			// Without \u escapes, the text's ASCII appears in the line as it is.
			lower = asciiLower(lower[:0], data[:n])
			if !containsAll(lower, q.needs) {
				data = data[min(n+1, len(data)):]
				continue
			}
		}
		if l.scan(data[:n]) {
			if t := entryText(&l); t != "" {
				if marks, ok := q.Match(t); ok {
					hits = append(hits, makeHit(e, &l, t, marks))
				}
			}
		}
		if n == len(data) {
			break
		}
		data = data[n+1:]
	}
	return hits, nil
}

func asciiLower(dst, b []byte) []byte {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func containsAll(b []byte, needs []string) bool {
	for _, n := range needs {
		if !bytes.Contains(b, []byte(n)) {
			return false
		}
	}
	return true
}

// snippetWidth is about how many characters of text a snippet shows.
const snippetWidth = 160

// snippet cuts the part of text around its first match, with white space
// collapsed, "…" where it was cut, and the matches' places in the result.
func snippet(text string, marks [][2]int) (string, [][2]int) {
	slices.SortFunc(marks, func(a, b [2]int) int { return a[0] - b[0] })
	start, end := 0, len(text)
	if len(marks) > 0 {
		m := marks[0]
		start = backRunes(text, m[0], snippetWidth/3)
		end = min(len(text), max(m[1], start)+snippetWidth*4)
	}
	var b strings.Builder
	var out [][2]int
	if start > 0 {
		b.WriteString("…")
	}
	runes := 0
	space := false
	mi := 0
	open := -1
	for i, r := range text[start:end] {
		at := start + i
		for mi < len(marks) && marks[mi][1] <= at && open < 0 {
			mi++
		}
		if open < 0 && mi < len(marks) && marks[mi][0] == at {
			open = b.Len()
		}
		if open >= 0 && mi < len(marks) && at >= marks[mi][1] {
			out = append(out, [2]int{open, b.Len()})
			open = -1
			mi++
			if mi < len(marks) && marks[mi][0] == at {
				open = b.Len()
			}
		}
		if runes >= snippetWidth && open < 0 {
			b.WriteString("…")
			return b.String(), out
		}
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
				runes++
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
		runes++
	}
	if open >= 0 {
		out = append(out, [2]int{open, b.Len()})
	}
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String(), out
}

// backRunes steps back from i by up to n runes, stopping after white space
// where it can so the snippet starts at a word.
func backRunes(s string, i, n int) int {
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	if i > 0 {
		if j := strings.IndexAny(s[i:], " \n\t"); j >= 0 && j < 20 {
			i += j + 1
		}
	}
	return i
}
