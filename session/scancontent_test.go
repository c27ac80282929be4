package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var scanContentSeeds = []string{
	`"plain"`, `""`, `"esc\naped"`, "\"bad \xff utf-8\"", `"héllo 漢字"`,
	`[{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":" two"}]`,
	`[{"type":"thinking","thinking":"hm","thinkingSignature":"s"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go", "n" : [1, 2]}}]`,
	`[{"type":"text","text":"first","text":"last wins"},{"type":"te\u0078t","text":"escaped type"}]`,
	`[{"type":"text","text":5},{"type":"text"},{"text":"no type"},{"type":5,"text":"bad type"},"str",1,null,[]]`,
	`[{"type":"toolCall","arguments":null},{"type":"toolCall","arguments":"s"},{"type":"text","text":null}]`,
	`[]`, `{}`, `5`, `null`, `true`, ` [ {"type" : "text" , "text" : "spaced"} ] `,
	`[{"type":"text","te\u0078t":"escaped name"}]`,
	`[{"type":"thinking","thinking":"","thinkingSignature":"opaque","redacted":true,"textSignature":"t","thoughtSignature":"g"},{"type":"toolCall","id":"c","name":"n","arguments":{},"argumentsError":"not an object"}]`,
	`[{"type":"thinking","redacted":"yes"}]`,
}

// checkScanContent: what ScanContent reads, when it reads it, is what the
// decoder reads.
func checkScanContent(t *testing.T, raw string) {
	if !json.Valid([]byte(raw)) {
		return // session files hold only valid lines
	}
	got, ok := ScanContent([]byte(raw))
	if !ok {
		return
	}
	var want Content
	if err := want.UnmarshalJSON(bytes.TrimSpace([]byte(raw))); err != nil {
		t.Fatalf("ScanContent reads %q, which the decoder cannot: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanContent(%q) = %#v, want %#v", raw, got, want)
	}
}

func TestScanContent(t *testing.T) {
	read := 0
	for _, s := range scanContentSeeds {
		checkScanContent(t, s)
		if _, ok := ScanContent([]byte(s)); ok {
			read++
		}
	}
	if read < 10 {
		t.Fatalf("ScanContent read %d of the seeds, want at least 10 (the plain ones)", read)
	}
	// An append to the arguments never writes into the line they came from.
	line := []byte(`[{"type":"toolCall","arguments":{}}]` + strings.Repeat(" ", 8))
	c, _ := ScanContent(line)
	_ = append(c.Blocks[0].Arguments, 'x')
	if line[len(line)-9] != ']' || line[len(line)-8] != ' ' {
		t.Fatalf("an append to the arguments changed the line: %q", line)
	}
}

func FuzzScanContent(f *testing.F) {
	for _, s := range scanContentSeeds {
		f.Add(s)
	}
	f.Fuzz(checkScanContent)
}

// TestScanBlockFields: ScanContent reads every field of Block: each, given
// twice, makes it give up, where a field it does not know is skipped.
func TestScanBlockFields(t *testing.T) {
	typ := reflect.TypeFor[Block]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		raw := fmt.Sprintf(`[{"type":"text",%q:null,%q:null}]`, name, name)
		if _, ok := ScanContent([]byte(raw)); ok {
			t.Errorf("ScanContent does not read Block.%s (%q)", typ.Field(i).Name, name)
		}
	}
	if _, ok := ScanContent([]byte(`[{"type":"text","unknown":null,"unknown":null}]`)); !ok {
		t.Errorf("ScanContent gives up on a repeated field Block does not have")
	}
}

// TestScanMessageDataFields: ScanMessageData reads every field of MessageData
// (a field added to it and not to the walk would be left out silently): each,
// given twice, makes it give up, where a field it does not know is skipped.
func TestScanMessageDataFields(t *testing.T) {
	typ := reflect.TypeFor[MessageData]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		raw := fmt.Sprintf(`{"role":"user",%q:null,%q:null}`, name, name)
		if _, ok := ScanMessageData([]byte(raw)); ok {
			t.Errorf("ScanMessageData does not read MessageData.%s (%q)", typ.Field(i).Name, name)
		}
	}
	if _, ok := ScanMessageData([]byte(`{"role":"user","unknown":null,"unknown":null}`)); !ok {
		t.Errorf("ScanMessageData gives up on a repeated field MessageData does not have")
	}
}

