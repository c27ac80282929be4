package session_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/pitest"
	"github.com/arborlog/arbor/session"
)

// appendAllTyped writes, through the typed appends, the session that
// testdata/pishapes.mjs writes through pi's own code.
func appendAllTyped(t *testing.T, l *session.Log) {
	t.Helper()
	png := session.Image{Data: "iVBORw0KGgo=", MimeType: "image/png"}
	zero := 0
	steps := []func() (*session.Entry, error){
		func() (*session.Entry, error) { return l.AppendModelChange("faux", "faux-1") },
		func() (*session.Entry, error) { return l.AppendThinkingLevelChange("high") },
		func() (*session.Entry, error) { return l.AppendUser("look at a.png", png) },
		func() (*session.Entry, error) {
			return l.AppendAssistant(session.Assistant{
				Content: []session.Block{session.ThinkingBlock("look first", "sig"), session.TextBlock("Reading it."),
					session.ToolCallBlock("call_1", "read", map[string]string{"path": "a.png"}),
					session.ToolCallBlock("call_2", "fail", nil)},
				API: "faux", Provider: "faux", Model: "faux-1", Usage: session.Usage{Input: 67, Output: 13, TotalTokens: 80},
				StopReason: session.StopToolUse, ThinkingLevel: "high", DurationMs: 5})
		},
		func() (*session.Entry, error) {
			return l.AppendToolResult(session.ToolResult{ToolCallID: "call_1", ToolName: "read",
				Content: []session.Block{session.TextBlock("an image"), session.ImageBlock(png)}, Details: json.RawMessage(`{"lines":1}`), DurationMs: 1})
		},
		func() (*session.Entry, error) {
			return l.AppendToolResult(session.ToolResult{ToolCallID: "call_2", ToolName: "fail",
				Content: []session.Block{session.TextBlock("no such thing")}, Details: json.RawMessage(`{}`), IsError: true, DurationMs: 1})
		},
		func() (*session.Entry, error) {
			return l.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("Done.")},
				API: "faux", Provider: "faux", Model: "faux-1", StopReason: session.StopEnd, ThinkingLevel: "high"})
		},
		func() (*session.Entry, error) {
			return l.AppendBashExecution(session.BashExecution{Command: "ls", Output: "a.png\n", ExitCode: &zero})
		},
		func() (*session.Entry, error) {
			return l.AppendBashExecution(session.BashExecution{Command: "yes", Output: "y\ny\n", Cancelled: true, Truncated: true,
				FullOutputPath: "/tmp/out.txt", ExcludeFromContext: true})
		},
		func() (*session.Entry, error) { return l.AppendCustom("todo", map[string]any{"items": []string{"a"}}) },
		func() (*session.Entry, error) {
			return l.AppendCustomMessage("note", session.TextContent("remember a.png"), true, map[string]string{"source": "test"})
		},
		func() (*session.Entry, error) {
			return l.AppendCustomMessage("note", session.Content{Blocks: []session.Block{session.TextBlock("and b")}}, false, nil)
		},
	}
	for i, step := range steps {
		if _, err := step(); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
}

// TestTypedAppendsMatchPi writes every typed append and has pi 1.6.0 write
// the same messages with its own code (its agent loop against a scripted
// model, its bash recorder, its SessionManager), then compares the two files
// line by line, field by field: the same members, of the same JSON kinds, the
// same strings and booleans; ids, times, the API name and token counts aside.
func TestTypedAppendsMatchPi(t *testing.T) {
	script, err := filepath.Abs("testdata/pishapes.mjs")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := strings.TrimSpace(string(pitest.Run(t, script, pitest.Dir(t, pitest.V16), dir)))
	piFile, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	l := session.New("/tmp/project")
	appendAllTyped(t, l)
	ours := serialize(l)

	piLines, ourLines := lines(piFile), lines(ours)
	if len(piLines) != len(ourLines) {
		t.Fatalf("pi wrote %d lines, arbor %d\npi:\n%s\narbor:\n%s", len(piLines), len(ourLines), piFile, ours)
	}
	for i := range piLines {
		want, got := shape(t, piLines[i]), shape(t, ourLines[i])
		if diff := diffShapes(want, got); diff != "" {
			t.Errorf("line %d differs from pi's:\n%s\npi:    %s\narbor: %s", i+1, diff, piLines[i], ourLines[i])
		}
	}
}

