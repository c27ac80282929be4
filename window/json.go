package window

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Messages are decoded leniently, as JSON.parse would, and encoded as
// JSON.stringify would: no HTML escaping.
var jsonOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func unmarshal(b []byte, v any) error { return json.Unmarshal(b, v, jsonOptions) }

func marshal(v any) jsontext.Value {
	b, err := json.Marshal(v, jsonOptions, json.Deterministic(true))
	if err != nil {
		// Only the package's own values are marshalled; they always encode.
		panic("window: " + err.Error())
	}
	return b
}

type member struct {
	name  string
	value jsontext.Value
}

// members splits a JSON object into its members, in order. The values share
// raw's memory.
func members(raw []byte) ([]member, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsonOptions)
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	var out []member
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // read before the next call voids the token
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		// The value as it lies in raw, not the decoder's copy: raw is never
		// changed, and large contents are not copied.
		end := int(dec.InputOffset())
		out = append(out, member{name, jsontext.Value(raw[end-len(v) : end])})
	}
	return out, nil
}

// object encodes members as a JSON object, leaving out those without a value.
func object(ms []member) jsontext.Value {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, m := range ms {
		if m.value == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(marshal(m.name))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// edit returns raw with the named members replaced (nil deletes one) and new
// ones appended, keeping the order of the rest. ms, when not nil, is raw
// already split by members, so a message rendered twice is parsed once.
func edit(raw []byte, ms []member, set []member) jsontext.Value {
	if ms == nil {
		var err error
		if ms, err = members(raw); err != nil {
			return object(set)
		}
	}
	ms = slices.Clone(ms)
	for _, s := range set {
		found := false
		for i := range ms {
			if ms[i].name == s.name {
				ms[i].value = s.value
				found = true
			}
		}
		if !found {
			ms = append(ms, s)
		}
	}
	return object(ms)
}

// textContent is a content array of one text block.
func textContent(s string) jsontext.Value {
	return marshal([]textBlock{{Type: "text", Text: s}})
}