var scanMessageSeeds = []string{
	`{"role":"user","content":"hello","timestamp":1793610002000}`,
	`{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"}}],"api":"a","provider":"p","model":"m","usage":{"input":3,"output":363,"cacheRead":3000,"cacheWrite":0,"totalTokens":3366,"cost":{"input":0.000009,"total":0.1}},"stopReason":"toolUse","timestamp":1}`,
	`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"out"}],"isError":false,"details":{"x":[1,2]},"timestamp":1}`,
	`{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/x","excludeFromContext":true}`,
	`{"role":"custom","customType":"note","content":"x","display":true}`,
	`{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom","usage":null}`,
	`{"role":"user","timestamp":"not a number"}`, `{"role":"user","timestamp":1e999}`, `{"role":"user","isError":"yes"}`,
	`{"role":"user","role":"assistant"}`, `{"rol\u0065":"user"}`, `{"content":"no role"}`, `{"role":"user","exitCode":null}`,
	`{"role":"assistant","usage":{"input":"3"}}`, `{"role":"user","unknown":[1,{"a":2}],"Role":"x"}`,
}

// checkScanMessageData: what ScanMessageData reads, when it reads it, is what
// decoding the message into a MessageData gives.
func checkScanMessageData(t *testing.T, raw string) {
	if !json.Valid([]byte(raw)) {
		return
	}
	got, ok := ScanMessageData([]byte(raw))
	if !ok {
		return
	}
	var want MessageData
	if err := unmarshal([]byte(raw), &want); err != nil {
		t.Fatalf("ScanMessageData reads %s, which the decoder cannot: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanMessageData(%s) =\n%#v, want\n%#v", raw, got, want)
	}
}

func TestScanMessageData(t *testing.T) {
	read := 0
	for _, s := range scanMessageSeeds {
		checkScanMessageData(t, s)
		if _, ok := ScanMessageData([]byte(s)); ok {
			read++
		}
	}
	if read < 5 {
		t.Fatalf("ScanMessageData read %d of the seeds, want at least 5 (the plain ones)", read)
	}
}

// TestMessageScannerReuse: one scanner reading every seed message in turn,
// and every message of the repository's sessions, gives for each what a fresh
// ScanMessageData gives: nothing of the message before carries over.
func TestMessageScannerReuse(t *testing.T) {
	msgs := append([]string(nil), scanMessageSeeds...)
	msgs = append(msgs, pi16Messages(t)...)
	if len(msgs) < 100 {
		t.Fatalf("%d messages to read, want the repository's sessions", len(msgs))
	}
	var sc MessageScanner
	for _, m := range msgs {
		got, gotOK := sc.Scan([]byte(m))
		want, wantOK := ScanMessageData([]byte(m))
		if gotOK != wantOK || gotOK && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: reused scanner %v %+v, fresh %v %+v", m, gotOK, got, wantOK, want)
		}
	}
}

// pi16Messages is every message of the repository's pi 1.6.0 sessions.
func pi16Messages(t *testing.T) []string {
	t.Helper()
	var msgs []string
	files, _ := filepath.Glob("../testdata/pi16/*/*.jsonl")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range Load(b).Entries() {
			if raw := e.MessageRaw(); raw != nil {
				msgs = append(msgs, string(raw))
			}
		}
	}
	return msgs
}

func FuzzScanMessageData(f *testing.F) {
	for _, s := range scanMessageSeeds {
		f.Add(s)
	}
	f.Fuzz(checkScanMessageData)
}