func lines(b []byte) [][]byte { return bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) }

// volatile members: their values differ from run to run, only their kind is
// compared. durationMs is left out: pi records it when its clock saw time pass.
var volatile = map[string]bool{"id": true, "parentId": true, "timestamp": true, "api": true}

// shape flattens a JSON line into path → value, where a value is its JSON
// kind for numbers and volatile members, and the value itself otherwise.
func shape(t *testing.T, line []byte) map[string]string {
	t.Helper()
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	out := map[string]string{}
	var walk func(path, key string, v any)
	walk = func(path, key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			out[path] = "object"
			for k, x := range v {
				if k == "durationMs" {
					continue
				}
				walk(path+"."+k, k, x)
			}
		case []any:
			out[path] = fmt.Sprintf("array[%d]", len(v))
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), key, x)
			}
		case string:
			out[path] = "string"
			if !volatile[key] {
				out[path] = fmt.Sprintf("%q", v)
			}
		case float64:
			out[path] = "number"
		case nil:
			out[path] = "null"
			if volatile[key] {
				out[path] = "string" // a root's parentId
			}
		default:
			out[path] = fmt.Sprint(v)
		}
	}
	walk("", "", v)
	return out
}

func diffShapes(want, got map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("  missing %s (pi: %s)", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("  %s: pi %s, arbor %s", k, w, g))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("  extra %s (arbor: %s)", k, g))
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}

// TestTypedAppendsRequiredMembers checks the members pi's readers count on
// when the caller leaves everything optional out.
func TestTypedAppendsRequiredMembers(t *testing.T) {
	l := session.New("/p")
	for _, tc := range []struct {
		append func() (*session.Entry, error)
		want   []string
	}{
		{func() (*session.Entry, error) { return l.AppendUser("") }, []string{`"content":[{"type":"text","text":""}]`, `"timestamp":`}},
		{func() (*session.Entry, error) { return l.AppendAssistant(session.Assistant{}) },
			[]string{`"content":[]`, `"usage":{"input":0,`, `"stopReason":""`}},
		{func() (*session.Entry, error) {
			return l.AppendAssistant(session.Assistant{Content: []session.Block{session.ToolCallBlock("c", "ls", nil)}})
		}, []string{`{"type":"toolCall","id":"c","name":"ls","arguments":{}}`}},
		{func() (*session.Entry, error) { return l.AppendToolResult(session.ToolResult{ToolCallID: "c"}) },
			[]string{`"content":[]`, `"isError":false`}},
		{func() (*session.Entry, error) { return l.AppendBashExecution(session.BashExecution{Command: "x"}) },
			[]string{`"output":""`, `"cancelled":false`, `"truncated":false`}},
	} {
		e, err := tc.append()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !bytes.Contains(e.MessageRaw(), []byte(w)) {
				t.Errorf("%s lacks %s", e.MessageRaw(), w)
			}
		}
		if _, err := e.Message(); err != nil {
			t.Errorf("%s: %v", e.Raw(), err)
		}
	}
	// A bash execution that did not finish has no exit code, as pi writes it.
	e, _ := l.AppendBashExecution(session.BashExecution{Command: "x", Cancelled: true})
	if bytes.Contains(e.MessageRaw(), []byte("exitCode")) {
		t.Errorf("cancelled bash with an exit code: %s", e.MessageRaw())
	}
}

