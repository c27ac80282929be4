package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// DefaultMaxRequestBytes bounds a request line when Config.MaxRequestBytes is
// 0: far above any prompt a person writes, far below what would exhaust
// memory once the line is decoded (a few copies of it).
const DefaultMaxRequestBytes = 64 << 20

// tooLong is a request line longer than the limit, read to its end and
// dropped: its size, and its top-level "id" and "type" when the line gave
// them (so the answer can name the request).
// A line that is not UTF-8 (as JSON text must be) is one too, with notUTF8
// the offset of its first bad byte plus one: read on, its bad bytes would
// become U+FFFD in the strings decoded, and reach the session so.
type tooLong struct {
	size    int64
	limit   int
	notUTF8 int
	id      json.RawMessage
	typ     string
}

func (t *tooLong) Error() string {
	if t.notUTF8 > 0 {
		return fmt.Sprintf("the request is not valid UTF-8 (byte %d): it was not read; send text as UTF-8", t.notUTF8-1)
	}
	return fmt.Sprintf("the request is %d bytes, over this server's limit of %d (--max-request-bytes): it was not read", t.size, t.limit)
}

func (t *tooLong) reason() string {
	if t.notUTF8 > 0 {
		return "notUTF8"
	}
	return "tooLarge"
}

// checkUTF8 returns line, or a *tooLong for a line that is not UTF-8.
func checkUTF8(line []byte, limit int) ([]byte, error) {
	if utf8.Valid(line) {
		return line, nil
	}
	t := &tooLong{size: int64(len(line)), limit: limit, notUTF8: firstInvalid(line) + 1}
	var s fieldScanner
	s.scan(line)
	t.id, t.typ = s.id(), s.typ()
	return nil, t
}

// firstInvalid is the offset of the first byte of b that is not UTF-8.
func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// readLine reads one line of at most limit bytes, without its newline (and
// a carriage return before it). A last line without a newline is a line: it
// comes with the reader's error. A longer line is read to its end without
// being kept and reported as a *tooLong, the reader still usable.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 || len(line)+len(chunk) > limit && !bytes.HasSuffix(chunk, []byte{'\n'}) {
			return nil, skipLine(br, line, chunk, err, limit)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if err != nil && len(line) > 0 {
			return checkUTF8(line, limit) // the last line; the next read reports the end
		}
		if err != nil {
			return line, err
		}
		return checkUTF8(line, limit)
	}
}

// skipLine reads the rest of a line too long to keep, watching its
// top-level fields for the id and type.
func skipLine(br *bufio.Reader, head, chunk []byte, err error, limit int) error {
	t := &tooLong{limit: limit}
	var s fieldScanner
	feed := func(b []byte) {
		t.size += int64(len(b))
		s.scan(b)
	}
	feed(head)
	feed(chunk)
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = br.ReadSlice('\n')
		feed(chunk)
	}
	if bytes.HasSuffix(chunk, []byte{'\n'}) {
		t.size--
	}
	t.id, t.typ = s.id(), s.typ()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return t
}

// fieldScanner reads a JSON object a piece at a time, keeping the raw values
// of its top-level "id" and "type" (if short) and nothing else, so a line
// of any size costs no memory to look into. It does not validate: what it
// keeps is checked when the value ends.
type fieldScanner struct {
	depth    int
	inString bool
	escape   bool
	wantKey  bool   // the next top-level string is a key
	inKey    bool   // reading a top-level key
	key      []byte // the last top-level key (its first bytes)
	keeping  bool   // reading the value of "id" or "type"
	value    []byte
	overflow bool
	ids      json.RawMessage
	types    json.RawMessage
}

// keptField bounds a kept value: an id or a command's type is short.
const keptField = 1 << 10

func (s *fieldScanner) scan(b []byte) {
	for _, c := range b {
		ends := s.depth == 1 && !s.inString && (c == ',' || c == '}')
		if s.keeping && !ends {
			if len(s.value) < keptField {
				s.value = append(s.value, c)
			} else {
				s.overflow = true
			}
		}
		switch {
		case s.inString:
			switch {
			case s.escape:
				s.escape = false
			case c == '\\':
				s.escape = true
			case c == '"':
				s.inString, s.inKey = false, false
			default:
				if s.inKey && len(s.key) < 16 {
					s.key = append(s.key, c)
				}
			}
		case c == '"':
			s.inString = true
			if s.depth == 1 && s.wantKey {
				s.inKey, s.wantKey, s.key = true, false, s.key[:0]
			}
		case c == '{' || c == '[':
			s.depth++
			if s.depth == 1 {
				s.wantKey = c == '{'
			}
		case c == '}' || c == ']':
			if s.depth == 1 {
				s.end()
			}
			s.depth--
		case c == ':' && s.depth == 1:
			k := string(s.key)
			s.keeping, s.value, s.overflow = k == "id" || k == "type", s.value[:0], false
		case c == ',' && s.depth == 1:
			s.end()
			s.wantKey = true
		}
	}
}

// end closes the top-level value being kept.
func (s *fieldScanner) end() {
	if !s.keeping {
		return
	}
	s.keeping = false
	v := bytes.TrimSpace(s.value)
	if s.overflow || !json.Valid(v) {
		return
	}
	v = bytes.Clone(v)
	if string(s.key) == "id" {
		s.ids = v
	} else {
		s.types = v
	}
}

func (s *fieldScanner) id() json.RawMessage {
	if validID(s.ids) {
		return s.ids
	}
	return nil
}

func (s *fieldScanner) typ() string {
	var t string
	_ = json.Unmarshal(s.types, &t)
	return t
}
