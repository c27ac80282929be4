package redact

import (
	"os"
	"os/exec"
	"testing"
)

// TestCompiledOnFirstUse: importing the package and constructing a Redactor
// (as every agent command does at start-up) compiles none of the built-in
// rules; the first text redacted does. It runs in a fresh process, where no
// other test has redacted anything yet.
func TestCompiledOnFirstUse(t *testing.T) {
	if os.Getenv("REDACT_LAZY_CHILD") == "1" {
		if compiled {
			t.Fatal("the rules were compiled at package initialisation")
		}
		r, err := New([]string{`ACME-[0-9]+`})
		if err != nil {
			t.Fatal(err)
		}
		_ = IsEnvFile("/p/.env")
		if compiled {
			t.Fatal("New compiled the built-in rules")
		}
		if out, n := r.Redact("PASSWORD=Hunter2Pw9 ACME-1"); n != 2 || !compiled {
			t.Fatalf("first use: %q %d, compiled %v", out, n, compiled)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompiledOnFirstUse$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REDACT_LAZY_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
