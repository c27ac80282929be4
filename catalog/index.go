package catalog

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The index is a cache in one SQLite file ($ARBOR_DIR/index.db): deleting it
// loses nothing but time. It holds, per file, the key it was read under (path,
// size, modification time, inode), the fold of its complete lines (so a file
// that grew is read from where the fold stopped) and its listing record; and a
// full-text index over the text of the entries (texts, see search.go).
//
// Several arbor processes may use it at once: it runs in WAL mode, so readers
// never wait, and writers wait for each other up to busyTimeout. Every write is
// the same function of the same file, so two processes racing to store a file
// store the same thing.

// The text index buffers up to 32 MB of terms in memory before it writes a
// segment (hashsize), rather than SQLite's default of 1 MB, so that a statement
// of rowsPerInsert rows (search.go) makes one segment even when its texts are
// long: small segments cost time to merge. It merges segments only when 128 of
// a size have piled up (crisismerge 128; automerge 0), not every 4 as by
// default: building the index of a large session writes a segment per
// statement and one per commit (search.go's batchBytes), and the default
// merged each row into a larger segment about once per level, which on long
// texts took longer than indexing them (at 16, merging took 0.9 s of 7.5 on a
// million entries). A million entries make 60 to 70 segments, so they are
// built without a merge: at 64, plain1m's 66 were merged once, 0.5 s of its
// 4 to 4.5 s. A query looks a term up in each segment, a b-tree search each:
// searching plain1m's 66 segments took as long as searching the 3 the merge
// left (32 to 41 ms either way, BENCHMARKS.md).

// The text index keeps prefix indexes of 1 and 2 characters, so that the
// first keys of a word typed in the picker (the query's last word is a prefix)
// read one doclist rather than merging those of every word they begin; longer
// prefixes begin few words. On 2,000 sessions (216 MB) they cost 2.4 times the
// index's size (57 to 137 MB) and 60 % more CPU to build it (4.0 to 6.5 s); 1,
// 2 and 3 characters cost 3.1 times and 83 % (BENCHMARKS.md).

// schemaVersion changes whenever the tables or the meaning of a stored fold
// change; an index of another version is rebuilt.
const schemaVersion = 10 // 6: automerge 0; 7: crisismerge 64; 8: crisismerge 128; 9: the fold and info keep the header's project; 10: prefix indexes

const busyTimeoutMS = 15000

const schema = `
CREATE TABLE files(
	fid INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	ino INTEGER NOT NULL,
	off INTEGER NOT NULL,
	tail_start INTEGER NOT NULL,
	tail_hash INTEGER NOT NULL,
	head_hash INTEGER NOT NULL,
	fold BLOB NOT NULL,
	listed INTEGER NOT NULL,
	info BLOB NOT NULL,
	text_off INTEGER NOT NULL DEFAULT 0
);
CREATE VIRTUAL TABLE texts USING fts5(body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0', prefix='1 2');
INSERT INTO texts(texts, rank) VALUES('hashsize', 33554432);
INSERT INTO texts(texts, rank) VALUES('automerge', 0);
INSERT INTO texts(texts, rank) VALUES('crisismerge', 128);
`

// indexFile is an open index.
type indexFile struct {
	db   *sql.DB
	path string
}

// IndexPath returns where the index of a catalog home lives.
func IndexPath(home string) string { return filepath.Join(home, "index.db") }

// openIndex opens (creating when needed) the index at path. A file that is not
// a usable index of this version is replaced silently.
func openIndex(path string) (*indexFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("catalog: index folder: %w", err)
	}
	x, err := tryOpenIndex(path)
	if err == nil {
		return x, nil
	}
	if !isDamage(err) {
		return nil, err
	}
	removeIndex(path)
	return tryOpenIndex(path)
}

