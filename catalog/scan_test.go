package catalog

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func FuzzScanLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"session","version":3,"id":"x","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T12:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"hi \"there\"\n"}],"timestamp":1}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{"command":"ls","n":[1,2.5e3,true,null]}}]}}`,
		`{"type":"session_info","name":"  x  "}`, `{"a":1,"a":2}`, `{"k\u0065y":"\ud83d\ude00"}`, `null`, `[1,2]`, `"str"`, `{`, `{"a":}`,
		"{\"a\":\"\x01\"}", `{"type":"message","message":null}`, " \t{}\r", "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l line
		ok := l.scan(b)
		if want := json.Valid(b); ok != want {
			t.Fatalf("scan says %v, encoding/json says %v for %q", ok, want, b)
		}
		if !ok {
			return
		}
		var top map[string]json.RawMessage
		if l.object != (json.Unmarshal(b, &top) == nil && top != nil) {
			t.Fatalf("object %v for %q", l.object, b)
		}
		if l.object {
			var keys []string
			for _, m := range l.members {
				if m.parent == -1 {
					k, _ := unquote(l.b[m.key.start-1 : m.key.end+1])
					if !slices.Contains(keys, k) {
						keys = append(keys, k)
					}
				}
			}
			if len(keys) != len(top) {
				t.Fatalf("%d top-level keys found, encoding/json finds %d in %q", len(keys), len(top), b)
			}
		}
		var s summary
		s.add(&l, []byte(`{"type":"session","id":"x","timestamp":"2026-01-01T00:00:00.000Z"}`))
		s.add(&l, b)
		_ = s.info("p", int64(len(b)), time.Unix(0, 0))
		_ = entryText(&l)
	})
}

// TestSummaryEdgeCases pins the parts of pi's buildSessionInfo that surprise:
// which inputs make it drop a file, and how it picks each field.
func TestSummaryEdgeCases(t *testing.T) {
	const h = `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}`
	user := func(content string) string {
		return `{"type":"message","id":"u","parentId":null,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"user","content":` + content + `,"timestamp":1772366401000}}`
	}
	tests := []struct {
		name   string
		lines  []string
		listed bool
		first  string
		msgs   int
		named  string
		mod    string
	}{
		{"header only", []string{h}, true, "(no messages)", 0, "", "2026-03-01T12:00:00.000Z"},
		{"garbage before the header", []string{"not json", h, user(`"hi"`)}, true, "hi", 1, "", "2026-03-01T12:00:01.000Z"},
		{"entry before the header", []string{user(`"hi"`), h}, false, "", 0, "", ""},
		{"text blocks joined", []string{h, user(`[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]`)}, true, "a b", 1, "", "2026-03-01T12:00:01.000Z"},
		{"empty text skipped", []string{h, user(`""`), user(`"second"`)}, true, "second", 2, "", "2026-03-01T12:00:01.000Z"},
		{"null content drops", []string{h, user(`null`)}, false, "", 0, "", ""},
		{"null block drops", []string{h, user(`[null]`)}, false, "", 0, "", ""},
		{"null entry drops", []string{h, "null"}, false, "", 0, "", ""},
		{"message without message drops", []string{h, `{"type":"message","id":"m"}`}, false, "", 0, "", ""},
		{"numeric name drops", []string{h, `{"type":"session_info","name":5}`}, false, "", 0, "", ""},
		{"latest name wins, trimmed", []string{h, `{"type":"session_info","name":" a "}`, `{"type":"session_info","name":"  b\u00a0"}`}, true, "(no messages)", 0, "b", ""},
		{"empty name clears", []string{h, `{"type":"session_info","name":"a"}`, `{"type":"session_info","name":"  "}`}, true, "(no messages)", 0, "", ""},
		{"tool results count but do not date", []string{h, `{"type":"message","timestamp":"2027-01-01T00:00:00.000Z","message":{"role":"toolResult","content":[],"timestamp":1893456000000}}`}, true, "(no messages)", 1, "", "2026-03-01T12:00:00.000Z"},
		{"entry time when the message has none", []string{h, `{"type":"message","timestamp":"2026-05-01T00:00:00.000Z","message":{"role":"assistant","content":[]}}`}, true, "(no messages)", 1, "", "2026-05-01T00:00:00.000Z"},
		{"bom and blank lines", []string{"\ufeff", "", h}, true, "(no messages)", 0, "", "2026-03-01T12:00:00.000Z"},
	}
	for _, tt := range tests {
		var s summary
		var l line
		for _, ln := range tt.lines {
			s.add(&l, []byte(ln))
		}
		in := s.info("p", 0, time.Unix(0, 0))
		if s.isSession() != tt.listed {
			t.Errorf("%s: listed %v, want %v", tt.name, s.isSession(), tt.listed)
			continue
		}
		if !tt.listed {
			continue
		}
		if in.FirstMessage != tt.first || in.MessageCount != tt.msgs || in.Name != tt.named {
			t.Errorf("%s: first %q, %d messages, name %q; want %q, %d, %q", tt.name, in.FirstMessage, in.MessageCount, in.Name, tt.first, tt.msgs, tt.named)
		}
		if tt.mod != "" && in.Modified.String() != tt.mod {
			t.Errorf("%s: modified %s, want %s", tt.name, in.Modified, tt.mod)
		}
	}
}
