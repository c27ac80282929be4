package session

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// lineSeeds are lines as pi and arbor write them, and the odd shapes the full
// decode exists for.
var lineSeeds = []string{
	`{"type":"session","version":3,"id":"0194a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`,
	`{"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"m"}`,
	`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`,
	`{"type":"message","id":"b","parentId":"a","timestamp":"t","cursor":"c0ffee00","message":{"role":"assistant","content":[{"type":"toolCall","id":"x","name":"read","arguments":{"path":"/a"}}]}}`,
	`{"type":"custom","customType":"arbor.leaf","data":{"from":null},"id":"c","parentId":"b","timestamp":"t"}`,
	`{"type":"custom","id":"c","parentId":"b","timestamp":"t","cursor":"c0ffee00","customType":"arbor.cursor","data":{"name":"x"}}`,
	`{"type":"label","id":"d","parentId":"c","timestamp":"t","targetId":"a","label":"L"}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"},"id":"b"}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","role":"assistant"}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"},"cursor":"late"}`,
	`{"type":"message","\u0069d":"esc","parentId":null,"timestamp":"t","message":{"role":"user"}}`,
	`  {"id":"x","type":"model_change","parentId":"p","provider":"a","modelId":"b"}  `,
	"\r{\"type\":\"message\",\"id\":\"cr\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\"}}\r",
	`{"type":"message","id":"é","parentId":null,"timestamp":"t","message":{"role":"us\u0065r"}}`,
	"{\"type\":\"message\",\"id\":\"\xff\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\"}}",
	`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":"not an object"}`,
	`{"type":5,"id":"a"}`, `{"id":"a"}`, `[1,2]`, `5`, `null`, `"str"`, `{`, `{"type":"message","id":"a"`, `{}`,
	`{"a":[[[[{"b":-0.5e+10}]]]],"c":true,"d":false,"e":null}`, `{"a":01}`, `{"a":"\u12"}`, `{"a":1.}`, `{"a":-}`,
}

func addLineSeeds(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
}

// FuzzValidJSON: the fast validator agrees with encoding/json on every input,
// and scanLine (the validator the loader uses) agrees with both.
func FuzzValidJSON(f *testing.F) {
	addLineSeeds(f)
	f.Add([]byte(" \t\n{} \r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b)
		if got := validJSON(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json.Valid = %v", b, got, want)
		}
		if got := scanLine(b).ok; got != want {
			t.Fatalf("scanLine(%q).ok = %v, encoding/json.Valid = %v", b, got, want)
		}
	})
}

// TestValidJSONDepth: nesting is bounded where encoding/json bounds it.
func TestValidJSONDepth(t *testing.T) {
	for _, depth := range []int{9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			closer := map[string]string{"[": "]", `{"a":`: "}"}[open]
			b := append(bytes.Repeat([]byte(open), depth), '1')
			b = append(b, bytes.Repeat([]byte(closer), depth)...)
			if got, want := validJSON(b), json.Valid(b); got != want {
				t.Errorf("depth %d of %s: validJSON %v, encoding/json %v", depth, open, got, want)
			}
			if got, want := scanLine(b).ok, json.Valid(b); got != want {
				t.Errorf("depth %d of %s: scanLine %v, encoding/json %v", depth, open, got, want)
			}
		}
	}
}

