package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/pitest"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// TestAgent runs the program and reads the session it leaves: main's branch
// compacted and continued after the reopen, every tool call answered, the
// experiment cursor where it was left, main's pin and outline kept.
func TestAgent(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(&out, dir); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fitted: 8 messages", "stats: 8 messages, 10 entries", "entries, 8 messages in context"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files in %s, want 1", len(files), dir)
	}
	l, err := jsonl.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Report(); len(r.BadLines) > 0 {
		t.Errorf("the session has unreadable lines: %v", r.BadLines)
	}
	if l.Active() != session.MainCursor {
		t.Errorf("active cursor %s, want main", l.Active())
	}

	var roles []string
	for _, m := range l.Context().Messages {
		roles = append(roles, m.Role)
	}
	// The compaction summarized the first turn up to its answer (a split turn).
	want := "compactionSummary assistant user assistant toolResult assistant user assistant"
	if got := strings.Join(roles, " "); got != want {
		t.Errorf("main's context = %s, want %s", got, want)
	}
	last, _ := l.Context().Messages[len(roles)-1].Data()
	if last.Content.Text("") != "You are welcome." {
		t.Errorf("last reply %q", last.Content.Text(""))
	}

	// Every call has its result, and every result says whether it failed.
	calls, results := map[string]bool{}, map[string]bool{}
	for _, e := range l.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		var m struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"toolCallId"`
			IsError    *bool           `json:"isError"`
			Content    json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(e.MessageRaw(), &m); err != nil {
			t.Fatal(err)
		}
		switch m.Role {
		case session.RoleToolResult:
			results[m.ToolCallID] = true
			if m.IsError == nil {
				t.Errorf("tool result without isError: %s", e.MessageRaw())
			}
		case session.RoleAssistant:
			for _, id := range regexp.MustCompile(`"id":"(call_\d+)"`).FindAllStringSubmatch(string(m.Content), -1) {
				calls[id[1]] = true
			}
		}
	}
	if len(calls) != 2 || len(calls) != len(results) {
		t.Errorf("calls %v, results %v", calls, results)
	}

	var side session.CursorInfo
	for _, c := range l.Cursors() {
		if c.Name == "experiment" {
			side = c
		}
	}
	if e := l.Entry(side.Leaf); e == nil || e.Role() != session.RoleUser {
		t.Errorf("experiment cursor at %+v, want its prompt", side)
	}
	levels := map[session.Level]int{}
	for _, r := range l.Cursor(session.MainCursor).Resolutions() {
		levels[r.Level]++
	}
	if levels[session.Pinned] != 1 || levels[session.Outlined] != 1 {
		t.Errorf("main's resolutions %v, want one pin and one outline", levels)
	}

	t.Run("pi 1.6.0 reads the same context", func(t *testing.T) {
		var pi struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(pitest.Run(t, pitest.Script(t, pitest.V16), "context", files[0]), &pi); err != nil {
			t.Fatal(err)
		}
		var piRoles []string
		for _, m := range pi.Messages {
			piRoles = append(piRoles, m.Role)
		}
		if strings.Join(piRoles, " ") != strings.Join(roles, " ") {
			t.Errorf("pi's context %v, arbor's %v", piRoles, roles)
		}
	})
}

// TestAgentIsShort holds the program to the promise: under 60 lines
// that call the library.
func TestAgentIsShort(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`\b(s|l|cur|reply|session|jsonl|window|compaction)\.[A-Z]\w*\(`)
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		if call.MatchString(line) {
			n++
		}
	}
	if n >= 60 || n < 10 {
		t.Errorf("%d lines call the library, want 10 to 59", n)
	}
	t.Logf("%d lines call the library", n)
}
