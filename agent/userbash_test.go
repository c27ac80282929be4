package agent

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRunUserBash(t *testing.T) {
	dir := t.TempDir()
	var chunks strings.Builder
	r, err := RunUserBash(context.Background(), dir, "printf '\\033[31mred\\033[0m\\r\\n'; pwd; exit 3", func(s string) { chunks.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != "red\n"+dir+"\n" || r.ExitCode == nil || *r.ExitCode != 3 || r.Cancelled || r.Truncated || r.FullOutputPath != "" {
		t.Errorf("result %+v (exit %v)", r, r.ExitCode)
	}
	if chunks.String() != r.Output {
		t.Errorf("streamed %q", chunks.String())
	}
}

func TestRunUserBashCutKeepsTheTailAndTheFile(t *testing.T) {
	r, err := RunUserBash(context.Background(), t.TempDir(), "seq 1 30000", nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(r.Output, "\n")
	if !r.Truncated || len(lines) > userBashMaxLines || lines[len(lines)-2] != "30000" || r.FullOutputPath == "" {
		t.Fatalf("cut: truncated=%v lines=%d last=%q file=%q", r.Truncated, len(lines), lines[len(lines)-2], r.FullOutputPath)
	}
	defer os.Remove(r.FullOutputPath)
	full, err := os.ReadFile(r.FullOutputPath)
	if err != nil || !strings.HasPrefix(string(full), "1\n2\n") || !strings.HasSuffix(string(full), "29999\n30000\n") {
		t.Errorf("full output file: %v, %d bytes", err, len(full))
	}
}

func TestRunUserBashCancelKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	// The child would write the file after the sleep if it survived.
	r, err := RunUserBash(ctx, dir, "echo started; (sleep 2; touch survived) & wait", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Cancelled || r.ExitCode != nil || r.Output != "started\n" || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("cancel: %+v after %s", r, time.Since(start))
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(dir + "/survived"); err == nil {
		t.Error("the command's child outlived the cancel")
	}
}

// FuzzUserOutput writes a command's output in arbitrary pieces: what is kept
// never holds an escape, a carriage return or invalid UTF-8, and valid text
// without escapes comes out as it went in, however it was cut.
func FuzzUserOutput(f *testing.F) {
	f.Add([]byte("plain\r\nline\n"), 3)
	f.Add([]byte("\x1b[31mred\x1b[0m \xe2\x82\xac\n"), 1)
	f.Add([]byte("\x1b]0;title\x07x\xff\xfe"), 2)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		o := &userOutput{}
		step := max(cut%17, 1)
		for i := 0; i < len(data); i += step {
			_, _ = o.Write(data[i:min(i+step, len(data))])
		}
		o.add(string(o.pending))
		got := strings.Join(o.chunks, "")
		if strings.ContainsAny(got, "\x1b\r") || !utf8.ValidString(got) {
			t.Fatalf("kept %q from %q", got, data)
		}
		if utf8.Valid(data) && !bytes.ContainsRune(data, 0x1b) && got != cleanOutput(string(data)) {
			t.Fatalf("cut every %d: %q, whole: %q", step, got, cleanOutput(string(data)))
		}
	})
}
