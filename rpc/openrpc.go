package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// OpenRPC returns the OpenRPC document of arbor serve, generated from the
// method table and the Go types of each method's parameters and result.
// docs/openrpc.json is this output (a test fails when they differ).
func OpenRPC() ([]byte, error) {
	type descriptor struct {
		Name     string         `json:"name"`
		Required bool           `json:"required,omitempty"`
		Schema   map[string]any `json:"schema"`
	}
	type methodDoc struct {
		Name           string       `json:"name"`
		Summary        string       `json:"summary"`
		ParamStructure string       `json:"paramStructure"`
		Params         []descriptor `json:"params"`
		Result         descriptor   `json:"result"`
	}
	var methods []methodDoc
	for _, m := range (&server{e: &Engine{}}).table() {
		t := reflect.TypeOf(m.Fn)
		d := methodDoc{Name: m.Name, Summary: m.Summary, ParamStructure: "by-name", Params: []descriptor{}}
		if t.NumIn() == 2 {
			p := t.In(1)
			for i := range p.NumField() {
				f := p.Field(i)
				name, opt, ok := jsonName(f)
				if !ok {
					continue
				}
				d.Params = append(d.Params, descriptor{Name: name, Required: !opt, Schema: schema(f.Type)})
			}
		}
		d.Result = descriptor{Name: m.Name + "Result", Schema: schema(t.Out(0))}
		methods = append(methods, d)
	}
	type noteDoc struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	}
	var notes []noteDoc
	for _, n := range notifications {
		notes = append(notes, noteDoc{Name: n.Name, Params: schema(reflect.TypeOf(n.Params))})
	}
	doc := map[string]any{
		"openrpc": "1.3.2",
		"info": map[string]any{
			"title":       "arbor serve",
			"version":     "1",
			"description": "JSON-RPC 2.0 over newline-delimited JSON on stdin/stdout. Notifications (their params in x-notifications, rho's shapes): ready, agent/start, agent/end, agent/error, message/delta, reasoning/delta, tool/call, tool/result, usage, state/change. Errors: -32700 parse, -32600 invalid request, -32601 method not found, -32602 invalid params (data.field names the parameter), -32603 internal (data.reason: busy, locked or failed).",
		},
		"methods":         methods,
		"x-notifications": notes,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonName is a field's JSON name and whether it may be left out; ok is
// false for a field JSON skips.
func jsonName(f reflect.StructField) (name string, optional, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	parts := strings.Split(tag, ",")
	name = parts[0]
	if name == "" {
		name = f.Name
	}
	for _, o := range parts[1:] {
		if o == "omitempty" || o == "omitzero" {
			optional = true
		}
	}
	return name, optional, true
}

var rawType = reflect.TypeFor[json.RawMessage]()

// schema is the JSON Schema of a Go type as encoding/json writes it.
func schema(t reflect.Type) map[string]any {
	if t == rawType {
		return map[string]any{} // any JSON value: pi's objects, passed through
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schema(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
				// encoding/json puts an embedded struct's fields in the parent.
				inner := schema(f.Type)
				for k, v := range inner["properties"].(map[string]any) {
					props[k] = v
				}
				if r, ok := inner["required"].([]string); ok {
					required = append(required, r...)
				}
				continue
			}
			name, opt, ok := jsonName(f)
			if !ok {
				continue
			}
			props[name] = schema(f.Type)
			if !opt {
				required = append(required, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}
