package share

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

const example = "../../examples/refactor.jsonl"

func load(t *testing.T) *session.Log {
	t.Helper()
	l, err := jsonl.Read(example)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "share-it")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestShareFile runs a command given the page as {file}: it gets the whole
// page, the URL it prints comes back, and the page is gone afterwards.
func TestShareFile(t *testing.T) {
	l := load(t)
	rec := filepath.Join(t.TempDir(), "got")
	cmd := script(t, `cp "$1" '`+rec+`'; echo "$1" > '`+rec+`.path'; test "$1" = "$ARBOR_SHARE_FILE" || exit 9
echo "- Creating gist refactor.html"
echo "✓ Created secret gist"
echo "https://gist.github.com/dev/0123abcd"`)
	r, err := Share(context.Background(), l, Options{Command: "'" + cmd + "' {file}", Export: export.Options{Source: example}})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://gist.github.com/dev/0123abcd" || !strings.HasPrefix(r.Output, "- Creating gist") {
		t.Errorf("result %+v", r)
	}
	var want strings.Builder
	if err := export.HTML(&want, l, export.Options{Source: example}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(rec)
	if string(got) != want.String() {
		t.Errorf("the command got %d bytes, want the %d of the page", len(got), want.Len())
	}
	path, _ := os.ReadFile(rec + ".path")
	page := strings.TrimSpace(string(path))
	if filepath.Base(page) != "refactor.html" {
		t.Errorf("the page is named %s", filepath.Base(page))
	}
	if _, err := os.Stat(filepath.Dir(page)); !os.IsNotExist(err) {
		t.Errorf("the page's folder is still there: %v", err)
	}
}

// TestShareStdin gives the page on stdin when the command has no {file}.
func TestShareStdin(t *testing.T) {
	l := load(t)
	rec := filepath.Join(t.TempDir(), "got")
	r, err := Share(context.Background(), l, Options{Command: "cat > '" + rec + "'; echo uploaded: http://paste.example/x1"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(rec)
	if !strings.HasPrefix(string(got), "<!DOCTYPE html>") || r.URL != "http://paste.example/x1" {
		t.Errorf("stdin %d bytes %q…, result %+v", len(got), got[:min(len(got), 20)], r)
	}
}

// TestShareUntrusted shows what a command prints with its control characters
// escaped, in the output, the URL and an error.
func TestShareUntrusted(t *testing.T) {
	l := load(t)
	r, err := Share(context.Background(), l, Options{Command: `printf 'done \033]0;pwned\007 https://x.example/a\033[31m\n'`})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(r.Output+r.URL, "\x1b\x07") || !strings.Contains(r.Output, `\x1b]0;pwned\a`) {
		t.Errorf("output %q url %q", r.Output, r.URL)
	}
	if r.URL != `https://x.example/a\x1b[31m` {
		t.Errorf("url %q", r.URL)
	}
	_, err = Share(context.Background(), l, Options{Command: `echo 'gh: not logged in \033[2J' >&2; exit 3`})
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), `not logged in \x1b[2J`) || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("error %q", err)
	}
}

// TestShareTimeout stops a command that hangs, and what it started.
func TestShareTimeout(t *testing.T) {
	l := load(t)
	start := time.Now()
	_, err := Share(context.Background(), l, Options{Command: "sleep 30 & sleep 30", Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestShareNoCommand(t *testing.T) {
	_, err := Share(context.Background(), load(t), Options{Command: "  "})
	if !errors.Is(err, ErrNoCommand) || !strings.Contains(err.Error(), "shareCommand") {
		t.Errorf("error %v", err)
	}
}

// TestShareCancel stops the command when the caller gives up (Esc in the chat).
func TestShareCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Share(ctx, load(t), Options{Command: "sleep 30"})
	if err == nil || !strings.Contains(err.Error(), "cancelled") || time.Since(start) > 5*time.Second {
		t.Errorf("error %v after %s", err, time.Since(start))
	}
}
