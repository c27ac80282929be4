package rpc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/session"
)

// TestGetMessagesStreamsWhatEncodeWrites: get_messages, written a message at
// a time, is byte for byte what encoding/json's Encoder writes for the whole
// response, on every session under testdata and on messages with white space,
// HTML characters and line separators in them.
func TestGetMessagesStreamsWhatEncodeWrites(t *testing.T) {
	var lists [][]json.RawMessage
	files, _ := filepath.Glob("../testdata/*/sessions/*.jsonl")
	more, _ := filepath.Glob("../testdata/*/*.jsonl")
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms := []json.RawMessage{} // as get_messages answers a session without messages
		for _, m := range session.Load(data).Context().Messages {
			ms = append(ms, json.RawMessage(m.Raw))
		}
		lists = append(lists, ms)
	}
	if len(lists) < 20 {
		t.Fatalf("only %d sessions under testdata", len(lists))
	}
	lists = append(lists, []json.RawMessage{}, []json.RawMessage{
		json.RawMessage(`{ "role" : "user",` + "\n" + ` "content": "a <b> & c \u2028 d"}`),
		json.RawMessage("{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\u2029y</script>\"}]}"),
	})
	for i, ms := range lists {
		for _, id := range []json.RawMessage{nil, json.RawMessage(`"req-1"`), json.RawMessage(`7`)} {
			r := ok(id, "get_messages", piMessages{Messages: ms})
			var want, got bytes.Buffer
			if err := json.NewEncoder(&want).Encode(r); err != nil {
				t.Fatal(err)
			}
			if !writeMessages(&got, r) {
				t.Fatal("writeMessages did not write get_messages' answer")
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				g, w := got.Bytes(), want.Bytes()
				k := 0
				for k < len(g) && k < len(w) && g[k] == w[k] {
					k++
				}
				t.Fatalf("list %d: differ at byte %d: streamed %q, want %q", i, k, g[max(0, k-40):min(len(g), k+40)], w[max(0, k-40):min(len(w), k+40)])
			}
		}
	}
	if writeMessages(&bytes.Buffer{}, ok(nil, "get_state", map[string]any{})) {
		t.Fatal("writeMessages wrote another command's answer")
	}
}

// TestGetEntriesStreamsWhatEncodeWrites: get_entries, written an entry at a
// time, is byte for byte the answer encoding/json's Encoder wrote when it was
// a map of the whole list, on every session under testdata and on entries
// with white space, HTML characters, line separators, escapes and text that
// is not ASCII; a session without entries still answers "entries":[].
func TestGetEntriesStreamsWhatEncodeWrites(t *testing.T) {
	type list struct {
		es   []json.RawMessage
		leaf string
	}
	var lists []list
	files, _ := filepath.Glob("../testdata/*/sessions/*.jsonl")
	more, _ := filepath.Glob("../testdata/*/*.jsonl")
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		var es []json.RawMessage
		for _, en := range l.Entries() {
			es = append(es, json.RawMessage(en.Raw()))
		}
		leaf := ""
		if lf := l.Leaf(); lf != nil {
			leaf = lf.ID
		}
		lists = append(lists, list{es, leaf})
	}
	if len(lists) < 20 {
		t.Fatalf("only %d sessions under testdata", len(lists))
	}
	lists = append(lists, list{nil, ""}, list{[]json.RawMessage{
		json.RawMessage(`{ "type" : "message", "id":"a<1>",` + "\n" + ` "message": {"role":"user","content":"a <b> & c \u2028 d \"q\" \\ \t"}}`),
		json.RawMessage("{\"type\":\"message\",\"id\":\"b\u00e9\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"x\u2029y</script> \u00fcn\u00efc\u00f6d\u00e9 \u30c6\u30b9\u30c8 \U0001F600 \\u0000 \\ud83d\\ude00\"}]}}"),
	}, "b\u00e9"})
	for i, l := range lists {
		for _, id := range []json.RawMessage{nil, json.RawMessage(`"req-1"`), json.RawMessage(`7`)} {
			// What get_entries answered before it was streamed.
			es := l.es
			if es == nil {
				es = []json.RawMessage{}
			}
			var want, got bytes.Buffer
			if err := json.NewEncoder(&want).Encode(ok(id, "get_entries", map[string]any{"entries": es, "leafId": nullable(l.leaf)})); err != nil {
				t.Fatal(err)
			}
			if !writeEntries(&got, ok(id, "get_entries", piEntries{Entries: l.es, LeafID: nullable(l.leaf)})) {
				t.Fatal("writeEntries did not write get_entries' answer")
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				g, w := got.Bytes(), want.Bytes()
				k := 0
				for k < len(g) && k < len(w) && g[k] == w[k] {
					k++
				}
				t.Fatalf("list %d: differ at byte %d: streamed %q, want %q", i, k, g[max(0, k-40):min(len(g), k+40)], w[max(0, k-40):min(len(w), k+40)])
			}
		}
	}
	if writeEntries(&bytes.Buffer{}, ok(nil, "get_messages", piMessages{Messages: []json.RawMessage{}})) {
		t.Fatal("writeEntries wrote another command's answer")
	}
}
