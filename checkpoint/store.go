package checkpoint

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Errors a caller can test for with errors.Is.
var (
	ErrNotFound = errors.New("checkpoint: snapshot not found")
	ErrCorrupt  = errors.New("checkpoint: object is damaged")
)

// Hash is the SHA-256 of a file's content, of a chunk or of a manifest.
type Hash [32]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a hash written by String.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%w: %q is not a snapshot id", ErrNotFound, s)
	}
	copy(h[:], b)
	return h, nil
}

// Object kinds, the first byte of a stored object.
const (
	kindBlob   = 'z' // zlib of the whole content
	kindChunks = 'c' // zlib of the list of chunk hashes whose contents, joined, are the content
)

// Store is a folder of content-addressed objects.
type Store struct {
	dir string
}

// Open opens (creating it, 0700) the store in dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: open store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) objectPath(h Hash) string {
	x := h.String()
	return filepath.Join(s.dir, "objects", x[:2], x)
}

func (s *Store) has(h Hash) bool {
	_, err := os.Lstat(s.objectPath(h))
	return err == nil
}

// putObject writes kind+zlib(data) as h unless it is there already. The
// write is atomic (a temporary file in the same folder, renamed); durable
// also syncs it first.
func (s *Store) putObject(h Hash, kind byte, data []byte, durable bool) error {
	p := s.objectPath(h)
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	var buf bytes.Buffer
	buf.WriteByte(kind)
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	zw.Write(data)
	zw.Close()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("checkpoint: store object: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoint: store object: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(buf.Bytes())
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: store object %s: %w", h, err)
	}
	return nil
}

// readObject returns an object's kind and its decompressed data.
func (s *Store) readObject(h Hash) (byte, []byte, error) {
	raw, err := os.ReadFile(s.objectPath(h))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, fmt.Errorf("%w: object %s is missing", ErrCorrupt, h)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("checkpoint: read object %s: %w", h, err)
	}
	if len(raw) < 1 {
		return 0, nil, fmt.Errorf("%w: object %s is empty", ErrCorrupt, h)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[1:]))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: object %s: %v", ErrCorrupt, h, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: object %s: %v", ErrCorrupt, h, err)
	}
	return raw[0], data, nil
}

// chunkThreshold is the size from which a file is stored as chunks: a one-line
// edit of a large file then stores one new chunk, not the whole file again.
const chunkThreshold = 32 << 10

// putContent stores a file's content under its hash.
func (s *Store) putContent(h Hash, data []byte, durable bool) error {
	if s.has(h) {
		return nil
	}
	if len(data) < chunkThreshold {
		return s.putObject(h, kindBlob, data, durable)
	}
	var list []byte
	for _, c := range chunks(data) {
		ch := Hash(sha256.Sum256(c))
		if err := s.putObject(ch, kindBlob, c, durable); err != nil {
			return err
		}
		list = append(list, ch[:]...)
	}
	return s.putObject(h, kindChunks, list, durable)
}

// Content returns a stored file's bytes, checked against its hash.
func (s *Store) Content(h Hash) ([]byte, error) {
	kind, data, err := s.readObject(h)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindBlob:
	case kindChunks:
		if len(data)%len(h) != 0 {
			return nil, fmt.Errorf("%w: object %s: chunk list of %d bytes", ErrCorrupt, h, len(data))
		}
		var out []byte
		for i := 0; i < len(data); i += len(h) {
			var ch Hash
			copy(ch[:], data[i:])
			k, c, err := s.readObject(ch)
			if err != nil {
				return nil, err
			}
			if k != kindBlob {
				return nil, fmt.Errorf("%w: chunk %s of %s has kind %q", ErrCorrupt, ch, h, k)
			}
			out = append(out, c...)
		}
		data = out
	default:
		return nil, fmt.Errorf("%w: object %s has kind %q", ErrCorrupt, h, kind)
	}
	if Hash(sha256.Sum256(data)) != h {
		return nil, fmt.Errorf("%w: object %s does not match its hash", ErrCorrupt, h)
	}
	return data, nil
}

// chunks cuts data at content-defined boundaries (a gear rolling hash, as
// FastCDC does), so an insertion moves only the boundaries near it and the
// chunks elsewhere keep their hashes.
func chunks(data []byte) [][]byte {
	const (
		minSize = 2 << 10
		maxSize = 32 << 10
		mask    = 1<<13 - 1 // 8 KB on average
	)
	var out [][]byte
	for len(data) > 0 {
		n := len(data)
		if n > minSize {
			var h uint64
			end := min(n, maxSize)
			n = end
			for i := minSize; i < end; i++ {
				h = h<<1 + gear[data[i]]
				if h&mask == 0 {
					n = i + 1
					break
				}
			}
		}
		out = append(out, data[:n])
		data = data[n:]
	}
	return out
}

// gear is a fixed table of pseudo-random words (splitmix64 from 0): it must
// never change, or stored chunk boundaries stop matching new ones.
var gear = func() (t [256]uint64) {
	var x uint64
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		t[i] = z ^ z>>31
	}
	return
}()
