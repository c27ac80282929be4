package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
	"github.com/spf13/cobra"
)

func newCmdAppend(ios *IO, g *Global) *cobra.Command {
	var fsync string
	cmd := &cobra.Command{
		Use:   "append <session>",
		Short: "Append messages read from stdin, one JSON message per line",
		Long: `Read one JSON message per line on stdin (a pi message: {"role":"user",
"content":"…","timestamp":…}) and append each as a message entry on the active
cursor's leaf. Each new entry id is printed on its own line once the entry is
written under the --fsync policy: always (fsync every entry), turn (fsync after
assistant messages and at the end; the default) or never.

--json prints one object a line instead, {"id","parentId","line"}, where line
is the stdin line number. A message without a timestamp gets the current time;
invalid UTF-8 (an escaped half of a surrogate pair, such as \ud800 alone,
included) and roles pi does not write stop the run at that line.

A path that does not exist yet becomes a new session, written at once. The
session is locked for writing while this runs; a second writer fails at once.`,
		Example: `  echo '{"role":"user","content":"hello","timestamp":1764442800000}' | arbor append notes.jsonl
  arbor append 0195f1c2 --fsync always < messages.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			policy, err := jsonl.ParseDurability(fsync)
			if err != nil {
				return usageError{err}
			}
			return runAppend(ios, g, args[0], policy)
		},
	}
	cmd.Flags().StringVar(&fsync, "fsync", "turn", "durability: always, turn or never")
	return cmd
}

// parseInput reads one line of append's input: a pi message (SPEC §4) in
// valid UTF-8 with a role pi writes; one without a timestamp gets the current time.
func parseInput(line []byte) (session.Message, error) {
	if !utf8.Valid(line) {
		return session.Message{}, errors.New("not valid UTF-8 (session files are UTF-8 JSON)")
	}
	m, err := session.ParseMessage(bytes.Clone(line))
	if err != nil {
		return m, err
	}
	if at, esc, ok := loneSurrogate(line); ok {
		return m, fmt.Errorf("the escape %s at byte %d is half a UTF-16 surrogate pair, which UTF-8 cannot hold; give the whole pair or the character itself", esc, at+1)
	}
	if !session.KnownRole(m.Role) {
		return m, fmt.Errorf("unknown role %q: want user, assistant, toolResult, bashExecution, custom or system", m.Role)
	}
	return m.WithTimestamp(time.Now().UnixMilli()), nil
}

// loneSurrogate finds the first \u escape in the valid JSON b that is half of
// a UTF-16 surrogate pair without the other half: JSON.parse takes it, but
// the text it stands for has no UTF-8 form, so it is not written to a session.
// at is its offset and esc the escape as written.
func loneSurrogate(b []byte) (at int, esc string, ok bool) {
	// In valid JSON a backslash appears only in a string, as an escape.
	for i := bytes.IndexByte(b, '\\'); i >= 0 && i+1 < len(b); {
		next := i + 2
		if b[i+1] == 'u' && i+6 <= len(b) {
			next = i + 6
			switch r := hex4(b[i+2:]); {
			case 0xdc00 <= r && r <= 0xdfff:
				return i, string(b[i : i+6]), true
			case 0xd800 <= r && r <= 0xdbff:
				if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
					return i, string(b[i : i+6]), true
				}
				if low := hex4(b[i+8:]); low < 0xdc00 || low > 0xdfff {
					return i, string(b[i : i+6]), true
				}
				next = i + 12
			}
		}
		j := bytes.IndexByte(b[next:], '\\')
		if j < 0 {
			break
		}
		i = next + j
	}
	return 0, "", false
}

// hex4 is the value of the four hex digits valid JSON has after \u.
func hex4(h []byte) uint64 {
	n, _ := strconv.ParseUint(string(h[:4]), 16, 16)
	return n
}

// appendResult is one line of `arbor append --json`: the entry appended for
// stdin line Line.
type appendResult struct {
	ID       string `json:"id"`
	ParentID string `json:"parentId"`
	Line     int    `json:"line"`
}

func runAppend(ios *IO, g *Global, arg string, policy jsonl.Durability) error {
	s, err := g.openAppend(arg, policy)
	if err != nil {
		return err
	}
	path := s.Path()
	out := bufio.NewWriter(ios.Out)
	sc := bufio.NewScanner(ios.In)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	n := 0
	var runErr error
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		m, err := parseInput(line)
		if err != nil {
			runErr = fmt.Errorf("stdin line %d: %v; nothing from this line on was appended to %s", n, err, path)
			break
		}
		e, err := s.AppendMessage(m)
		if err != nil {
			runErr = fmt.Errorf("stdin line %d: %w", n, err)
			break
		}
		if g.JSON {
			// One JSON object a line, as each entry is acknowledged: a stream a script can follow.
			b, _ := json.Marshal(appendResult{ID: e.ID, ParentID: e.ParentID, Line: n})
			out.Write(append(b, '\n'))
		} else {
			fprintf(out, "%s\n", e.ID)
		}
		if err := out.Flush(); err != nil {
			runErr = err
			break
		}
	}
	if err := sc.Err(); err != nil && runErr == nil {
		runErr = fmt.Errorf("read stdin: %w", err)
	}
	for _, r := range s.Repairs() {
		ios.Warnf("%s", r)
	}
	if err := s.Close(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// openAppend opens the session to append to, creating it when it does not
// exist (a new file at a path, or a new id in the database).
func (g *Global) openAppend(arg string, policy jsonl.Durability) (*writable, error) {
	if db, err := g.database(); err != nil || db != nil {
		if err != nil {
			return nil, err
		}
		return g.openDB(db, arg, store.Options{Durability: policy, Immediate: true}, true)
	}
	path, err := g.resolve(arg)
	if err != nil {
		return nil, err
	}
	if err := refuseForeign(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
		}
	}
	s, err := jsonl.Open(path, jsonl.WithDurability(policy), jsonl.Immediate())
	if err != nil {
		return nil, err
	}
	return fromFile(s), nil
}
