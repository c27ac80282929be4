package redact

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
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

func FuzzRedact(f *testing.F) {
	f.Add("Authorization: Bearer abc\nKEY=1")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nabc")
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
