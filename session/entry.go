package session

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Entry types (SPEC §3). Types arbor does not know are kept and shown, never dropped.
const (
	TypeMessage             = "message"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeModelChange         = "model_change"
	TypeCompaction          = "compaction"
	TypeBranchSummary       = "branch_summary"
	TypeCustom              = "custom"
	TypeCustomMessage       = "custom_message"
	TypeLabel               = "label"
	TypeSessionInfo         = "session_info"
	typeHeader              = "session"
)

// Entry is one line of a session file after the header. The envelope fields are
// decoded when the line is read; everything else stays as the raw JSON object,
// which is what gets written back, copied and printed, so fields arbor does not
// know survive byte for byte.
//
// An Entry is immutable once it belongs to a Log.
type Entry struct {
	Type      string
	ID        string
	ParentID  string // "" for a root (parentId null)
	Timestamp string // ISO-8601 UTC with milliseconds
	Cursor    string // the cursor that appended it; "" for the main cursor
	Line      int    // 1-based line in the file it was read from; 0 if not read from a file

	role   string // message role, for message entries
	custom string // customType, for custom entries
	raw    []byte
}

// Raw returns the entry's JSON object as read or written, without the newline.
// The caller must not modify it.
func (e *Entry) Raw() []byte { return e.raw }

// Role returns the message role of a message entry and "" for other types.
func (e *Entry) Role() string { return e.role }

// IsMarker reports whether the entry is arbor metadata (a custom entry whose
// customType starts with "arbor."): never in the context, hidden from tree views.
func (e *Entry) IsMarker() bool { return e.Type == TypeCustom && isMarkerType(e.custom) }

// CustomType returns the customType of a custom entry and "" for other types.
func (e *Entry) CustomType() string { return e.custom }

func isMarkerType(t string) bool { return strings.HasPrefix(t, "arbor.") }

// Decode unmarshals the whole entry into v (typically one of the *Entry data types
// of this package, such as CompactionData).
func (e *Entry) Decode(v any) error {
	if err := unmarshal(e.raw, v); err != nil {
		return fmt.Errorf("session: entry %s: %w", e.ID, err)
	}
	return nil
}

// Message decodes the message of a message entry.
func (e *Entry) Message() (Message, error) {
	if e.Type != TypeMessage {
		return Message{}, fmt.Errorf("session: entry %s is a %s, not a message", e.ID, e.Type)
	}
	var v struct {
		Message jsontext.Value `json:"message"`
	}
	if err := unmarshal(e.raw, &v); err != nil {
		return Message{}, fmt.Errorf("session: entry %s: %w", e.ID, err)
	}
	return ParseMessage(v.Message)
}

// Header is the first line of a session file (SPEC §2).
type Header struct {
	Version       int // 1 when the header has no version
	ID            string
	Timestamp     string
	Cwd           string
	ParentSession string

	raw []byte
}

// Raw returns the header's JSON object as read or written.
func (h Header) Raw() []byte { return h.raw }

// CurrentVersion is the format version arbor writes and the newest it appends to.
const CurrentVersion = 3

var (
	errNotObject = errors.New("not a JSON object")
	errNoType    = errors.New("no string type")
)

// unmarshalOptions accept what JSON.parse accepts: duplicate names (last wins) and invalid UTF-8.
var unmarshalOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func unmarshal(data []byte, v any) error { return json.Unmarshal(data, v, unmarshalOptions) }

// marshalOptions write what JSON.stringify writes: no HTML escaping, U+2028 and U+2029 as they are.
var marshalOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), json.Deterministic(true))

func marshal(v any) ([]byte, error) { return json.Marshal(v, marshalOptions) }

// parseLine turns one line into a header or an entry. It returns errNotObject for
// lines that are not valid JSON objects and errNoType for objects without a type.
// A line of type "session" is returned as a header.
func parseLine(line []byte) (*Header, *Entry, error) {
	h, e, err := parseLineEnvelope(line)
	if e != nil && e.Type == TypeCustom {
		var v struct {
			CustomType string `json:"customType"`
		}
		if unmarshal(e.raw, &v) == nil {
			e.custom = v.CustomType
		}
	}
	return h, e, err
}

