package compaction

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

// checkDecodeWith: a context message read with a scanner gives the fields the
// decoder gives, the scanner reused from the message before.
func checkDecodeWith(t *testing.T, s *session.MessageScanner, m session.ContextMessage) {
	t.Helper()
	got, want := decodeWith(s, m), decode(m.Raw)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeWith(%s) =\n%#v, want\n%#v", m.Raw, got, want)
	}
}

// TestDecodeWith reads every message of the contexts of every session under
// the repository's testdata folders and examples/ both ways.
func TestDecodeWith(t *testing.T) {
	var files []string
	for _, root := range []string{"..", "../examples"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && (root != ".." || strings.Contains(p, "testdata")) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 100 {
		t.Fatalf("found %d sessions", len(files))
	}
	n, scanned := 0, 0
	var s session.MessageScanner
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		for _, c := range l.Cursors() {
			for _, m := range l.Cursor(c.ID).Context().Messages {
				checkDecodeWith(t, &s, m)
				n++
				if _, ok := s.Scan(m.Raw); ok && m.Entry != nil {
					scanned++
				}
			}
		}
	}
	if scanned < n/2 {
		t.Fatalf("%d of %d messages were read without the decoder", scanned, n)
	}
	t.Logf("%d sessions, %d messages, %d read without the decoder", len(files), n, scanned)
}

var decodeSeeds = []string{
	`{"role":"user","content":"hi","timestamp":1}`,
	`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"f.go"}}],"usage":{"input":1,"output":2,"totalTokens":3},"stopReason":"toolUse"}`,
	`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":true}`,
	`{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0}`,
	`{"role":"compactionSummary","summary":"s","tokensBefore":5}`,
	`{"role":"branchSummary","summary":"s","fromId":"x"}`,
	`{"role":"system","content":"p","sections":{"a":"b"},"toolsAdded":[{"name":"t"}]}`,
	`{"role":"user","content":[{"type":"text","text":"see \"summary\""}]}`,
	`{"role":"user","summary":5,"content":"x"}`,
	`{"role":"assistant","usage":null,"content":[]}`,
	`{"role":"user","role":"assistant","content":"dup"}`,
	`{"role":"custom","customType":"n","content":"c","display":true}`,
}

func FuzzDecodeWith(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// As in a loaded entry: the line is valid JSON.
		l := session.Load([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" +
			`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":` + raw + "}\n"))
		var s session.MessageScanner
		for _, m := range l.Cursor("").Context().Messages {
			checkDecodeWith(t, &s, m)
			checkDecodeWith(t, &s, m) // again with the scanner used
		}
	})
}