// TestTypedAppendsReadBack reads what the typed appends wrote through the
// context and the message decoder.
func TestTypedAppendsReadBack(t *testing.T) {
	l := session.New("/p")
	appendAllTyped(t, l)
	l = reopen(l)
	ctx := l.Context()
	var roles []string
	for _, m := range ctx.Messages {
		roles = append(roles, m.Role)
	}
	want := "user assistant toolResult toolResult assistant bashExecution bashExecution custom custom"
	if got := strings.Join(roles, " "); got != want {
		t.Fatalf("context roles = %s, want %s", got, want)
	}
	d, err := ctx.Messages[1].Data()
	if err != nil {
		t.Fatal(err)
	}
	if d.Content.Blocks[0].ThinkingSignature != "sig" || d.Content.Blocks[2].Name != "read" || string(d.Content.Blocks[2].Arguments) != `{"path":"a.png"}` {
		t.Errorf("assistant read back as %+v", d.Content.Blocks)
	}
	if d.Timestamp == 0 {
		t.Error("an assistant message without a timestamp")
	}
	d, _ = ctx.Messages[3].Data()
	if !d.IsError || d.ToolCallID != "call_2" {
		t.Errorf("tool result read back as %+v", d)
	}
}

func TestCustomStateAndMessages(t *testing.T) {
	l := session.New("/p")
	if _, ok := l.CustomState("todo"); ok {
		t.Fatal("custom state in an empty log")
	}
	mustAppend := func(_ *session.Entry, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(l.AppendCustom("todo", []string{"a"}))
	mustAppend(l.AppendCustom("other", 1))
	mustAppend(l.AppendCustomMessage("note", session.TextContent("one"), true, nil))
	side, err := l.NewCursor("side")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(l.AppendCustom("todo", []string{"a", "b"}))
	mustAppend(l.AppendCustomMessage("note", session.TextContent("two"), false, map[string]int{"n": 2}))
	mustAppend(l.AppendCustom("flag", nil))

	if data, ok := l.CustomState("todo"); !ok || string(data) != `["a","b"]` {
		t.Errorf("CustomState(todo) = %s, %v; want the latest", data, ok)
	}
	if data, ok := l.CustomState("flag"); !ok || data != nil {
		t.Errorf("CustomState(flag) = %s, %v; want no data, found", data, ok)
	}
	msgs := l.CustomMessages("note")
	if len(msgs) != 2 || msgs[0].Content.Text("") != "one" || msgs[1].Content.Text("") != "two" || string(msgs[1].Details) != `{"n":2}` || msgs[1].Display {
		t.Errorf("CustomMessages(note) = %+v", msgs)
	}
	// The cursor forked before the second state sees only the first.
	if data, _ := side.CustomState("todo"); string(data) != `["a"]` {
		t.Errorf("side cursor's todo = %s, want [\"a\"]", data)
	}
	if n := len(side.CustomMessages("note")); n != 1 {
		t.Errorf("side cursor sees %d notes, want 1", n)
	}
	// State survives a reopen.
	if data, _ := reopen(l).CustomState("todo"); string(data) != `["a","b"]` {
		t.Errorf("after reopen todo = %s", data)
	}
}

// FuzzContentRoundTrip: content read from any JSON writes back to content that
// reads the same (pi's members for each block type, nothing lost on the way).
func FuzzContentRoundTrip(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":""}]`,
		`[{"type":"thinking","thinking":"x","thinkingSignature":"s","redacted":true},{"type":"toolCall","id":"c","name":"n","arguments":{"a":1},"argumentsError":"bad"}]`,
		`[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"other","text":"t","id":"i"}]`,
		`"plain"`, `[{"type":"toolCall","id":"c","name":"n"}]`, `[1,{"type":5}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var c session.Content
		if json.Unmarshal([]byte(s), &c) != nil {
			return
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var back session.Content
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s wrote %s, which does not read: %v", s, out, err)
		}
		again, _ := json.Marshal(back)
		if !bytes.Equal(out, again) {
			t.Fatalf("%s wrote %s, then %s", s, out, again)
		}
	})
}
