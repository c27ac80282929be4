package session

import (
	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/go-json-experiment/json/jsontext"
)

// appendQuoted appends s as a JSON string, as marshal would write it. Names
// and envelope values (types, ids, timestamps) are plain ASCII, so appends
// skip the general encoder for them.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// quoted is appendQuoted as a JSON value.
func quoted(s string) jsontext.Value { return appendQuoted(nil, s) }

// setBuilt gives a new entry the line built for it and, for a message, its
// role: one scan of the line, and the role read from the message's first
// member when the scan shows it cannot be overridden by a later one.
func (e *Entry) setBuilt(raw []byte) {
	s := scanLine(raw)
	e.raw = raw
	e.setScan(s)
	if e.Type != TypeMessage {
		return
	}
	msg := e.messageRaw()
	if s.plain {
		if rest, ok := expect(msg, `{"role":"`); ok {
			if role, _, ok := simpleString(rest); ok {
				e.role = role
				return
			}
		}
	}
	var v struct {
		Role string `json:"role"`
	}
	_ = unmarshal(msg, &v)
	e.role = v.Role
}

// plainRole validates a message object in one pass and returns its role when
// the role is the first member, a plain string, and not repeated (so no later
// member overrides it, as JSON.parse would let it). Otherwise it reports false
// and the caller decodes the message in full.
func plainRole(raw []byte) (role string, stamped, ok bool) {
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false, false
	}
	s := lineScan{plain: true}
	end, ok := s.scanMessage(raw, i)
	if !ok || !s.plain || jsonscan.SkipSpace(raw, end) != len(raw) {
		return "", false, false
	}
	rest, ok := expect(raw[i:], `{"role":"`)
	if !ok {
		return "", false, false
	}
	role, _, ok = simpleString(rest)
	return role, s.stamped, ok && role != ""
}
