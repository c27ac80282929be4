package session

import (
	"bytes"
	"github.com/arborlog/arbor/internal/jsonscan"
)

// validJSON reports whether b holds exactly one JSON value, surrounded by optional
// white space. It accepts what JSON.parse accepts on a line pi wrote: invalid UTF-8 is
// not an error (Node decodes files with replacement characters before parsing).
//
// It exists because loading must validate every line (a line glued onto a torn one
// has a well-formed start and a broken middle) and encoding/json.Valid runs at a
// fraction of the speed this loop reaches on message-heavy lines.
func validJSON(b []byte) bool {
	i := jsonscan.SkipSpace(b, 0)
	i, ok := scanValue(b, i, 0)
	if !ok {
		return false
	}
	return jsonscan.SkipSpace(b, i) == len(b)
}

func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return jsonscan.String(b, i)
	case c == '{':
		return scanObject(b, i, depth+1)
	case c == '[':
		return scanArray(b, i, depth+1)
	case c == 't':
		return jsonscan.Literal(b, i, "true")
	case c == 'f':
		return jsonscan.Literal(b, i, "false")
	case c == 'n':
		return jsonscan.Literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return jsonscan.Number(b, i)
	}
	return i, false
}

func scanObject(b []byte, i, depth int) (int, bool) {
	if depth > jsonscan.MaxDepth {
		return i, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = jsonscan.String(b, i); !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		if i, ok = scanValue(b, i, depth); !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func scanArray(b []byte, i, depth int) (int, bool) {
	if depth > jsonscan.MaxDepth {
		return i, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = scanValue(b, i, depth); !ok {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// IsCompleteJSON reports whether b is one whole JSON value (a line that only lacks its newline).
func IsCompleteJSON(b []byte) bool { return validJSON(b) }

// Members of an entry's top-level object that the envelope reads. scanLine
// notes each one it meets, so that a line naming one of them twice, or under an
// escaped name, can be sent to the full decode (JSON.parse keeps the last
// duplicate; the fast envelope reads the first).
const (
	seenType = 1 << iota
	seenID
	seenParentID
	seenTimestamp
	seenCursor
	seenMessage
	seenCustomType
)

// lineScan is what scanLine learns about a line on its way through it.
type lineScan struct {
	ok     bool // the line is exactly one JSON value
	object bool // ... and that value is an object
	// plain: no envelope member appears twice and no top-level name (nor a
	// name directly inside the message object) is written with escapes, so the
	// fast envelope reads what JSON.parse would.
	plain bool
	// escaped: a name at the top level or directly in the message object is
	// written with escapes, so the spans below may miss the member it names.
	escaped bool
	seen    int
	// Offsets of the last top-level "message" and "customType" values (end 0: absent).
	msgStart, msgEnd int
	ctStart, ctEnd   int
	// Spans [start, end) of the last value of each envelope member, and of the
	// last "role" in the last message object (end 0: absent): what JSON.parse keeps.
	typ, id, parent, ts, cursor, role [2]int
	// content says what the last "content" of the last message object holds:
	// contentMissing, contentNull or contentValue.
	content int8
	// stamped: the last message object has a "timestamp" member.
	stamped bool
}

// What a message's content is, as the line scan saw it.
const (
	contentMissing int8 = iota
	contentNull
	contentValue
)

// scanLine validates a line as validJSON does and, when it holds an object,
// records its envelope members on the way, at the cost of a comparison per
// top-level name.
func scanLine(b []byte) lineScan {
	var s lineScan
	i := jsonscan.SkipSpace(b, 0)
	var ok bool
	if i < len(b) && b[i] == '{' {
		s.object, s.plain = true, true
		i, ok = s.scanTop(b, i)
	} else {
		i, ok = scanValue(b, i, 0)
	}
	if !ok || jsonscan.SkipSpace(b, i) != len(b) {
		return lineScan{}
	}
	s.ok = true
	return s
}

// scanTop is scanObject for the line's top-level object.
func (s *lineScan) scanTop(b []byte, i int) (int, bool) {
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		start := i
		var ok bool
		if i, ok = jsonscan.String(b, i); !ok {
			return i, false
		}
		name := b[start+1 : i-1]
		bit := 0
		switch string(name) {
		case "type":
			bit = seenType
		case "id":
			bit = seenID
		case "parentId":
			bit = seenParentID
		case "timestamp":
			bit = seenTimestamp
		case "cursor":
			bit = seenCursor
		case "message":
			bit = seenMessage
		case "customType":
			bit = seenCustomType
		default:
			if bytes.IndexByte(name, '\\') >= 0 {
				s.plain, s.escaped = false, true
			}
		}
		if s.seen&bit != 0 {
			s.plain = false
		}
		s.seen |= bit
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		vstart := i
		if bit == seenMessage {
			s.role = [2]int{} // the last message is the one that counts
			s.content = contentMissing
		}
		if bit == seenMessage && i < len(b) && b[i] == '{' {
			i, ok = s.scanMessage(b, i)
		} else {
			i, ok = scanValue(b, i, 1)
		}
		if !ok {
			return i, false
		}
		span := [2]int{vstart, i}
		switch bit {
		case seenType:
			s.typ = span
		case seenID:
			s.id = span
		case seenParentID:
			s.parent = span
		case seenTimestamp:
			s.ts = span
		case seenCursor:
			s.cursor = span
		case seenMessage:
			s.msgStart, s.msgEnd = vstart, i
		case seenCustomType:
			s.ctStart, s.ctEnd = vstart, i
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// scanMessage is scanObject for the message object (depth 2), watching its
// "role" name the way scanTop watches the envelope.
func (s *lineScan) scanMessage(b []byte, i int) (int, bool) {
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	roles := 0
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		start := i
		var ok bool
		if i, ok = jsonscan.String(b, i); !ok {
			return i, false
		}
		name := b[start+1 : i-1]
		isRole := string(name) == "role"
		isContent := string(name) == "content"
		if string(name) == "timestamp" {
			s.stamped = true
		}
		if isRole {
			if roles++; roles > 1 {
				s.plain = false
			}
		} else if bytes.IndexByte(name, '\\') >= 0 {
			s.plain, s.escaped = false, true
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = jsonscan.SkipSpace(b, i+1)
		vstart := i
		if i, ok = scanValue(b, i, 2); !ok {
			return i, false
		}
		if isRole {
			s.role = [2]int{vstart, i}
		}
		if isContent {
			s.content = contentValue
			if i-vstart == 4 && string(b[vstart:i]) == "null" {
				s.content = contentNull
			}
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}
