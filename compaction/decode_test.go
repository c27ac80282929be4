package compaction

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// checkFields: a context message read with a scanner gives the fields the
// decoder gives, the scanner reused from the message before.
func checkFields(t *testing.T, s *scanner, m session.ContextMessage) {
	t.Helper()
	got, want := s.fields(m), decode(m.Raw)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scanner.fields(%s) =\n%#v, want\n%#v", m.Raw, got, want)
	}
}

// TestScannerFields reads every message of the contexts of every session under
// the repository's testdata folders and examples/ both ways.
func TestScannerFields(t *testing.T) {
	files := repositorySessions(t)
	n, scanned := 0, 0
	var s scanner
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		for _, c := range l.Cursors() {
			for _, m := range l.Cursor(c.ID).Context().Messages {
				checkFields(t, &s, m)
				n++
				if _, ok := s.scan(m.Raw); ok && m.Entry != nil {
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

// TestEachFieldsIsFields: eachFields hands over, in order, what a scanner reads
// from each message, across batches: the context messages of every repository
// session, over and over to more than three batches, every seventh without its
// entry (so read by the decoder).
func TestEachFieldsIsFields(t *testing.T) {
	var msgs []session.ContextMessage
	for _, f := range repositorySessions(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, session.Load(data).Context().Messages...)
	}
	for len(msgs) < 3*fieldsRun+17 {
		msgs = append(msgs, msgs...)
	}
	for i := 0; i < len(msgs); i += 7 {
		msgs[i].Entry = nil
	}
	var want []fields
	var s scanner
	for _, m := range msgs {
		f := s.fields(m)
		f.Content.Blocks = slices.Clone(f.Content.Blocks)
		want = append(want, f)
	}
	i := 0
	eachFields(msgs, func(f *fields) {
		if i >= len(want) || !reflect.DeepEqual(*f, want[i]) {
			t.Fatalf("message %d of %d: eachFields gave\n%#v, want\n%#v", i, len(msgs), *f, want[min(i, len(want)-1)])
		}
		i++
	})
	if i != len(msgs) {
		t.Fatalf("eachFields gave %d of %d messages", i, len(msgs))
	}
}

// repositorySessions lists the sessions under the repository's testdata
// folders and examples/.
func repositorySessions(t *testing.T) []string {
	t.Helper()
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
	return files
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
	// Fields of a wrong type empty the message for the decoder, wherever they are.
	`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{"path":"a"}}],"summary":5}`,
	`{"role":"toolResult","toolCallId":7,"content":"x"}`, `{"role":"toolResult","isError":"yes","content":"x"}`,
	`{"role":"user","content":"x","command":null,"output":["o"]}`, `{"role":"compactionSummary","summary":null}`,
	`{"role":"branchSummary","summary":"esc\naped"}`, `{"role":"system","content":"p","sections":[1]}`,
	// A usage is kept as written, and read only to find the last usable one.
	`{"role":"assistant","content":[{"type":"text","text":"a"}],"usage":{"input":"3"}}`,
	`{"role":"assistant","content":[{"type":"text","text":"a"}],"usage":{"input":1e999}}`,
	`{"role":"assistant","content":[],"usage":[1]}`,
	// What fields does not read is not checked, by either.
	`{"role":"user","content":"x","timestamp":"not a number","api":5,"details":{"summary":1}}`,
	`{"Role":"user","role":"assistant","content":"case"}`, `{"summ\u0061ry":"escaped name","role":"user"}`,
	`{"role":"assistant","usage":{"input":1,"input":2},"content":[]}`, `{"role":"user","summary":"s","summary":"t"}`,
}

// TestScanFieldsNames: the scanner reads every field of fields (one added to
// fields and not to the walk would be left out silently): each, given twice,
// makes it give up, where a field it does not know is skipped.
func TestScanFieldsNames(t *testing.T) {
	typ := reflect.TypeFor[fields]()
	var s scanner
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		raw := fmt.Sprintf(`{"role":"user",%q:null,%q:null}`, name, name)
		if _, ok := s.scan([]byte(raw)); ok {
			t.Errorf("the scanner does not read fields.%s (%q)", typ.Field(i).Name, name)
		}
	}
	if _, ok := s.scan([]byte(`{"role":"user","unknown":null,"unknown":null}`)); !ok {
		t.Errorf("the scanner gives up on a repeated field that fields does not have")
	}
}

func FuzzScannerFields(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// As in a loaded entry: the line is valid JSON.
		l := session.Load([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n" +
			`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":` + raw + "}\n"))
		var s scanner
		for _, m := range l.Cursor("").Context().Messages {
			checkFields(t, &s, m)
			checkFields(t, &s, m) // again with the scanner used
		}
	})
}

var toolArgsSeeds = []string{
	`{"path":"internal/a.go"}`, `{"command":"go test ./...","timeout":5}`, `{"path":"src","pattern":"func "}`,
	`{"path":5}`, `{"path":null,"command":"ls"}`, `{"command":["ls"],"path":"a"}`, `{"path":"a","path":"b"}`,
	`{"pa\u0074h":"escaped name"}`, `{"path":"esc\u0061ped"}`, `"not an object"`, `[1]`, `null`, ` {"path":"spaced"}`,
	`{"Path":"case","path":"p"}`, `{"nested":{"path":"x"},"pattern":"p"}`, "{\"path\":\"bad \xff\"}", `{}`,
}

// FuzzScanToolArgs: what scanToolArgs reads, when it reads it, is what each
// decoding of the arguments reads: the summary's names, a bash command's
// phase and the file operations' path.
func FuzzScanToolArgs(f *testing.F) {
	for _, s := range toolArgsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return // arguments are a value of a valid line
		}
		got, ok := scanToolArgs([]byte(raw))
		if !ok {
			return
		}
		var want toolArgs
		if err := jsonUnmarshal([]byte(raw), &want); err != nil || got != want {
			t.Fatalf("scanToolArgs(%s) = %+v, the decoder %+v (%v)", raw, got, want, err)
		}
		var c struct {
			Command string `json:"command"`
		}
		if err := jsonUnmarshal([]byte(raw), &c); err != nil || c.Command != got.Command {
			t.Fatalf("scanToolArgs(%s) reads command %q, the decoder %q (%v)", raw, got.Command, c.Command, err)
		}
		if p := decodeArgsPath(jsontext.Value(raw)); p != got.Path {
			t.Fatalf("scanToolArgs(%s) reads path %q, the file operations %q", raw, got.Path, p)
		}
	})
}

func TestScanToolArgs(t *testing.T) {
	read := 0
	for _, s := range toolArgsSeeds {
		if _, ok := scanToolArgs([]byte(s)); ok {
			read++
		}
	}
	if read < 5 {
		t.Fatalf("scanToolArgs read %d of the seeds, want at least 5 (the plain objects)", read)
	}
}
