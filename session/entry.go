package session

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

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

	sub string // the message role of a message entry, the customType of a custom entry
	raw []byte
	// Offsets in raw of the top-level message value (msgEnd 0: none), unless
	// wide: a line over 4 GiB, whose message is found again when asked for.
	msgStart, msgEnd uint32
	// hasContent: the message has a content that is not null, as far as the
	// line scan can tell (names written with escapes leave it false).
	hasContent bool
	wide       bool
}

// msgRole is the message role of a message entry ("" for other types).
func (e *Entry) msgRole() string {
	if e.Type != TypeMessage {
		return ""
	}
	return e.sub
}

// customType is the customType of a custom entry ("" for other types).
func (e *Entry) customType() string {
	if e.Type != TypeCustom {
		return ""
	}
	return e.sub
}

// Raw returns the entry's JSON object as read or written, without the newline.
// The caller must not modify it.
func (e *Entry) Raw() []byte { return e.raw }

// Role returns the message role of a message entry and "" for other types.
func (e *Entry) Role() string { return e.msgRole() }

// IsMarker reports whether the entry is arbor metadata (a custom entry whose
// customType starts with "arbor."): never in the context, hidden from tree views.
func (e *Entry) IsMarker() bool { return e.Type == TypeCustom && isMarkerType(e.customType()) }

// CustomType returns the customType of a custom entry and "" for other types.
func (e *Entry) CustomType() string { return e.customType() }

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
	raw := e.messageRaw()
	if raw == nil {
		return Message{}, fmt.Errorf("session: entry %s has no message", e.ID)
	}
	return ParseMessage(raw)
}

// MessageRaw returns the message of a message entry as it lies in the line
// (the member JSON.parse would keep), without checking it again; nil when the
// entry has none. The caller must not modify it.
func (e *Entry) MessageRaw() []byte { return e.messageRaw() }

// Header is the first line of a session file (SPEC §2).
type Header struct {
	Version       int // 1 when the header has no version
	ID            string
	Timestamp     string
	Cwd           string
	ParentSession string
	Project       Project // zero when the header records none

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
//
// One pass validates the line and finds where its envelope members are (the
// last of each, as JSON.parse keeps), in any order; the envelope is read from
// there. Headers, and the rare line whose member names are written with
// escapes, go through a full decode instead.
func parseLine(line []byte) (*Header, *Entry, error) {
	line = bytes.Trim(line, " \t\r\n")
	s := scanLine(line)
	if !s.ok || !s.object {
		return nil, nil, errNotObject
	}
	if e, ok := s.entry(line); ok {
		e.setScan(s)
		return nil, e, nil
	}
	h, e, err := decodeEnvelope(line)
	if e != nil {
		e.setScan(s)
	}
	return h, e, err
}

// setScan keeps what scanLine found in e.raw: where the message is, and the customType.
func (e *Entry) setScan(s lineScan) {
	e.msgStart, e.msgEnd, e.wide = 0, 0, false
	if s.msgEnd > math.MaxUint32 {
		e.wide = true
	} else {
		e.msgStart, e.msgEnd = uint32(s.msgStart), uint32(s.msgEnd)
	}
	e.hasContent = s.content == contentValue && !s.escaped
	if e.Type == TypeCustom {
		e.sub = ""
	}
	if e.Type == TypeCustom && s.ctEnd > 0 {
		v := e.raw[s.ctStart:s.ctEnd]
		if ct, rest, ok := simpleString(v[1:]); v[0] == '"' && ok && len(rest) == 0 {
			e.sub = ct
		} else {
			e.sub, _ = jsonString(v)
		}
	}
}

// setRaw replaces the entry's JSON (always a valid object built by this package).
func (e *Entry) setRaw(raw []byte) {
	e.raw = raw
	e.setScan(scanLine(raw))
}

// decodeEnvelope is the full decode of a valid JSON object.
func decodeEnvelope(line []byte) (*Header, *Entry, error) {
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
		Project   jsontext.Value `json:"project"`
	}
	if err := unmarshal(line, &env); err != nil {
		return nil, nil, errNotObject
	}
	typ, ok := jsonString(env.Type)
	if !ok {
		return nil, nil, errNoType
	}
	if typ == typeHeader {
		h := &Header{Version: 1, raw: line}
		h.ID, _ = jsonString(env.ID)
		h.Timestamp, _ = jsonString(env.Timestamp)
		h.Cwd, _ = jsonString(env.Cwd)
		h.ParentSession, _ = jsonString(env.Parent)
		h.Version = headerVersion(env.Version)
		h.Project = headerProject(env.Project)
		return h, nil, nil
	}
	e := &Entry{Type: typ, raw: line}
	e.ID, _ = jsonString(env.ID)
	e.ParentID, _ = jsonString(env.ParentID)
	e.Timestamp, _ = jsonString(env.Timestamp)
	e.Cursor, _ = jsonString(env.Cursor)
	if typ == TypeMessage && len(env.Message) > 0 && env.Message.Kind() == '{' {
		var m struct {
			Role jsontext.Value `json:"role"`
		}
		if unmarshal(env.Message, &m) == nil {
			e.sub, _ = jsonString(m.Role)
		}
	}
	return nil, e, nil
}