func tryOpenIndex(path string) (*indexFile, error) {
	// SQLite follows symlinks: a link (or a hard link, or anything but a
	// file of its own) planted at the index's names would have it create or
	// overwrite another file. The index is a cache, so such a name is
	// removed (the link, never its target) and the index made again.
	for _, s := range []string{"", "-wal", "-shm"} {
		if info, err := os.Lstat(path + s); err == nil && (!info.Mode().IsRegular() || links(info) > 1) {
			if err := os.Remove(path + s); err != nil {
				return nil, fmt.Errorf("catalog: index %s is %s; move it away: %w", path+s, kindOf(info), err)
			}
		}
	}
	// The index holds the sessions' text: create it private (SQLite gives its
	// -wal and -shm files the database file's permissions).
	if f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|noFollow, 0o600); err == nil {
		f.Close()
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(" + fmt.Sprint(busyTimeoutMS) + ")&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("catalog: open index %s: %w", path, err)
	}
	// One connection: the writes of one process are serial anyway, and a single
	// connection keeps the FTS tables' caches warm between statements.
	db.SetMaxOpenConns(1)
	x := &indexFile{db: db, path: path}
	if err := x.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return x, nil
}

func (x *indexFile) migrate() error {
	var v int
	if err := x.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	if v == schemaVersion {
		return nil
	}
	tx, err := x.db.Begin()
	if err != nil {
		return fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	defer tx.Rollback()
	// Another process may have created it meanwhile: look again inside the lock.
	if err := tx.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	if v == schemaVersion {
		return nil
	}
	for _, t := range []string{"texts", "files"} {
		if _, err := tx.Exec("DROP TABLE IF EXISTS " + t); err != nil {
			return fmt.Errorf("catalog: index %s: %w", x.path, err)
		}
	}
	if _, err := tx.Exec(schema); err != nil {
		return fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	return tx.Commit()
}

// close closes the index.
func (x *indexFile) close() error { return x.db.Close() }

// isDamage reports whether err means the index file is not a usable database.
func isDamage(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_SCHEMA, sqlite3.SQLITE_ERROR:
			return true
		}
	}
	return false
}

// kindOf names what is at an index's name, for an error.
func kindOf(info fs.FileInfo) string {
	if info.Mode()&fs.ModeSymlink != 0 {
		return "a symlink"
	}
	if info.Mode().IsRegular() {
		return "a hard link to another file"
	}
	return "not a file"
}

func removeIndex(path string) {
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(path + s)
	}
}

// row is one file's stored state. Only the key and the listing record are
// loaded for every file; the fold (needed only to resume a file that grew) is
// loaded for the files that changed (resume).
type row struct {
	fid     int64
	textOff int64
	st      state
}

// load returns the stored state of every file under roots, by absolute path.
func (x *indexFile) load(roots []string) (map[string]*row, error) {
	out := map[string]*row{}
	for _, root := range roots {
		lo, hi := rootRange(root)
		rows, err := x.db.Query(`SELECT fid, path, size, mtime, ino, listed, info, text_off FROM files WHERE path >= ? AND path < ?`, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
		}
		for rows.Next() {
			var r row
			var path string
			var ino int64
			var info sql.RawBytes
			if err := rows.Scan(&r.fid, &path, &r.st.size, &r.st.mtimeNS, &ino, &r.st.listed, &info, &r.textOff); err != nil {
				rows.Close()
				return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
			}
			r.st.ino = uint64(ino)
			if !decodeInfo(info, &r.st.info) {
				continue // unreadable: the file is read again
			}
			r.st.info.SizeBytes = r.st.size
			out[path] = &r
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
		}
	}
	return out, nil
}

// resume loads what reading a grown file on from where it stopped needs.
// It reports false when the row is gone or unreadable: the file is read whole.
func (x *indexFile) resume(r *row) bool {
	var hash, head int64
	var fold []byte
	err := x.db.QueryRow("SELECT off, tail_start, tail_hash, head_hash, fold FROM files WHERE fid = ?", r.fid).
		Scan(&r.st.off, &r.st.tailStart, &hash, &head, &fold)
	if err != nil {
		return false
	}
	r.st.tailHash, r.st.headHash = uint64(hash), uint64(head)
	return json.Unmarshal(fold, &r.st.sum) == nil
}

