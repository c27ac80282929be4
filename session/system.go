package session

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// SystemPrompt replays a context's system messages as pi 1.6.0 does
// (getCurrentSystemMessage and getCurrentSystemPrompt): content is appended,
// sections are patched by name (null deletes one), tools are added and removed
// by name. It returns the one system message that holds the result (nil when
// the context has no system message and no tools) and the prompt text: the
// content followed by the sections, blank parts left out, joined by a blank line.
func SystemPrompt(msgs []ContextMessage) (message json.RawMessage, text string) {
	var content []string
	var sections orderedMembers
	var tools orderedMembers
	var timestamp jsontext.Value
	for _, m := range msgs {
		if m.Role != RoleSystem {
			continue
		}
		ms, err := objectMembers(m.Raw)
		if err != nil {
			continue
		}
		if ts, _ := find(ms, "timestamp"); timestamp == nil && len(ts) > 0 && ts.Kind() != 'n' {
			timestamp = ts
		}
		c, _ := find(ms, "content")
		if t := contentText(c); t != "" {
			content = append(content, t)
		}
		if s, _ := find(ms, "sections"); s.Kind() == '{' {
			sms, _ := objectMembers(s)
			for _, sm := range jsEntries(sms) {
				if sm.value.Kind() == 'n' {
					sections.remove(sm.name)
				} else {
					sections.set(sm.name, sm.value)
				}
			}
		}
		for _, t := range arrayOf(ms, "toolsRemoved") {
			if name, ok := toolName(t); ok {
				tools.remove(name)
			}
		}
		for _, t := range arrayOf(ms, "toolsAdded") {
			if name, ok := toolName(t); ok {
				tools.set(name, t)
			}
		}
	}
	if timestamp == nil && len(tools.ms) == 0 {
		return nil, ""
	}
	joined := strings.Join(content, "\n\n")
	out := []member{{"role", mustValue(RoleSystem)}, {"content", mustValue(joined)}}
	if len(sections.ms) > 0 {
		out = append(out, member{"sections", buildObject(jsEntries(sections.ms))})
	}
	if len(tools.ms) > 0 {
		vals := make([]string, len(tools.ms))
		for i, t := range tools.ms {
			vals[i] = string(t.value)
		}
		out = append(out, member{"toolsAdded", jsontext.Value("[" + strings.Join(vals, ",") + "]")})
	}
	if timestamp == nil {
		timestamp = jsontext.Value("0")
	}
	out = append(out, member{"timestamp", timestamp})
	parts := []string{}
	if joined != "" {
		parts = append(parts, joined)
	}
	for _, s := range jsEntries(sections.ms) {
		if t, ok := jsonString(s.value); ok && t != "" {
			parts = append(parts, t)
		}
	}
	return buildObject(out), strings.Join(parts, "\n\n")
}

// contentText is pi's contentText: a string as it is, the text blocks of a
// list joined by newlines.
func contentText(c jsontext.Value) string {
	switch c.Kind() {
	case '"':
		return jsonStr(c)
	case '[':
		var blocks []jsontext.Value
		if unmarshal(c, &blocks) != nil {
			return ""
		}
		var parts []string
		for _, b := range blocks {
			if b.Kind() != '{' {
				continue
			}
			bms, err := objectMembers(b)
			if err != nil {
				continue
			}
			if t, _ := find(bms, "type"); jsonStr(t) == "text" {
				v, _ := find(bms, "text")
				parts = append(parts, jsTemplate(v))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func arrayOf(ms []member, name string) []jsontext.Value {
	v, _ := find(ms, name)
	if v.Kind() != '[' {
		return nil
	}
	var out []jsontext.Value
	_ = unmarshal(v, &out)
	return out
}

// toolName is the key a tool has in pi's Map of tools: its name.
func toolName(t jsontext.Value) (string, bool) {
	if t.Kind() != '{' {
		return "", false
	}
	ms, err := objectMembers(t)
	if err != nil {
		return "", false
	}
	v, _ := find(ms, "name")
	if s, ok := jsonString(v); ok {
		return "s" + s, true
	}
	return "v" + string(v), true
}

// orderedMembers is a JavaScript Map from names to JSON values: names keep the
// position they were first set at until they are deleted.
type orderedMembers struct{ ms []member }

func (o *orderedMembers) set(name string, v jsontext.Value) {
	for i := range o.ms {
		if o.ms[i].name == name {
			o.ms[i].value = v
			return
		}
	}
	o.ms = append(o.ms, member{name, v})
}

func (o *orderedMembers) remove(name string) {
	for i := range o.ms {
		if o.ms[i].name == name {
			o.ms = append(o.ms[:i], o.ms[i+1:]...)
			return
		}
	}
}

// jsEntries is Object.entries of an object parsed by JSON.parse: one member per
// name with the last value, array-index names first in numeric order, then the
// others where they first appeared.
func jsEntries(ms []member) []member {
	var o orderedMembers
	for _, m := range ms {
		o.set(m.name, m.value)
	}
	var idx, rest []member
	for _, m := range o.ms {
		if isArrayIndex(m.name) {
			idx = append(idx, m)
		} else {
			rest = append(rest, m)
		}
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && arrayIndex(idx[j].name) < arrayIndex(idx[j-1].name); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return append(idx, rest...)
}

func isArrayIndex(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && n < 1<<32-1
}

func arrayIndex(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
