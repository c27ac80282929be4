package clipboard

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/internal/tmuxtest"
)

// helperVar makes the test binary the program that copies, for the tmux test.
const helperVar = "ARBOR_CLIPBOARD_HELPER"

func TestMain(m *testing.M) {
	if text, ok := os.LookupEnv(helperVar); ok {
		if _, err := Copy(context.Background(), text, Options{Terminal: os.Stdout}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const sample = "tab\there, ünïcödé, a line\nand \x1b]0;an escape\a that stays text"

func TestOSC52(t *testing.T) {
	seq := OSC52(sample, false)
	body, ok := strings.CutPrefix(seq, "\x1b]52;c;")
	if !ok || !strings.HasSuffix(body, "\a") {
		t.Fatalf("not an OSC 52 sequence: %q", seq)
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(body, "\a"))
	if err != nil || string(got) != sample {
		t.Fatalf("payload %q (%v)", got, err)
	}
	if strings.ContainsAny(strings.TrimSuffix(body, "\a"), "\x1b\a") {
		t.Error("the payload can end the sequence")
	}
	tm := OSC52(sample, true)
	wrapped, ok := strings.CutPrefix(tm, seq)
	if !ok || !strings.HasPrefix(wrapped, "\x1bPtmux;\x1b\x1b]52;c;") || !strings.HasSuffix(wrapped, "\a\x1b\\") {
		t.Errorf("tmux form %q", tm)
	}
}

// TestTmux copies with OSC 52 from a program in a real tmux whose
// set-clipboard is on: the text lands in tmux's paste buffer.
func TestTmux(t *testing.T) {
	term := tmuxtest.New(t)
	term.Run("new-session", "-d", "-x", "80", "-y", "20", "sleep 30")
	term.Run("set-option", "-g", "set-clipboard", "on")
	self, _ := os.Executable()
	text := "copied from arbor:\nünïcödé and `code`"
	cmd := "env " + helperVar + "='" + strings.ReplaceAll(text, "'", `'\''`) + "' '" + self + "'; sleep 30"
	term.Run("new-window", "sh", "-c", cmd)
	var got string
	if tmuxtest.Until(10*time.Second, func() bool {
		out, err := term.Try("show-buffer")
		got = out
		return err == nil && got == text
	}) {
		return
	}
	t.Fatalf("tmux's buffer holds %q, want %q", got, text)
}

// fakeTool puts a script with a tool's name on $PATH (and nothing else) that
// records its stdin and arguments, or fails as a tool without a display does.
func fakeTool(t *testing.T, name string, fail bool) (record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "record")
	script := "#!/bin/sh\n/bin/cat > '" + record + "'\necho \"$@\" > '" + record + ".args'\n"
	if fail {
		script = "#!/bin/sh\n/bin/cat > /dev/null\necho 'Error: Can'\\''t open display: (null)' >&2\nexit 1\n"
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return record
}

func TestSystemTool(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		text string
		osc  bool
	}{
		{"asked", Options{Terminal: &strings.Builder{}, System: true}, sample, true},
		{"no-terminal", Options{}, sample, false},
		{"too-long", Options{Terminal: &strings.Builder{}}, strings.Repeat("x", MaxOSC52+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			record := fakeTool(t, "xclip", false)
			r, err := Copy(context.Background(), tc.text, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Tool != "xclip" || r.OSC52 != tc.osc {
				t.Errorf("result %+v", r)
			}
			got, _ := os.ReadFile(record)
			args, _ := os.ReadFile(record + ".args")
			if string(got) != tc.text || strings.TrimSpace(string(args)) != "-selection clipboard" {
				t.Errorf("xclip got %d bytes %q with arguments %q", len(got), got[:min(len(got), 40)], args)
			}
			if term, _ := tc.o.Terminal.(*strings.Builder); term != nil && (term.Len() > 0) != tc.osc {
				t.Errorf("the terminal got %d bytes", term.Len())
			}
		})
	}
}

func TestOSC52Only(t *testing.T) {
	record := fakeTool(t, "xclip", false)
	var term strings.Builder
	r, err := Copy(context.Background(), "hi", Options{Terminal: &term, Getenv: func(string) string { return "" }})
	if err != nil || !r.OSC52 || r.Tool != "" || r.String() != "OSC 52" {
		t.Fatalf("%+v %v", r, err)
	}
	if term.String() != OSC52("hi", false) {
		t.Errorf("terminal got %q", term.String())
	}
	if _, err := os.Stat(record); err == nil {
		t.Error("the system tool ran without being asked")
	}
}

func TestNoWay(t *testing.T) {
	fakeTool(t, "xsel", true)
	_, err := Copy(context.Background(), "hi", Options{})
	if !errors.Is(err, ErrNoWay) || !strings.Contains(err.Error(), "xsel") || !strings.Contains(err.Error(), "open display") {
		t.Errorf("error %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Copy(context.Background(), "hi", Options{})
	if !errors.Is(err, ErrNoWay) || !strings.Contains(err.Error(), "no clipboard tool is installed") {
		t.Errorf("error %v", err)
	}
}