// encodeInfo packs a listing record for the index: one column instead of ten,
// because reading a column costs more than decoding a few bytes. Path and size
// are columns of their own.
func encodeInfo(in *Info) []byte {
	b := make([]byte, 0, 64+len(in.ID)+len(in.Cwd)+len(in.Name)+len(in.ParentSessionPath)+len(in.FirstMessage))
	for _, s := range []string{in.ID, in.Cwd, in.Name, in.ParentSessionPath, in.FirstMessage} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, t := range []Time{in.Created, in.Modified} {
		b = append(b, byte(boolInt(t.valid)))
		b = binary.AppendVarint(b, t.ms)
	}
	b = binary.AppendUvarint(b, uint64(in.MessageCount))
	b = binary.AppendUvarint(b, uint64(in.EntryCount))
	for _, s := range []string{in.Project.GitRoot, in.Project.Remote} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeInfo unpacks what encodeInfo wrote; false when b is not that.
func decodeInfo(b []byte, in *Info) bool {
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	for _, p := range []*string{&in.ID, &in.Cwd, &in.Name, &in.ParentSessionPath, &in.FirstMessage} {
		s, ok := str()
		if !ok {
			return false
		}
		*p = s
	}
	for _, t := range []*Time{&in.Created, &in.Modified} {
		if len(b) < 1 {
			return false
		}
		valid := b[0] == 1
		ms, k := binary.Varint(b[1:])
		if k <= 0 {
			return false
		}
		*t = Time{ms: ms, valid: valid}
		b = b[1+k:]
	}
	for _, p := range []*int{&in.MessageCount, &in.EntryCount} {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return false
		}
		*p = int(n)
		b = b[k:]
	}
	for _, p := range []*string{&in.Project.GitRoot, &in.Project.Remote} {
		s, ok := str()
		if !ok {
			return false
		}
		*p = s
	}
	return len(b) == 0
}

// rootRange is the range of paths under root, for a path >= lo AND path < hi query.
func rootRange(root string) (string, string) {
	root = strings.TrimSuffix(root, string(filepath.Separator))
	return root + string(filepath.Separator), root + string(filepath.Separator+1)
}

// store saves the states of changed files and forgets files that no longer
// exist under roots. A file read from its start loses its text index rows.
func (x *indexFile) store(changed []*file, states []*state, old map[string]*row, gone []string) ([]int64, error) {
	fids := make([]int64, len(changed))
	if len(changed) == 0 && len(gone) == 0 {
		return fids, nil
	}
	ctx := context.Background()
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	defer tx.Rollback()
	up, err := tx.Prepare(`INSERT INTO files(path, size, mtime, ino, off, tail_start, tail_hash, head_hash, fold, listed, info, text_off)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,0)
		ON CONFLICT(path) DO UPDATE SET size=excluded.size, mtime=excluded.mtime, ino=excluded.ino, off=excluded.off,
			tail_start=excluded.tail_start, tail_hash=excluded.tail_hash, head_hash=excluded.head_hash, fold=excluded.fold, listed=excluded.listed, info=excluded.info
		RETURNING fid`)
	if err != nil {
		return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	defer up.Close()
	for i, f := range changed {
		st := states[i]
		if st == nil {
			continue
		}
		if r := old[f.abs]; r != nil && !st.resumed && r.textOff > 0 {
			if err := dropTexts(tx, r.fid); err != nil {
				return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
			}
		}
		fold, _ := json.Marshal(&st.sum)
		if err := up.QueryRow(f.abs, st.size, st.mtimeNS, int64(st.ino), st.off, st.tailStart, int64(st.tailHash), int64(st.headHash), fold, st.listed,
			encodeInfo(&st.info)).Scan(&fids[i]); err != nil {
			return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
		}
	}
	for _, p := range gone {
		if r := old[p]; r != nil {
			if err := dropTexts(tx, r.fid); err != nil {
				return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
			}
		}
		if _, err := tx.Exec("DELETE FROM files WHERE path = ?", p); err != nil {
			return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("catalog: index %s: %w", x.path, err)
	}
	return fids, nil
}

// dropTexts removes a file's rows from the text index and marks it unindexed.
func dropTexts(tx *sql.Tx, fid int64) error {
	if _, err := tx.Exec("DELETE FROM texts WHERE rowid >= ? AND rowid < ?", fid<<offsetBits, (fid+1)<<offsetBits); err != nil {
		return err
	}
	_, err := tx.Exec("UPDATE files SET text_off = 0 WHERE fid = ?", fid)
	return err
}

// offsetBits is how many low bits of a text row's id hold the byte offset of
// its line in the file; the high bits hold the file's id. A file may be 1 TB.
const offsetBits = 40
