package catalog

import (
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// TestAppendJSON checks the hand-written encoder against a reflective one that
// writes as JSON.stringify does, on awkward strings.
func TestAppendJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" back \\ slash", "ctl \x00\x01\x1f\b\f\n\r\t", "line\u2028para\u2029", "<script>&", "漢字 émoji 🚀", "bad \xff utf8 \xe6\x97"} {
		in := Info{Path: s, ID: s, Cwd: s, Name: s, ParentSessionPath: s, FirstMessage: s, Created: jsDate("2026-03-01T12:00:00.5Z"), MessageCount: 3, EntryCount: 4, SizeBytes: 5}
		got := string(in.AppendJSON(nil))
		want, err := jsonv2.Marshal(&in, jsonv2.Deterministic(true), jsontext.AllowInvalidUTF8(true))
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%q: invalid JSON %s", s, got)
		}
	}
}
