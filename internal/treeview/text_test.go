package treeview

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
)

var lazySeeds = []string{
	`"plain text"`,
	`"esc\"aped \\ \/ \b\f\n\r\t and \u00e9 \ud83d\ude00 emoji"`,
	`"lone \ud83d surrogate and \ude00"`,
	"\"invalid \xff\xfe utf-8 \xe2\x82 cut\"",
	`"héllo wörld 漢字 ` + strings.Repeat("long ", 200) + `"`,
	`[{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":" two"}]`,
	`[{"type":"text","text":"first","text":"last wins"},{"type":"te\u0078t","text":"escaped type"}]`,
	`[{"type":"text","text":5},{"type":"text"},{"text":"no type"},{"type":5,"text":"bad type"},"str",1,null,[]]`,
	`[{"type":"text","text":"x","id":7},{"type":"text","type":"image","text":"not text"}]`,
	`[]`, `{}`, `5`, `null`, `[{"type":"image"}]`,
	`[ {"type" : "text" , "text" : "spaced"} , {"type":"text","text":"` + strings.Repeat(`\u0041\n`, 300) + `"} ]`,
}

// checkLazyContent: what the tree reads of a large message's text without
// decoding it is what decoding it gives: the whole text when asked for all of
// it, and prefixes of it (but for their last character) that grow with n.
func checkLazyContent(t *testing.T, raw string) {
	raw = strings.Trim(raw, " \t\r\n") // a member's value as objectMembers cuts it
	var c session.Content
	if json.Unmarshal([]byte(raw), &c) != nil {
		return // not valid JSON: session files never hold such a value
	}
	want := c.Text("")
	var blocks [][]rawMember
	if strings.HasPrefix(raw, "[") {
		var ok bool
		if blocks, _, ok = arrayObjects([]byte(raw), 0); !ok {
			t.Fatalf("arrayObjects cannot walk %q", raw)
		}
	}
	text := contentTextPrefix([]byte(raw), blocks)
	if got, whole := text(-1); got != want || !whole {
		t.Fatalf("whole text of %q = %q (whole %v), want %q", raw, got, whole, want)
	}
	prev := 0
	for n := 0; n <= len(raw)+2; n++ {
		got, whole := text(n)
		if whole {
			if got != want {
				t.Fatalf("text(%d) of %q = %q, called whole, want %q", n, raw, got, want)
			}
			continue
		}
		// All but the last character is a prefix of the text.
		body := got
		if _, size := utf8.DecodeLastRuneInString(body); size > 0 {
			body = body[:len(body)-size]
		}
		if !strings.HasPrefix(want, body) {
			t.Fatalf("text(%d) of %q = %q, not a prefix of %q", n, raw, got, want)
		}
		if len(body) < prev-4 {
			t.Fatalf("text(%d) of %q shrank to %q", n, raw, got)
		}
		prev = len(body)
	}
	image := false
	for _, b := range c.Blocks {
		image = image || b.Type == "image"
	}
	if got := contentHasImage(blocks); got != image {
		t.Fatalf("contentHasImage(%q) = %v, want %v", raw, got, image)
	}
}

func TestLazyContent(t *testing.T) {
	for _, s := range lazySeeds {
		checkLazyContent(t, s)
	}
}

func FuzzLazyContent(f *testing.F) {
	for _, s := range lazySeeds {
		f.Add(s)
	}
	f.Fuzz(checkLazyContent)
}

var quickSeeds = []string{
	`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hello","timestamp":1}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"s"},{"type":"text","text":"reply"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go", "offset" : 3}}],"stopReason":"toolUse","usage":{"input":1}}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"out"}],"isError":true}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom"}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"bashExecution","command":"ls -l","output":"x"}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"esc\naped"}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"a","content":"b"}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"first"},"message":{"role":"user","stopReason":"x"}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","conten\u0074":"escaped name"}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":5},{"type":"image","data":"AA"},"str",null,{"type":"text","text":"x","data":7}]}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":{"type":"text"},"isError":null,"stopReason":null}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":null}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":5,"content":"x"}}`,
	"{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff utf-8\"}}",
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}}`,
	`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":"not an object"}`,
}

