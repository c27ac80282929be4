package session

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// member is one name/value pair of a JSON object, the value kept as raw JSON.
type member struct {
	name  string
	value jsontext.Value
}

// objectMembers splits a JSON object into its members, in order, without decoding values.
func objectMembers(raw []byte) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, errNotObject
	}
	var ms []member
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids the token
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{name, val.Clone()})
	}
	return ms, nil
}

// buildObject encodes members as one JSON object, values written as they are.
func buildObject(ms []member) []byte {
	n := 2
	for _, m := range ms {
		n += len(m.name) + len(m.value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, m.name)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// mustValue encodes v as a JSON value; v is always one of this package's own
// encodable values, so a failure is a programming error.
func mustValue(v any) jsontext.Value {
	if s, ok := v.(string); ok {
		return quoted(s)
	}
	b, err := marshal(v)
	if err != nil {
		panic(fmt.Sprintf("session: encode %T: %v", v, err))
	}
	return b
}

func find(ms []member, name string) (jsontext.Value, bool) {
	for i := len(ms) - 1; i >= 0; i-- { // JSON.parse keeps the last duplicate
		if ms[i].name == name {
			return ms[i].value, true
		}
	}
	return nil, false
}

func without(ms []member, names ...string) []member {
	out := ms[:0:0]
outer:
	for _, m := range ms {
		for _, n := range names {
			if m.name == n {
				continue outer
			}
		}
		out = append(out, m)
	}
	return out
}
