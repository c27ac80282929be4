package session

import "testing"

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