var usageSeeds = []string{
	`{"role":"assistant","provider":"anthropic","model":"claude","usage":{"input":3,"output":363,"cacheRead":3000,"cacheWrite":0,"totalTokens":3366,"cost":{"input":0.000009,"output":0.005445,"cacheRead":0.0009,"cacheWrite":0,"total":0.006354}}}`,
	`{"role":"assistant","provider":"p","model":"m","responseModel":"r","usage":{"input":1}}`,
	`{"role":"assistant","provider":"p","model":"m","responseModel":null,"usage":{"totalTokens":5,"extra":[1]}}`,
	`{"role":"assistant","provider":7,"model":["a","b"],"usage":{"input":1}}`,
	`{"role":"assistant","usage":null}`, `{"role":"assistant","usage":{}}`, `{"role":"assistant"}`,
	`{"role":"assistant","usage":{"input":"3"}}`, `{"role":"assistant","usage":{"input":1,"input":2}}`,
	`{"role":"assistant","usage":{"cost":{"total":"x"}}}`, `{"role":"assistant","usage":{"input":1e999}}`,
	`{"role":"assistant","provider":"p\u0041","model":"m","usage":{"input":1}}`,
}

// checkUsageRecord: UsageRecord of an assistant message read in one walk,
// when it is, is what the decoder reads.
func checkUsageRecord(t *testing.T, msg string) {
	if !json.Valid([]byte(msg)) {
		return
	}
	e, ok := ParseLine([]byte(`{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":` + msg + `}`))
	if !ok || e.Role() != RoleAssistant {
		return
	}
	key, u, ok, done := scanUsageRecord(e.MessageRaw())
	if !done {
		return
	}
	wkey, wu, wok := e.decodeUsageRecord(e.MessageRaw())
	if key != wkey || u != wu || ok != wok {
		t.Fatalf("scanUsageRecord(%s) = %q %+v %v, want %q %+v %v", msg, key, u, ok, wkey, wu, wok)
	}
}

func TestScanUsageRecord(t *testing.T) {
	done := 0
	for _, s := range usageSeeds {
		checkUsageRecord(t, s)
		if _, _, _, d := scanUsageRecord([]byte(s)); d {
			done++
		}
	}
	if done < 6 {
		t.Fatalf("scanUsageRecord read %d of the seeds, want at least 6", done)
	}
}

func FuzzScanUsageRecord(f *testing.F) {
	for _, s := range usageSeeds {
		f.Add(s)
	}
	f.Fuzz(checkUsageRecord)
}

// checkMessage: MessageScanner.Message of valid JSON is ParseMessage and then
// Data: refused where ParseMessage refuses it, and the same fields and error
// otherwise.
func checkMessage(t *testing.T, sc *MessageScanner, msg string) {
	raw := []byte(msg)
	if !json.Valid(raw) {
		return
	}
	got, ok, gotErr := sc.Message(raw)
	m, err := ParseMessage(raw)
	if ok != (err == nil) {
		t.Fatalf("Message(%s) ok %v; ParseMessage: %v", msg, ok, err)
	}
	if !ok {
		return
	}
	want, wantErr := m.Data()
	if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("Message(%s) =\n%#v, %v; want\n%#v, %v", msg, got, gotErr, want, wantErr)
	}
}

// TestMessageScannerMessage: Message of the seed messages, of messages
// ParseMessage refuses, and of every message of the repository's pi 1.6.0
// sessions, with one scanner reused.
func TestMessageScannerMessage(t *testing.T) {
	msgs := append([]string{`{"content":"no role"}`, `{"role":"","content":"x"}`, `{"role":7}`, `{"role":null}`,
		`{"role":"user","role":"assistant"}`, `{"role":"u\u0073er","content":"escaped role"}`, `[1]`, `"text"`}, scanMessageSeeds...)
	msgs = append(msgs, pi16Messages(t)...)
	var sc MessageScanner
	refused := 0
	for _, m := range msgs {
		checkMessage(t, &sc, m)
		if _, ok, _ := sc.Message([]byte(m)); !ok {
			refused++
		}
	}
	if refused < 6 {
		t.Fatalf("Message refused %d messages, want the 6 ParseMessage refuses", refused)
	}
}

func FuzzMessageScannerMessage(f *testing.F) {
	for _, s := range scanMessageSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		var sc MessageScanner
		checkMessage(t, &sc, msg)
	})
}