// FuzzParseLine: parseLine (fast envelope or full decode) reads what a
// reference decode with encoding/json reads, which is what JSON.parse reads:
// for duplicate names the last one.
func FuzzParseLine(f *testing.F) {
	addLineSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // a line never holds a newline
		}
		h, e, err := parseLine(line)
		var ref map[string]any
		trimmed := bytes.Trim(line, " \t\r")
		if !json.Valid(trimmed) || json.Unmarshal(trimmed, &ref) != nil || ref == nil {
			if err != errNotObject {
				t.Fatalf("parseLine(%q): err %v, want errNotObject (not a JSON object)", line, err)
			}
			return
		}
		str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
		typ, ok := ref["type"].(string)
		if !ok {
			if err != errNoType {
				t.Fatalf("parseLine(%q): err %v, want errNoType", line, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("parseLine(%q): %v", line, err)
		}
		if typ == typeHeader {
			if h == nil || e != nil {
				t.Fatalf("parseLine(%q): header %v entry %v, want a header", line, h, e)
			}
			got := [4]string{h.ID, h.Timestamp, h.Cwd, h.ParentSession}
			want := [4]string{str(ref, "id"), str(ref, "timestamp"), str(ref, "cwd"), str(ref, "parentSession")}
			if got != want {
				t.Fatalf("parseLine(%q) header = %q, reference %q", line, got, want)
			}
			if hh, ok := ParseHeader(line); ok != (h.ID != "") || (ok && hh.ID != h.ID) {
				t.Fatalf("ParseHeader(%q) = %v, %v", line, hh, ok)
			}
			return
		}
		if e == nil || h != nil {
			t.Fatalf("parseLine(%q): header %v entry %v, want an entry", line, h, e)
		}
		msg, _ := ref["message"].(map[string]any)
		got := [6]string{e.Type, e.ID, e.ParentID, e.Timestamp, e.Cursor, e.msgRole()}
		want := [6]string{typ, str(ref, "id"), str(ref, "parentId"), str(ref, "timestamp"), str(ref, "cursor"), ""}
		if typ == TypeMessage {
			want[5] = str(msg, "role")
		}
		if got != want {
			t.Fatalf("parseLine(%q) envelope = %q, reference %q", line, got, want)
		}
		wantCustom := ""
		if typ == TypeCustom {
			wantCustom = str(ref, "customType")
		}
		if e.customType() != wantCustom {
			t.Fatalf("parseLine(%q) customType = %q, reference %q", line, e.customType(), wantCustom)
		}
		refMsg, hasMsg := ref["message"]
		raw := e.messageRaw()
		if (raw != nil) != hasMsg {
			t.Fatalf("parseLine(%q) message %q, reference has message: %v", line, raw, hasMsg)
		}
		if hasMsg {
			var gotMsg any
			if err := json.Unmarshal(raw, &gotMsg); err != nil || !reflect.DeepEqual(gotMsg, refMsg) {
				t.Fatalf("parseLine(%q) message %q, reference %v", line, raw, refMsg)
			}
		}
		if !bytes.Equal(e.Raw(), bytes.Trim(line, " \t\r\n")) {
			t.Fatalf("Raw() = %q, want the line %q", e.Raw(), line)
		}
		// The envelope read from the scan's spans equals the full decode's.
		if _, full, err := decodeEnvelope(bytes.Trim(line, " \t\r\n")); err != nil || full == nil ||
			[6]string{full.Type, full.ID, full.ParentID, full.Timestamp, full.Cursor, full.msgRole()} != got {
			t.Fatalf("parseLine(%q) = %q, full decode %+v, %v", line, got, full, err)
		}
		if pe, ok := ParseLine(line); !ok || pe.ID != e.ID {
			t.Fatalf("ParseLine(%q) = %v, %v", line, pe, ok)
		}
	})
}

