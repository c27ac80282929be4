package session

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestQuoted: the fast path writes what the general encoder writes.
func TestQuoted(t *testing.T) {
	cases := []string{"", "message", "2026-11-29T19:00:00.000Z", "a<b>&c", "tab\there", `q"uote`, `back\slash`, "del\x7f", "é", "\u2028", "\xff"}
	for c := range 128 {
		cases = append(cases, "x"+string(rune(c))+"y")
	}
	for _, s := range cases {
		want, err := marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := quoted(s); string(got) != string(want) {
			t.Errorf("quoted(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestAppendedRole: an appended message's role is what JSON.parse reads, the
// last "role" when a message has two.
func TestAppendedRole(t *testing.T) {
	for raw, want := range map[string]string{
		`{"role":"user","content":"x"}`:                    "user",
		`{"content":"x","role":"assistant"}`:               "assistant",
		`{"role":"user","content":"x","role":"assistant"}`: "assistant",
		`{"role":"us\u0065r","content":"x"}`:               "user",
		`{"role":"user","r\u006fle":"toolResult","c":"x"}`: "toolResult",
		`{ "role" : "assistant", "content": [] }`:          "assistant",
	} {
		m, err := ParseMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		e, err := New("/p").AppendMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if e.Role() != want {
			t.Errorf("%s: role %q, want %q", raw, e.Role(), want)
		}
	}
}

// TestParseMessageFastPath: the one-pass role read agrees with the full decode,
// and bad messages are still refused.
func TestParseMessageFastPath(t *testing.T) {
	for _, raw := range []string{
		`{"role":"user"}`, `{"role":"user","role":"bash"}`, `{"role":"u\"x"}`, `{"role":""}`, `{"role":1}`,
		`{"role":"user",}`, `{"role":"user"} x`, `{"role":"user","content":"\x"}`, `{"role":"user","content":"a` + "\x01" + `"}`,
		`[{"role":"user"}]`, `{"content":{"role":"inner"}}`,
		`{"role":"user","timestamp":1}`, `{"role":"user","content":{"timestamp":1}}`, `{"role":"user","content":"\"timestamp\":1"}`,
	} {
		fast, stamped, fastOK := plainRole([]byte(raw))
		var v struct {
			Role      *string        `json:"role"`
			Timestamp jsontext.Value `json:"timestamp"`
		}
		slowOK := validJSON([]byte(raw)) && unmarshal([]byte(raw), &v) == nil && v.Role != nil && *v.Role != ""
		if fastOK && (!slowOK || fast != *v.Role || stamped != (len(v.Timestamp) > 0)) {
			t.Errorf("%s: fast path read %q (timestamp %v), full decode %v (%s)", raw, fast, stamped, v.Role, v.Timestamp)
		}
		m, err := ParseMessage([]byte(raw))
		if (err == nil) != slowOK || (err == nil && m.Role != *v.Role) {
			t.Errorf("%s: ParseMessage = %q, %v; full decode ok=%v", raw, m.Role, err, slowOK)
		}
	}
}

// FuzzParseMessage: ParseMessage (one-pass role read, else full decode) accepts
// exactly the objects with a non-empty string role, and reads the role JSON.parse reads.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{`{"role":"user","content":"hi"}`, `{"role":"user","role":"x"}`, `{"content":[],"role":"assistant"}`, `{"r\u006fle":"x"}`, ` {"role":"a"} `, `{"role":"a"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v struct {
			Role *string `json:"role"`
		}
		ok := validJSON(raw) && unmarshal(raw, &v) == nil && v.Role != nil && *v.Role != ""
		m, err := ParseMessage(raw)
		if (err == nil) != ok {
			t.Fatalf("%q: ParseMessage err = %v, full decode ok = %v", raw, err, ok)
		}
		if ok && m.Role != *v.Role {
			t.Fatalf("%q: role %q, full decode %q", raw, m.Role, *v.Role)
		}
	})
}
