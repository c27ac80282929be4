package redact

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/arborlog/arbor/internal/golden"
	"github.com/arborlog/arbor/redact/redacttest"
)

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got))
}

func TestRedactGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, n := r.Redact(string(in))
	golden(t, "secrets.redacted", out)
	if n != 11 {
		t.Errorf("counted %d secrets, want 11", n)
	}
	for _, secret := range []string{"b3BlbnNzaC1rZXkt", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "ghp_abc", "glpat-", "eyJhbGci", "dXNlcjpw", "sk-proj", "xoxb-", "AIzaSy", "hunter2"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q survived redaction", secret)
		}
	}
	again, n2 := r.Redact(out)
	if again != out || n2 != 0 {
		t.Errorf("redacting twice changed the text or counted %d more", n2)
	}
}

func TestRedactEnvFile(t *testing.T) {
	r, _ := New(nil)
	in := "# settings\nPORT=8080\nDB_URL='postgres://u:p@h/db'\nexport NAME=\"demo app\"\n\nSECRET_KEY=abc # note\n"
	out, n := r.RedactFile("/p/.env.local", in)
	golden(t, "env.redacted", out)
	if n != 4 {
		t.Errorf("counted %d, want 4", n)
	}
	if same, _ := r.RedactFile("/p/settings.txt", "PORT=8080\n"); same != "PORT=8080\n" {
		t.Errorf("a plain file lost a value: %q", same)
	}
}

func TestRedactCustomPatterns(t *testing.T) {
	r, err := New([]string{`ACME-[0-9]{6}`})
	if err != nil {
		t.Fatal(err)
	}
	out, n := r.Redact("ticket ACME-123456 done")
	if out != "ticket [REDACTED:custom-1] done" || n != 1 {
		t.Errorf("%q %d", out, n)
	}
	if _, err := New([]string{"("}); err == nil || !strings.Contains(err.Error(), `pattern 1 "("`) {
		t.Errorf("a bad pattern: %v", err)
	}
}

// FuzzRedact: whatever the text, a change is counted and redacting the
// result again changes nothing. The corpus seeds it.
func FuzzRedact(f *testing.F) {
	f.Add("Authorization: Bearer abc\nKEY=1")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nabc")
	cases, err := redacttest.Positives()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Text)
	}
	lines, err := redacttest.Negatives()
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range lines {
		f.Add(l)
	}
	r, _ := New(nil)
	f.Fuzz(func(t *testing.T, s string) {
		out, n := r.Redact(s)
		if n == 0 && out != s {
			t.Fatalf("changed text without counting: %q -> %q", s, out)
		}
		if again, m := r.Redact(out); m != 0 || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

// TestJSON: secrets in a session line's string values are redacted, the
// line stays valid JSON with its members in order, names are left alone, and
// a line without a hint is returned untouched.
func TestJSON(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"type":"message","id":"a1","message":{"role":"toolResult","content":[{"type":"text","text":"AWS_SECRET_ACCESS_KEY=abc123secret\nsk-ant-api03-Zq8vN2mXw4Lp9Rt6Ys1Kd3Jf5Hg7Bc0A \"quoted\""}],"isError":false}}`)
	out, n := r.JSON(line)
	if n != 2 || !json.Valid(out) || bytes.Contains(out, []byte("abc123secret")) || bytes.Contains(out, []byte("Zq8vN2")) {
		t.Fatalf("JSON = %s (%d)", out, n)
	}
	if !bytes.HasPrefix(out, []byte(`{"type":"message","id":"a1","message":{"role":"toolResult","content":[{"type":"text","text":"AWS_SECRET_ACCESS_KEY=[REDACTED:`)) {
		t.Errorf("members moved or names changed: %s", out)
	}
	plain := []byte(`{"type":"message","id":"a2","message":{"role":"user","content":"nothing here"}}`)
	if out, n := r.JSON(plain); n != 0 || !bytes.Equal(out, plain) {
		t.Errorf("a line without secrets changed: %s", out)
	}
}

// FuzzJSON: whatever the line, the result is valid JSON when the input was.
func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a":"token=abc","b":["-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----"]}`))
	f.Add([]byte(`{"authorization":"Bearer xyz","n":1}`))
	r, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _ := r.JSON(b)
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("valid %q became invalid %q", b, out)
		}
	})
}