func parseLineEnvelope(line []byte) (*Header, *Entry, error) {
	line = bytes.TrimRight(line, " \t\r")
	if e, ok := fastEnvelope(line); ok {
		if !validJSON(line) {
			return nil, nil, errNotObject
		}
		return nil, e, nil
	}
	if !validJSON(line) {
		return nil, nil, errNotObject
	}
	var env struct {
		Type      jsontext.Value `json:"type"`
		ID        jsontext.Value `json:"id"`
		ParentID  jsontext.Value `json:"parentId"`
		Timestamp jsontext.Value `json:"timestamp"`
		Cursor    jsontext.Value `json:"cursor"`
		Message   jsontext.Value `json:"message"`
		Version   jsontext.Value `json:"version"`
		Cwd       jsontext.Value `json:"cwd"`
		Parent    jsontext.Value `json:"parentSession"`
	}
	trimmed := bytes.TrimLeft(line, " \t")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, nil, errNotObject
	}
	if err := unmarshal(line, &env); err != nil {
		return nil, nil, errNotObject
	}
	typ, ok := jsonString(env.Type)
	if !ok {
		return nil, nil, errNoType
	}
	if typ == typeHeader {
		h := &Header{Version: 1, raw: trimmed}
		h.ID, _ = jsonString(env.ID)
		h.Timestamp, _ = jsonString(env.Timestamp)
		h.Cwd, _ = jsonString(env.Cwd)
		h.ParentSession, _ = jsonString(env.Parent)
		if len(env.Version) > 0 && env.Version.Kind() == '0' {
			var v float64
			if unmarshal(env.Version, &v) == nil && v >= 1 {
				h.Version = int(v)
			}
		}
		return h, nil, nil
	}
	e := &Entry{Type: typ, raw: trimmed}
	e.ID, _ = jsonString(env.ID)
	e.ParentID, _ = jsonString(env.ParentID)
	e.Timestamp, _ = jsonString(env.Timestamp)
	e.Cursor, _ = jsonString(env.Cursor)
	if typ == TypeMessage && len(env.Message) > 0 && env.Message.Kind() == '{' {
		var m struct {
			Role string `json:"role"`
		}
		if unmarshal(env.Message, &m) == nil {
			e.role = m.Role
		}
	}
	return nil, e, nil
}

func jsonString(v jsontext.Value) (string, bool) {
	if len(v) == 0 || v.Kind() != '"' {
		return "", false
	}
	var s string
	if unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// fastEnvelope reads the envelope as pi and arbor write it, in one pass over the
// first bytes of the line:
//
//	{"type":"…","id":"…","parentId":"…"|null,"timestamp":"…"[,"cursor":"…"][,"message":{"role":"…"]
//
// It reports false for anything else (white space, escapes, other orders, headers),
// and the caller falls back to a full decode.
func fastEnvelope(b []byte) (*Entry, bool) {
	var e Entry
	var ok bool
	rest := b
	if rest, ok = expect(rest, `{"type":"`); !ok {
		return nil, false
	}
	if e.Type, rest, ok = simpleString(rest); !ok || e.Type == typeHeader {
		return nil, false
	}
	if rest, ok = expect(rest, `,"id":"`); !ok {
		return nil, false
	}
	if e.ID, rest, ok = simpleString(rest); !ok {
		return nil, false
	}
	if rest, ok = expect(rest, `,"parentId":`); !ok {
		return nil, false
	}
	if r, isNull := expect(rest, `null`); isNull {
		rest = r
	} else {
		if rest, ok = expect(rest, `"`); !ok {
			return nil, false
		}
		if e.ParentID, rest, ok = simpleString(rest); !ok {
			return nil, false
		}
	}
	if rest, ok = expect(rest, `,"timestamp":"`); !ok {
		return nil, false
	}
	if e.Timestamp, rest, ok = simpleString(rest); !ok {
		return nil, false
	}
	if r, has := expect(rest, `,"cursor":"`); has {
		if e.Cursor, rest, ok = simpleString(r); !ok {
			return nil, false
		}
	}
	if e.Type == TypeMessage {
		r, has := expect(rest, `,"message":{"role":"`)
		if !has {
			return nil, false
		}
		if e.role, _, ok = simpleString(r); !ok {
			return nil, false
		}
	}
	if bytes.Contains(rest, []byte(`"cursor":`)) && e.Cursor == "" && e.Type != TypeMessage {
		// A cursor field further along: let the full decode find it.
		return nil, false
	}
	e.raw = b
	return &e, true
}

func expect(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

// simpleString reads up to the closing quote of a string with no escapes.
func simpleString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return string(b[:i]), b[i+1:], true
		case c == '\\' || c < 0x20:
			return "", b, false
		}
	}
	return "", b, false
}