// FuzzLoad: any bytes load without a panic; every line that is an entry with
// an id no other entry line has is loaded byte for byte; and loading what a
// load serializes to gives the same file and the same context.
func FuzzLoad(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(lineSeeds[0] + "\n" + s + "\n"))
	}
	f.Add([]byte(lineSeeds[0] + "\n" + lineSeeds[2] + "\n" + lineSeeds[3] + "\n" + lineSeeds[4] + "\n" + lineSeeds[5]))
	f.Add([]byte(lineSeeds[1] + "\n" + `{"type":"message","timestamp":"t","message":{"role":"user","content":"x"}}` + "\n" +
		`{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":1,"tokensBefore":3}` + "\n"))
	f.Add(serializeLog(cursorSeed()))
	// pi 1.6.0's entries: system messages, context edits (of edits, of other
	// branches, of a compaction's kept part, odd replacements), usage entries,
	// a compaction with a checkpoint that keeps nothing, null content.
	f.Add([]byte(lineSeeds[0] + "\n" + strings.Join([]string{
		`{"type":"message","id":"s1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"system","content":null,"sections":{"b":"B","1":"one","a":"A","a":"A2"},"toolsAdded":[{"name":"read"},{"name":"bash"}],"timestamp":1}}`,
		`{"type":"message","id":"u1","parentId":"s1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":null,"timestamp":2}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","timestamp":3}}`,
		`{"type":"message","id":"b1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"timestamp":3}}`,
		`{"type":"context_edit","id":"e1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"u1","replacement":{"content":"x"}}`,
		`{"type":"context_edit","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:04.000Z","targetId":"e1","replacement":null}`,
		`{"type":"context_edit","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:05.000Z","targetId":"b1","replacement":null}`,
		`{"type":"context_edit","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:06.000Z","targetId":"a1"}`,
		`{"type":"context_edit","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:07.000Z","targetId":7,"replacement":"text"}`,
		`{"type":"usage","id":"g1","parentId":"e5","timestamp":"2026-01-01T00:00:08.000Z","kind":"x-new","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.5}}}`,
		`{"type":"message","id":"s2","parentId":"g1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"system","content":[{"type":"text","text":"more"}],"sections":{"a":null},"toolsRemoved":[{"name":"bash"}],"timestamp":4}}`,
		`{"type":"compaction","id":"c1","parentId":"s2","timestamp":"2026-01-01T00:00:10.000Z","summary":"s","firstKeptEntryId":"u1","tokensBefore":9,"systemMessage":{"role":"system","content":"cp","timestamp":5}}`,
		`{"type":"context_edit","id":"e6","parentId":"c1","timestamp":"2026-01-01T00:00:11.000Z","targetId":"a1","replacement":{"content":[{"type":"text","text":"kept part"}]}}`,
		`{"type":"compaction","id":"c2","parentId":"e6","timestamp":"2026-01-01T00:00:12.000Z","summary":"t","firstKeptEntryId":"c2","tokensBefore":9}`,
		`{"type":"message","id":"u2","parentId":"c2","timestamp":"2026-01-01T00:00:13.000Z","message":{"role":"user","content":"go","timestamp":6}}`,
	}, "\n") + "\n"))
	files, _ := filepath.Glob(filepath.Join("testdata", "edges", "*.jsonl"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := Load(data)
		rep := l.Report()

		if rep.Version >= 2 && rep.Version <= CurrentVersion {
			// Without a version 1 migration, ids are the file's own.
			count := map[string]int{}
			var lines [][]byte
			for _, ln := range bytes.Split(data, []byte("\n")) {
				_, e, err := parseLine(ln)
				if err != nil || e == nil || e.ID == "" {
					continue
				}
				count[e.ID]++
				lines = append(lines, bytes.Trim(ln, " \t\r"))
			}
			for _, ln := range lines {
				_, e, _ := parseLine(ln)
				if count[e.ID] != 1 {
					continue
				}
				got := l.Entry(e.ID)
				if got == nil {
					t.Fatalf("entry %q of line %q was not loaded", e.ID, ln)
				}
				if e.msgRole() != "hookMessage" && !bytes.Equal(got.Raw(), ln) {
					t.Fatalf("entry %q loaded as %q, line %q", e.ID, got.Raw(), ln)
				}
			}
		}
		checkTree(t, l)

		s1 := serializeLog(l)
		l2 := Load(s1)
		if s2 := serializeLog(l2); !bytes.Equal(s1, s2) {
			t.Fatalf("not stable:\nfirst  %q\nsecond %q", s1, s2)
		}
		if a, b := l.Cursors(), l2.Cursors(); !reflect.DeepEqual(a, b) {
			t.Fatalf("cursors changed on reload:\nfirst  %+v\nsecond %+v", a, b)
		}
		// The context is the projection's messages; every message, the system
		// prompt replayed from them and what goes to a model is JSON.
		ctx := l.Context()
		p1, _ := l.Projection().Context().MarshalJSON()
		if c1, _ := ctx.MarshalJSON(); !bytes.Equal(c1, p1) || !validJSON(c1) {
			t.Fatalf("context %s, projection %s", c1, p1)
		}
		if sys, _ := SystemPrompt(ctx.Messages); sys != nil && !validJSON(sys) {
			t.Fatalf("system prompt %s", sys)
		}
		for _, m := range ForModel(ctx.Messages) {
			if !validJSON(m) {
				t.Fatalf("for the model: %s", m)
			}
		}
		for _, e := range l.Entries() {
			if key, _, ok := e.UsageRecord(); ok && key == "" {
				t.Fatalf("entry %s costs under no key", e.ID)
			}
		}
		for _, c := range append(l.Cursors(), CursorInfo{}) { // {} : the active cursor
			c1, _ := l.Cursor(c.ID).Context().MarshalJSON()
			c2, _ := l2.Cursor(c.ID).Context().MarshalJSON()
			if !bytes.Equal(c1, c2) {
				t.Fatalf("cursor %q: context changed on reload:\nfirst  %s\nsecond %s", c.ID, c1, c2)
			}
		}
	})
}

