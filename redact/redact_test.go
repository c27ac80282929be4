package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 end", "key [REDACTED] end"},
		{"OPENAI_API_KEY=sk-proj-ABCDEFGHIJKLMNOPQRSTUV12", "OPENAI_API_KEY=[REDACTED]"},
		{"token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "token [REDACTED]"},
		{"aws AKIAIOSFODNN7EXAMPLE ok", "aws [REDACTED] ok"},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz.123", "Authorization: Bearer [REDACTED]"},
		{"password=hunter2hunter2", "password=[REDACTED]"},
		{"db_password: 'correct-horse-battery'", "db_password: '[REDACTED]'"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "[REDACTED]"},
		{"slack xoxb-1234567890-abcdefghij", "slack [REDACTED]"},
		{"nothing secret here: the token count is 42", "nothing secret here: the token count is 42"},
		{"password=short", "password=short"},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Redacting a JSON document's bytes keeps it valid JSON and masks the secret
// inside the string that held it.
func TestBytesKeepsJSONValid(t *testing.T) {
	doc := map[string]any{
		"text":  "run: export GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB && curl -H \"Authorization: Bearer abcdefghijklmnopqrstuvwx\"",
		"key":   "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n\"quoted\"\n-----END OPENSSH PRIVATE KEY-----",
		"other": `password="quoted-value-here" api_key:abc\def12345678`,
	}
	raw, _ := json.Marshal(doc)
	out := Bytes(raw)
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("redacted JSON does not parse: %v\n%s", err, out)
	}
	if strings.Contains(back["text"], "ghp_") || strings.Contains(back["text"], "abcdefghijklmnopqrstuvwx") {
		t.Errorf("secret left in %q", back["text"])
	}
}

func FuzzBytesKeepsJSONValid(f *testing.F) {
	for _, s := range []string{"sk-ant-0123456789abcdefghijklmn", "password=\"abcdefghij\"", "Bearer \\abcdefghijklmnopqrstu", "-----BEGIN PRIVATE KEY-----\\\"-----END PRIVATE KEY-----"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := json.Marshal(map[string]string{"s": s, "t": "x" + s})
		if err != nil {
			return
		}
		out := Bytes(raw)
		if !json.Valid(out) {
			t.Fatalf("redacting %s gave invalid JSON %s", raw, out)
		}
	})
}
