package window

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// FuzzRender feeds tool output of any shape to the outliner: the result keeps
// its role and pairing, is valid UTF-8 JSON, and is never longer than an
// outline may be.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"--- FAIL: TestX (0.00s)\nFAIL\n\nCommand exited with code 1",
		"test result: FAILED. 2 passed; 1 failed; 0 ignored",
		"Tests:       2 failed, 38 passed, 40 total",
		"== 1 failed, 4 passed in 0.12s ==",
		"\xff\xfe broken utf8 \xc3",
		strings.Repeat("é", 300),
		"",
	} {
		f.Add("bash", seed, true)
		f.Add("read", seed, false)
	}
	f.Fuzz(func(t *testing.T, tool, text string, isError bool) {
		raw := marshal(map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": tool, "content": []textBlock{{"text", text}}, "isError": isError})
		m := session.ContextMessage{Role: session.RoleToolResult, Raw: raw}
		cs := callIndex{"c1": {name: tool, arguments: marshal(args("command", text, "path", text))}}
		for _, lv := range []session.Level{session.Outlined, session.Summarized} {
			r := renderLevel(m, lv, "", cs)
			d, ok := data(r.Raw)
			if !ok || d.Role != session.RoleToolResult || d.ToolCallID != "c1" || d.IsError != isError {
				t.Fatalf("%s: rendered %s", lv, r.Raw)
			}
			out := d.Content.Text("")
			limit := summaryText
			if lv == session.Outlined {
				limit = 200 + outlineLines*(outlineLine+1)
			}
			if len(out) > limit+len(tool)+200 {
				t.Fatalf("%s is %d bytes", lv, len(out))
			}
			if utf8.ValidString(text) && utf8.ValidString(tool) && !utf8.ValidString(out) {
				t.Fatalf("%s cut a character: %q", lv, out)
			}
		}
	})
}

// FuzzCutLines checks that a cut keeps whole lines or, failing that, whole characters.
func FuzzCutLines(f *testing.F) {
	f.Add("one\ntwo\nthree\n", 9)
	f.Add("ééééé", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || !utf8.ValidString(s) {
			return
		}
		got := cutLines(s, n)
		if !strings.HasPrefix(s, got) || len(got) > max(n, 0) && len(s) > n {
			t.Fatalf("cutLines(%q, %d) = %q", s, n, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("cut inside a character: %q", got)
		}
	})
}

// FuzzClassifier reads any phases file and classifies any command with it.
func FuzzClassifier(f *testing.F) {
	f.Add([]byte(`{"tools":{"my_tool":"execution"},"commands":{"bazel test":"verification"}}`), "cd x && bazel test //... | tee log")
	f.Add([]byte(`{}`), "FOO=1 timeout 5 go test ./...")
	f.Add([]byte(`{"commands":{"":"exploration"}}`), "")
	f.Fuzz(func(t *testing.T, file []byte, cmd string) {
		c, err := ParseClassifier(file)
		if err != nil {
			return
		}
		for _, edited := range []bool{false, true} {
			if ph := c.Tool("bash", cmd, edited); !ph.valid() {
				t.Fatalf("Tool(bash, %q) = %q", cmd, ph)
			}
		}
	})
}

// FuzzCallStr checks that reading a call's argument where it lies gives what
// decoding the arguments gives, for any arguments a line may hold.
func FuzzCallStr(f *testing.F) {
	for _, seed := range []string{
		`{"command":"go test ./..."}`, `{"cmd":"ls","command":"pwd"}`, `{"command":1,"cmd":"x"}`,
		`{"command":"a\nb"}`, `{"command":"a","command":"b"}`, `{"cmd":"é"}`, `{}`, `null`, `"command"`,
		`{"a":{"command":"inner"},"cmd":"outer"}`, `{"command":"\u00e9"}`, ` { "cmd" : "spaced" } `,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !jsontext.Value(args).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
			return // a loaded line's arguments are valid JSON
		}
		c := call{arguments: jsontext.Value(args)}
		if got, want := c.str("command", "cmd"), str(c.args(), "command", "cmd"); got != want {
			t.Fatalf("%q: read %q, decoded %q", args, got, want)
		}
	})
}

// FuzzTimestampOf checks that reading a message's timestamp where it lies
// gives what the decoder gives, for any object a line may hold.
func FuzzTimestampOf(f *testing.F) {
	for _, seed := range []string{
		`{"role":"assistant","timestamp":1700000000000}`, `{"timestamp":"2025-01-01T00:00:00Z","x":1}`, `{"role":"user"}`,
		`{"timestamp":1,"timestamp":2}`, `{"time\u0073tamp":3}`, `{"Timestamp":4}`, `{"a":{"timestamp":5}}`, ` { "timestamp" : [1, 2] } `,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !jsontext.Value(raw).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
			return // a loaded line's message is valid JSON
		}
		var v struct {
			Timestamp jsontext.Value `json:"timestamp"`
		}
		_ = unmarshal([]byte(raw), &v)
		if got := timestampOf([]byte(raw)); !bytes.Equal(got, v.Timestamp) {
			t.Fatalf("%s: read %s, decoded %s", raw, got, v.Timestamp)
		}
	})
}