// checkQuickMessage: what quickMessage reads of a message, when it reads it,
// is what the decoder gives for every field the tree shows.
func checkQuickMessage(t *testing.T, line string) {
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}` + "\n" + line + "\n")
	l := session.Load(data)
	var scratch []session.Block // reused from message to message, as New does
	for _, e := range l.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		var got, want msgView
		if !quickMessage(e, &got, &scratch) {
			continue
		}
		if !decodeMessage(e, &want) {
			t.Fatalf("quickMessage reads %s, which the decoder cannot", e.Raw())
		}
		if got.msgHead != want.msgHead {
			t.Fatalf("quickMessage(%s) head = %+v, want %+v", e.Raw(), got.msgHead, want.msgHead)
		}
		if want.Role == session.RoleToolResult {
			continue
		}
		type block struct{ Type, Text, ID, Name, Arguments string }
		blocks := func(c session.Content) (out []block) {
			for _, b := range c.Blocks {
				out = append(out, block{b.Type, b.Text, b.ID, b.Name, string(b.Arguments)})
			}
			return out
		}
		g, w := got.content, want.content
		if g.IsString != w.IsString || g.String != w.String || !slices.Equal(blocks(g), blocks(w)) {
			t.Fatalf("quickMessage(%s) content = %+v, want %+v", e.Raw(), g, w)
		}
	}
}

func TestQuickMessage(t *testing.T) {
	read := 0
	for _, s := range quickSeeds {
		checkQuickMessage(t, s)
		l := session.Load([]byte(`{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}` + "\n" + s + "\n"))
		if es := l.Entries(); len(es) > 0 {
			if quickMessage(es[0], &msgView{}, nil) {
				read++
			}
		}
	}
	if read < 6 { // the plain seeds are read without the decoder
		t.Fatalf("quickMessage read %d of the seeds, want at least 6", read)
	}
}

func FuzzQuickMessage(f *testing.F) {
	for _, s := range quickSeeds {
		f.Add(s)
	}
	f.Fuzz(checkQuickMessage)
}

var argSeeds = []string{
	`{"path":"/home/dev/a.go","offset":10,"limit":20}`,
	`{"file_path":"b.go","limit":5}`,
	`{"path":"","file_path":"c.go"}`,
	`{"command":"go test ./...","timeout":30}`,
	`{"pattern":"func ","path":"internal"}`,
	`{"path":null,"offset":"10","limit":true,"command":["x"],"pattern":{"a":1}}`,
	`{"offset":-1.5e2,"limit":0}`,
	`{"path":"a","path":"b"}`,
	`{"pat\u0068":"escaped name"}`,
	`{"command":"esc\naped"}`,
	"{\"path\":\"bad \xff utf-8\"}",
	`{"offset":1e999}`,
	`null`,
	`"a string"`,
	`[1,2]`,
	`{}`,
}

// checkScanArgs: what scanArgs reads of a call's arguments, when it reads
// them, is what ParseCall's decoding of them into a map gives.
func checkScanArgs(t *testing.T, raw string) {
	if !json.Valid([]byte(raw)) {
		return // a loaded line holds valid JSON
	}
	got, ok := scanArgs([]byte(raw))
	if !ok {
		return
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(raw), &m) // as ParseCall: a field out of range is left out, the others read
	if want := argsOf(m); got != want {
		t.Fatalf("scanArgs(%s) = %+v, want %+v", raw, got, want)
	}
}

func TestScanArgs(t *testing.T) {
	read := 0
	for _, s := range argSeeds {
		checkScanArgs(t, s)
		if _, ok := scanArgs([]byte(s)); ok {
			read++
		}
	}
	if read < 8 { // the plain seeds and those with fields of other kinds are read without the decoder
		t.Fatalf("scanArgs read %d of the seeds, want at least 8", read)
	}
}

func FuzzScanArgs(f *testing.F) {
	for _, s := range argSeeds {
		f.Add(s)
	}
	f.Fuzz(checkScanArgs)
}

// A compaction of a short session said "[compaction: 0k tokens]".
func TestCompactionTokens(t *testing.T) {
	for n, want := range map[float64]string{0: "0", 12: "12", 850: "850", 999: "999", 999.6: "1k", 1499: "1k", 1500: "2k", 183600: "184k"} {
		if got := compactionTokens(n); got != want {
			t.Errorf("compactionTokens(%v) = %q, want %q", n, got, want)
		}
	}
}
