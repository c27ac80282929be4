package agent

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/arborlog/arbor/session"
)

// Every message of the repository's sessions but one with an image is
// written by the fast encoders, as the SDK writes it; one with an image is
// left to the SDK.
func TestWireWritesEverySessionMessage(t *testing.T) {
	written, left := 0, 0
	check := func(kind, name string, m json.Marshaler, got []byte, ok, image bool) {
		t.Helper()
		want, err := m.MarshalJSON()
		switch {
		case err != nil:
			t.Fatal(err)
		case ok && string(got) != string(want):
			t.Fatalf("%s %s: wrote\n%s\nthe SDK\n%s", kind, name, got, want)
		case ok == image:
			t.Fatalf("%s %s: written %v, with an image %v: %s", kind, name, ok, image, want)
		case ok:
			written++
		default:
			left++
		}
	}
	for name, data := range sessionFiles(t) {
		for variant, r := range requestsFor(t, data) {
			for m := range openaiMessages(r) {
				got, ok := appendOpenAI(nil, m)
				image := m.OfUser != nil && slices.ContainsFunc(m.OfUser.Content.OfArrayOfContentParts, func(p openai.ChatCompletionContentPartUnionParam) bool { return p.OfImageURL != nil })
				check("openai", name+" "+variant, m, got, ok, image)
			}
			for m := range anthropicMessages(r, true) {
				got, ok := appendAnthropic(nil, m)
				image := m.OfUser != nil && slices.ContainsFunc(m.OfUser.Content, func(b anthropic.ContentBlockParamUnion) bool { return b.OfImage != nil })
				check("anthropic", name+" "+variant, m, got, ok, image)
			}
		}
	}
	if written < 1000 || left == 0 {
		t.Fatalf("%d messages written, %d left to the SDK: the sessions should have thousands, and some images", written, left)
	}
	t.Logf("%d messages written, %d with an image left to the SDK", written, left)
}

// The characters the SDKs escape and jsontext does not: the line
// separators, and for Anthropic HTML's three.
func TestWireQuotesAsTheSDKs(t *testing.T) {
	for _, text := range []string{"a <b> & c", "line\u2028sep\u2029para", "tab\there \"q\" \\ \x01 \x7f é 🚀"} {
		r := Request{System: text, Messages: []json.RawMessage{UserMessage(text), session.Assistant{Content: []session.Block{session.TextBlock(text)}}.Message().Raw()}}
		n := 0
		for m := range openaiMessages(r) {
			want, _ := m.MarshalJSON()
			if got, ok := appendOpenAI(nil, m); !ok || string(got) != string(want) {
				t.Errorf("openai %q: wrote %s (%v), the SDK %s", text, got, ok, want)
			}
			n++
		}
		for m := range anthropicMessages(r, true) {
			want, _ := m.MarshalJSON()
			if got, ok := appendAnthropic(nil, m); !ok || string(got) != string(want) {
				t.Errorf("anthropic %q: wrote %s (%v), the SDK %s", text, got, ok, want)
			}
			n++
		}
		if n != 5 {
			t.Errorf("%q: %d messages, want 3 for openai and 2 for anthropic", text, n)
		}
	}
	// Invalid UTF-8 (a message decodes valid, but a tool's schema or the
	// system prompt need not) is the SDK's to replace.
	if got, ok := appendOpenAI(nil, openai.SystemMessage(string([]byte{'a', 0xff}))); ok {
		t.Errorf("invalid UTF-8 written: %s", got)
	}
}

// Plain tool arguments become the input's JSON without a map; others the map.
func TestToolInputOfPlainArguments(t *testing.T) {
	if got, ok := toolInput([]byte(` {"path": "a.go", "command": "ls <x> & y", "n": [1, -2, {"b": true, "a": null}]} `)).(json.RawMessage); !ok ||
		string(got) != `{"command":"ls \u003cx\u003e \u0026 y","n":[1,-2,{"a":null,"b":true}],"path":"a.go"}` {
		t.Errorf("plain arguments: %s (%v)", got, ok)
	}
	for _, args := range []string{`{"a":1.5}`, `{"a":1,"a":2}`, `not json`, ``} {
		if got, ok := toolInput([]byte(args)).(map[string]any); !ok {
			t.Errorf("arguments %q: %#v, want the map json.Unmarshal makes", args, toolInput([]byte(args)))
		} else if args == `{"a":1.5}` && got["a"] != 1.5 {
			t.Errorf("arguments %q: %v", args, got)
		}
	}
}