// headerProject reads a header's project: anything but an object of strings
// is no project (an untrusted file's odd field costs nothing but the match).
func headerProject(v jsontext.Value) Project {
	if v.Kind() != '{' {
		return Project{}
	}
	var m struct {
		GitRoot jsontext.Value `json:"gitRoot"`
		Remote  jsontext.Value `json:"remote"`
	}
	if unmarshal(v, &m) != nil {
		return Project{}
	}
	var p Project
	p.GitRoot, _ = jsonString(m.GitRoot)
	p.Remote, _ = jsonString(m.Remote)
	return p
}

// headerVersion reads a header's version as pi compares it: a missing or
// unusable version is 1, a number (or a numeric string, which JavaScript
// compares as a number) is truncated.
func headerVersion(v jsontext.Value) int {
	var f float64
	switch v.Kind() {
	case '0':
		if unmarshal(v, &f) != nil {
			return 1
		}
	case '"':
		s, _ := jsonString(v)
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			if strings.TrimSpace(s) == "" {
				return 1 // "" < 2 in JavaScript
			}
			return CurrentVersion // NaN compares false: pi migrates nothing
		}
	default:
		return 1
	}
	switch {
	case f < 1:
		return 1
	case f > 1<<30:
		return 1 << 30
	}
	return int(f)
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

// entry reads an entry's envelope from the spans scanLine found. It reports
// false for a header, for a line whose type is not a string, and for names
// written with escapes: the full decode handles those.
func (s *lineScan) entry(line []byte) (*Entry, bool) {
	if s.escaped || s.typ[1] == 0 || line[s.typ[0]] != '"' {
		return nil, false
	}
	typ, rest, ok := knownString(line[s.typ[0]+1 : s.typ[1]])
	if !ok || len(rest) != 0 {
		typ = spanString(line, s.typ)
	}
	if typ == typeHeader {
		return nil, false
	}
	e := &Entry{Type: typ, raw: line}
	e.ID = spanString(line, s.id)
	e.ParentID = spanString(line, s.parent)
	e.Timestamp = spanString(line, s.ts)
	e.Cursor = spanString(line, s.cursor)
	if typ == TypeMessage && s.msgEnd > 0 && line[s.msgStart] == '{' && s.role[1] > 0 {
		if v := line[s.role[0]:s.role[1]]; v[0] == '"' {
			if role, rest, ok := knownString(v[1:]); ok && len(rest) == 0 {
				e.sub = role
			} else {
				e.sub, _ = jsonString(v)
			}
		}
	}
	return e, true
}

// spanString is the string a JSON value holds ("" when absent or not a string).
func spanString(line []byte, sp [2]int) string {
	if sp[1] == 0 || line[sp[0]] != '"' {
		return ""
	}
	v := line[sp[0]:sp[1]]
	if len(v) > 2 && v[len(v)-1] == '"' && plainASCII(v[1:len(v)-1]) {
		// No copy: the entry's line holds the bytes for as long as the entry
		// lives, and neither is ever modified.
		return unsafe.String(&v[1], len(v)-2)
	}
	str, _ := jsonString(v)
	return str
}

// plainASCII reports whether b is the inside of a JSON string that reads as
// itself: no quote, escape, control character or non-ASCII byte.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

func expect(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

// knownString is simpleString for entry types and roles: the usual values are
// returned as constants, so loading does not allocate a copy of each per line.
func knownString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		if c != '"' {
			continue
		}
		switch v := b[:i]; string(v) {
		case TypeMessage:
			return TypeMessage, b[i+1:], true
		case RoleUser:
			return RoleUser, b[i+1:], true
		case RoleAssistant:
			return RoleAssistant, b[i+1:], true
		case RoleToolResult:
			return RoleToolResult, b[i+1:], true
		case TypeCustom:
			return TypeCustom, b[i+1:], true
		}
		break
	}
	return simpleString(b)
}

// simpleString reads up to the closing quote of a string with no escapes.
func simpleString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return string(b[:i]), b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			// Escapes and non-ASCII (which the full decode checks for
			// invalid UTF-8) are left to the full decode.
			return "", b, false
		}
	}
	return "", b, false
}

// rawValue returns the JSON value of a top-level member of e, or nil.
func (e *Entry) rawValue(name string) jsontext.Value {
	ms, err := objectMembers(e.raw)
	if err != nil {
		return nil
	}
	v, _ := find(ms, name)
	return v
}
