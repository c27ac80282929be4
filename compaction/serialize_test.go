package compaction

import (
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/google/go-cmp/cmp"
)

// pi's compaction-serialization.test.ts.
func TestSerializeTruncatesToolResults(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{"long result is cut at 2000", strings.Repeat("x", 5000), "[Tool result]: " + strings.Repeat("x", 2000) + "\n\n[... 3000 more characters truncated]"},
		{"1500 characters pass", strings.Repeat("y", 1500), "[Tool result]: " + strings.Repeat("y", 1500)},
		{"exactly 2000 pass", strings.Repeat("z", 2000), "[Tool result]: " + strings.Repeat("z", 2000)},
		{"counted in UTF-16 units", strings.Repeat("🚀", 1001), "[Tool result]: " + strings.Repeat("🚀", 1000) + "\n\n[... 2 more characters truncated]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := cm(t, map[string]any{"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": []any{map[string]any{"type": "text", "text": tt.text}}})
			if got := Serialize([]session.ContextMessage{msg}); got != tt.want {
				t.Errorf("got %d chars %q…, want %d chars", len(got), got[:min(60, len(got))], len(tt.want))
			}
		})
	}
}

func TestSerializeConversation(t *testing.T) {
	long := strings.Repeat("u", 2500)
	msgs := []session.ContextMessage{
		cm(t, map[string]any{"role": "user", "content": long}),
		cm(t, map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": "hmm"},
			map[string]any{"type": "text", "text": "one"},
			map[string]any{"type": "text", "text": "two"},
			map[string]any{"type": "toolCall", "id": "c1", "name": "edit", "arguments": map[string]any{"path": "a.go", "n": 1.5, "q": "say \"hi\""}},
			map[string]any{"type": "toolCall", "id": "c2", "name": "ls", "arguments": map[string]any{}},
		}}),
		cm(t, map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": "edit", "content": []any{}}),
		cm(t, map[string]any{"role": "bashExecution", "command": "go test", "output": "ok", "exitCode": 1}),
		cm(t, map[string]any{"role": "compactionSummary", "summary": "S", "tokensBefore": 1}),
	}
	want := "[User]: " + long + // user text is never cut; thinking is left out (pi 1.6.0)
		"\n\n[Assistant]: one\ntwo\n\n[Assistant tool calls]: edit(n=1.5, path=\"a.go\", q=\"say \\\"hi\\\"\"); ls()" +
		"\n\n[User]: Ran `go test`\n```\nok\n```\n\nCommand exited with code 1" +
		"\n\n[User]: " + session.CompactionSummaryPrefix + "S" + session.CompactionSummarySuffix
	if got := Serialize(msgs); got != want {
		t.Error(cmp.Diff(want, got))
	}
}

func TestJSStringify(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"path": "a.go", "n": 1}`, `{"path":"a.go","n":1}`},
		{`{"b":1,"2":"x","1":"y","a":2}`, `{"1":"y","2":"x","b":1,"a":2}`}, // array indexes first
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`[1.0, 1e21, 1e-7, 0.000001, -0, 123456789012345678901]`, `[1,1e+21,1e-7,0.000001,0,123456789012345680000]`},
		{`"tab\t nl\n u2028\u2028 ctl\u0001 <>&"`, "\"tab\\t nl\\n u2028\u2028 ctl\\u0001 <>&\""},
		{`{"nested":{"x":[true,false,null]}}`, `{"nested":{"x":[true,false,null]}}`},
		// Only canonical integers below 2³²−1 are array indexes, as in JavaScript.
		{`{"x":1,"4294967295":2,"4294967294":3,"01":4,"-1":5,"+1":6,"1e3":7,"0":8,"99999999999":9}`,
			`{"0":8,"4294967294":3,"x":1,"4294967295":2,"01":4,"-1":5,"+1":6,"1e3":7,"99999999999":9}`},
	}
	for _, tt := range tests {
		got, ok := jsStringify([]byte(tt.in))
		if !ok || got != tt.want {
			t.Errorf("jsStringify(%s) = %s, %v; want %s", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := jsStringify([]byte(`{"a":`)); ok {
		t.Error("accepted broken JSON")
	}
}

// FuzzJSStringify: whatever parses, the output parses too and is a fixed point.
func FuzzJSStringify(f *testing.F) {
	for _, s := range []string{`{"path":"a.go"}`, `[1,2.5,-3e-9]`, `{"1":1,"0":0,"x":"\u00e9\ud83d\ude80"}`, `"\u0000"`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := jsStringify([]byte(in))
		if !ok {
			return
		}
		again, ok := jsStringify([]byte(out))
		if !ok {
			t.Fatalf("output %q of %q does not parse", out, in)
		}
		if again != out {
			t.Fatalf("not a fixed point: %q -> %q", out, again)
		}
	})
}

// FuzzJSStringifiedLen: where jsStringifiedLen measures, it measures what
// jsStringify makes.
func FuzzJSStringifiedLen(f *testing.F) {
	for _, s := range []string{`{"path":"a.go","command":"ls -la"}`, ` [1, -2, 0, true, false, null, {"a":[]}, {}] `, `{"1":1}`, `{"a":1,"a":2}`,
		`-0`, `01`, `1.5`, `123456789012345`, `1234567890123456`, `"é🚀"`, `"a\nb"`, `{"a":1,}`, `[1,]`, `{"a" : "b" }`, "\"\xff\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, ok := jsStringifiedLen([]byte(in))
		if !ok {
			return
		}
		s, sok := jsStringify([]byte(in))
		if !sok || jsLen(s) != n {
			t.Fatalf("jsStringifiedLen(%q) = %d; jsStringify %q (%v), length %d", in, n, s, sok, jsLen(s))
		}
	})
}

// Tool arguments as models write them are measured without jsStringify; what
// JavaScript would write otherwise is left to it.
func TestJSStringifiedLenTakesPlainArguments(t *testing.T) {
	for _, in := range []string{`{"path":"a.go","command":"ls -la"}`, `{ "a" : [1, -2, 0, true, false, null, {"b":{}}, []], "é🚀":"x" }`, `"plain"`, `123456789012345`} {
		n, ok := jsStringifiedLen([]byte(in))
		s, _ := jsStringify([]byte(in))
		if !ok || n != jsLen(s) {
			t.Errorf("jsStringifiedLen(%s) = %d, %v; want %d", in, n, ok, jsLen(s))
		}
	}
	for _, in := range []string{`{"1":1}`, `{"a":1,"a":2}`, `-0`, `1.5`, `1e3`, `1234567890123456`, `"a\nb"`, `{"a":1,}`, `[1,]`, `{"a":1} x`, ``} {
		if n, ok := jsStringifiedLen([]byte(in)); ok {
			t.Errorf("jsStringifiedLen(%s) = %d, measured: jsStringify's to measure", in, n)
		}
	}
}
