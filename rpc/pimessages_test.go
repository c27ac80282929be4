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