// cursorSeed is a session arbor wrote with every kind of marker.
func cursorSeed() *Log {
	l := New("/p", WithID("seed"), WithTimestamp("2026-01-01T00:00:00.000Z"))
	u, _ := ParseMessage([]byte(`{"role":"user","content":"q","timestamp":1}`))
	a, _ := ParseMessage([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"}],"provider":"p","model":"m","timestamp":2}`))
	e1, _ := l.AppendMessage(u)
	l.AppendMessage(a)
	wC, _ := l.NewCursor("work")
	w := wC.ID()
	l.Cursor(w).AppendMessage(u)
	l.Cursor(w).SetResolution(e1.ID, Resolution{Level: Outlined, Text: "q…"})
	l.BranchTo(e1.ID)
	l.SetLabel(e1.ID, "start")
	l.Cursor(w).Rename("renamed")
	xC, _ := l.NewCursor("")
	x := xC.ID()
	l.Cursor(x).ResetLeaf()
	l.Switch(w)
	return l
}

func serializeLog(l *Log) []byte {
	var b bytes.Buffer
	b.Write(l.Header().Raw())
	b.WriteByte('\n')
	for _, e := range l.Entries() {
		b.Write(e.Raw())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// checkTree asserts the index's invariants: every entry is reachable from
// exactly one root exactly once, and each parent link is to a known entry
// that the entry names as its parent.
func checkTree(t testing.TB, l *Log) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[*node]int{}
	stack := append([]*node(nil), l.roots...)
	for _, r := range l.roots {
		if r.parent != nil {
			t.Fatalf("root %s has a parent", r.e.ID)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		seen[n]++
		for _, c := range n.kids() {
			if c.parent != n {
				t.Fatalf("child %s of %s has parent link %v", c.e.ID, n.e.ID, c.parent)
			}
			if c.e.ParentID != n.e.ID {
				t.Fatalf("child %s names parent %q, linked under %s", c.e.ID, c.e.ParentID, n.e.ID)
			}
			stack = append(stack, c)
		}
	}
	if len(seen) != len(l.entries) {
		t.Fatalf("%d entries reachable from the roots, %d indexed", len(seen), len(l.entries))
	}
	for n, k := range seen {
		if k != 1 {
			t.Fatalf("entry %s reached %d times", n.e.ID, k)
		}
		if l.byID[n.e.ID] != n {
			t.Fatalf("entry %s is not the indexed one", n.e.ID)
		}
	}
}

// FuzzMessageData: decoding any message never panics, and its content reads
// as encoding/json reads it: a string, or the text of its text blocks.
func FuzzMessageData(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}`))
	f.Add([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","id":"x","name":"n","arguments":{}},{"type":"text","text":"b"}],"usage":{"input":1}}`))
	f.Add([]byte(`{"role":"bashExecution","command":"ls","exitCode":null,"cancelled":1}`))
	f.Add([]byte(`{"role":"user","content":[5,"x",{"type":"text"}]}`))
	f.Add([]byte(`{"role":"user","timestamp":"not a number","content":"still read"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMessage(b)
		if err != nil {
			return
		}
		d, err := m.Data()
		if err != nil {
			t.Fatalf("Data() of %s: %v", b, err)
		}
		var ref map[string]json.RawMessage // case-sensitive names, as in JavaScript
		if json.Unmarshal(b, &ref) != nil {
			return
		}
		if r, ok := ref["role"]; ok {
			var role string
			if json.Unmarshal(r, &role) == nil && d.Role != role {
				t.Fatalf("role %q read as %q", role, d.Role)
			}
		}
		content := ref["content"]
		var s string
		if json.Unmarshal(content, &s) == nil {
			if !d.Content.IsString || d.Content.String != s {
				t.Fatalf("content %q read as %+v", s, d.Content)
			}
			return
		}
		var blocks []json.RawMessage
		if json.Unmarshal(content, &blocks) != nil {
			return
		}
		var texts []string
		for _, raw := range blocks {
			var blk map[string]any // case-sensitive names, as in JavaScript
			if json.Unmarshal(raw, &blk) == nil && blk["type"] == "text" {
				text, _ := blk["text"].(string)
				texts = append(texts, text)
			}
		}
		if got, want := d.Content.Text("\x00"), strings.Join(texts, "\x00"); got != want {
			t.Fatalf("text of %s = %q, want %q", content, got, want)
		}
	})
}

// FuzzNumber: the integer shortcut of number gives what ParseFloat gives.
func FuzzNumber(f *testing.F) {
	for _, seed := range []string{"0", "-0", "12", "-12", "999999999999999", "1000000000000000", "1.5", "1e3", "007", "-", "9007199254740993"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := number([]byte(v))
		if v == "" || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			if ok {
				t.Fatalf("%q: a number", v)
			}
			return
		}
		want, err := strconv.ParseFloat(v, 64)
		if ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: %v %v, ParseFloat %v %v", v, got, ok, want, err)
		}
	})
}
