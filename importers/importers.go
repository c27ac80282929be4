package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arborlog/arbor/session"
)

// Format names a foreign session format.
type Format string

// The formats this package reads.
const (
	Rho    Format = "rho"
	Claude Format = "claude-code"
	Codex  Format = "codex"
)

// ErrNotForeign is returned for a file that is not in a format this package reads
// (a pi session among them: arbor reads those directly).
var ErrNotForeign = errors.New("importers: not a rho, Claude Code or Codex session file")

// Session is a foreign file turned into a pi session: a header and entry lines
// in an order pi and arbor continue from the same leaf.
type Session struct {
	Header Header
	Lines  [][]byte // entries, parents before children, the leaf last
	Stats  Stats
	Damage []LineError
	// Torn is the number of source lines held back because the source is still
	// writing them: a last line with no newline that is not yet a whole JSON
	// value. The next read, once the line is complete, imports it.
	Torn int
}

// Stats counts what a reader did with the source's lines.
type Stats struct {
	Lines       int `json:"lines"`    // non-empty source lines
	Entries     int `json:"entries"`  // entries written
	Skipped     int `json:"skipped"`  // lines understood and left out (UI records, duplicates, telemetry)
	Custom      int `json:"custom"`   // lines not understood, kept as custom entries with the original line
	Prompts     int `json:"prompts"`  // user prompts imported
	Branches    int `json:"branches"` // rewinds or rollbacks: extra branches in the tree
	Compactions int `json:"compactions"`
}

// LineError is a source line that could not be read.
type LineError struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

func (e LineError) String() string { return fmt.Sprintf("line %d: %s", e.Line, e.Err) }

// Bytes returns the session as a pi JSONL file.
func (s *Session) Bytes() []byte {
	var b bytes.Buffer
	b.Write(encodeHeader(s.Header))
	b.WriteByte('\n')
	for _, l := range s.Lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Log loads the session into arbor's model, read-only: appends fail with an
// error saying to import it first.
func (s *Session) Log() *session.Log {
	return session.Load(s.Bytes(), session.WithReadOnly(fmt.Errorf("%s is a %s session read in place; run 'arbor import %s' to continue it", s.Header.From.Path, s.Header.From.Format, s.Header.From.Path)))
}

// Detect says which foreign format a file is in, from its path and first
// bytes; ErrNotForeign when it is none of them.
func Detect(path string, head []byte) (Format, error) {
	line := head
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	switch {
	case bytes.Contains(line, []byte(`"type":"session"`)) && !bytes.Contains(line, []byte(`"payload"`)):
		return "", ErrNotForeign // pi
	case bytes.HasPrefix(line, []byte(`{"type":"Header"`)) || bytes.Contains(line, []byte(`"type":"Header"`)) && bytes.Contains(line, []byte(`"created_at_secs"`)):
		return Rho, nil
	case bytes.HasPrefix(line, []byte(`{"timestamp":`)) && bytes.Contains(line, []byte(`"payload":`)),
		bytes.Contains(line, []byte(`"type":"session_meta"`)):
		return Codex, nil
	case bytes.Contains(line, []byte(`"sessionId"`)), bytes.Contains(line, []byte(`"parentUuid"`)),
		bytes.Contains(line, []byte(`"leafUuid"`)), bytes.Contains(line, []byte(`"type":"file-history-snapshot"`)),
		bytes.Contains(line, []byte(`"type":"queue-operation"`)), bytes.Contains(line, []byte(`"type":"ai-title"`)),
		bytes.Contains(line, []byte(`"type":"custom-title"`)), bytes.Contains(line, []byte(`"type":"agent-name"`)),
		bytes.Contains(line, []byte(`"type":"permission-mode"`)), bytes.Contains(line, []byte(`"type":"last-prompt"`)):
		return Claude, nil
	}
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl"):
		return Codex, nil
	case strings.Contains(filepath.ToSlash(path), "/.claude/projects/") && strings.HasSuffix(base, ".jsonl"):
		return Claude, nil
	case strings.Contains(filepath.ToSlash(path), "/.rho/sessions/") && strings.HasSuffix(base, ".jsonl"):
		return Rho, nil
	}
	return "", ErrNotForeign
}

// ReadFile reads a foreign session file in the format Detect finds. It never
// writes to the file.
func ReadFile(path string) (*Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Detect(path, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var mod time.Time
	if fi, err := os.Stat(path); err == nil {
		mod = fi.ModTime()
	}
	return Read(f, Input{Path: path, Data: data, ModTime: mod})
}

// Input is one source file: its path (made absolute for the provenance record),
// contents and modification time (the session's time when the file has none).
type Input struct {
	Path    string
	Data    []byte
	ModTime time.Time
}

// Read turns a source file in format f into a session.
func Read(f Format, in Input) (*Session, error) {
	if abs, err := filepath.Abs(in.Path); err == nil {
		in.Path = abs
	}
	data, torn := untorn(in.Data)
	in.Data = data
	var s *Session
	switch f {
	case Rho:
		s = readRho(in)
	case Claude:
		s = readClaude(in)
	case Codex:
		s = readCodex(in)
	default:
		return nil, fmt.Errorf("%s: %w", in.Path, ErrNotForeign)
	}
	if s.Header.Timestamp == "" {
		// No time in the file and none given: a fixed one keeps the output stable.
		s.Header.Timestamp = isoTime(time.Unix(0, 0))
	}
	s.Stats.Entries = len(s.Lines)
	s.Torn = torn
	return s, nil
}

// untorn cuts off a last line that is still being written: one with no
// newline that does not parse yet. A writer appends a line and its newline in
// one write, so a last line that parses is whole and is read like any other;
// only a torn one waits, and nothing else is ever held back.
func untorn(data []byte) ([]byte, int) {
	i := bytes.LastIndexByte(data, '\n')
	tail := bytes.TrimSpace(data[i+1:])
	if len(tail) == 0 || json.Valid(tail) {
		return data, 0
	}
	return data[:i+1], 1
}

// lines splits data into non-empty lines with their 1-based numbers.
func lines(data []byte) (out []srcLine) {
	n := 0
	for len(data) > 0 {
		n++
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		l = bytes.TrimSpace(l)
		if len(l) > 0 {
			out = append(out, srcLine{n, l})
		}
	}
	return out
}

type srcLine struct {
	n    int
	text []byte
}

// maxParentRead bounds how much of another file a reader opens to link a
// subagent to its parent.
const maxParentRead = 256 << 20

func readSmall(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxParentRead {
		return nil, fmt.Errorf("%s: not a regular file under %d bytes", path, maxParentRead)
	}
	return os.ReadFile(path)
}
