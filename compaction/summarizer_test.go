package compaction

import (
	"strconv"

	"context"
	"encoding/json"
	"errors"
	"github.com/arborlog/arbor/importers"
	"github.com/arborlog/arbor/session"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// work builds a session with two requests and tool activity in every phase.
func work(t *testing.T) *builder {
	b := newBuilder(t)
	b.user("Fix the failing parser test")
	c1 := b.toolCall("read", "parser.go")
	b.assistant("Looking.", c1)
	b.result(c1, "package parser\nfunc Parse() {}")
	c2 := b.toolCall("edit", "parser.go")
	b.assistant("", c2)
	b.result(c2, "edited")
	c3 := map[string]any{"type": "toolCall", "id": "bash1", "name": "bash", "arguments": map[string]any{"command": "go test ./parser"}}
	b.assistant("", c3)
	b.msg(map[string]any{"role": "toolResult", "toolCallId": "bash1", "toolName": "bash", "isError": true,
		"content": []any{map[string]any{"type": "text", "text": "FAIL parser_test.go:42: want 3 got 4"}}})
	b.assistant("The test still fails at parser_test.go:42.")
	b.user("Now also update the README")
	c4 := b.toolCall("write", "README.md")
	b.assistant("", c4)
	b.result(c4, "written")
	b.assistant("Done.")
	return b
}

func TestMechanicalSummary(t *testing.T) {
	b := work(t)
	msgs := b.l.Context().Messages
	got, err := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Original request\nFix the failing parser test",
		"## Current request\nNow also update the README",
		"- [exploration] read parser.go",
		"- [execution] edit parser.go",
		"- [verification] bash `go test ./parser`",
		"- [execution] write README.md",
		"- bash `go test ./parser` (error): FAIL parser_test.go:42: want 3 got 4",
		"## Latest reply\nDone.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	again, _ := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: msgs})
	if again != got {
		t.Error("two summaries of the same messages differ")
	}
}

func TestMechanicalRollsForward(t *testing.T) {
	b := work(t)
	msgs := b.l.Context().Messages
	first, _ := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: msgs[:8]})
	stored := first + FormatFiles([]string{"x.go"}, nil) // as Summarize stores it
	second, _ := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: msgs[8:], PreviousSummary: &stored})
	for _, want := range []string{"## Original request\nFix the failing parser test", "- [exploration] read parser.go", "- [execution] write README.md"} {
		if !strings.Contains(second, want) {
			t.Errorf("rolled-forward summary lacks %q:\n%s", want, second)
		}
	}
	if strings.Contains(second, "<read-files>") {
		t.Error("the previous summary's file list was carried into the text")
	}
	model := "## Goal\nShip it"
	third, _ := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: msgs[8:], PreviousSummary: &model})
	if !strings.Contains(third, "## Earlier summary\n## Goal\nShip it") {
		t.Errorf("a model's previous summary was not kept:\n%s", third)
	}
}

func TestMechanicalIsCapped(t *testing.T) {
	b := newBuilder(t)
	for i := 0; i < 200; i++ {
		b.user("step " + itoa(i))
		c := b.toolCall("read", "f"+itoa(i)+".go")
		b.assistant("", c)
		b.result(c, strings.Repeat("data ", 200))
	}
	var prev *string
	var got string
	for round := 0; round < 5; round++ { // compacting again and again must not grow without bound
		var err error
		got, err = Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: b.l.Context().Messages, PreviousSummary: prev})
		if err != nil {
			t.Fatal(err)
		}
		prev = &got
	}
	if n := strings.Count(got, "\n- ["); n > MaxSegments {
		t.Errorf("%d activity segments, cap %d", n, MaxSegments)
	}
	if !strings.Contains(got, "older phase segments truncated)") {
		t.Error("no note of the truncated segments")
	}
	if len(got) > 20000 {
		t.Errorf("summary is %d bytes", len(got))
	}
}

func TestMechanicalNeverEmpty(t *testing.T) {
	got, err := Mechanical{}.Summarize(context.Background(), Request{Kind: History})
	if err != nil || got == "" {
		t.Errorf("got %q, %v", got, err)
	}
}

func FuzzParsePrior(f *testing.F) {
	f.Add("## Original request\nx\n\n## Activity\n- (3 older phase segments truncated)\n- [execution] edit a\n\n## Key findings\n- a: b")
	f.Add("## Goal\nanything\n\n<read-files>\na\n</read-files>")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p := parsePrior(s)
		for _, l := range append(p.activity, p.findings...) {
			if !strings.HasPrefix(l, "- ") {
				t.Fatalf("kept line %q", l)
			}
		}
		if _, err := (Mechanical{}).Summarize(context.Background(), Request{Kind: History, PreviousSummary: &s}); err != nil {
			t.Fatal(err)
		}
	})
}

// fakeModel is a chat-completions server that records the requests it gets.
type fakeModel struct {
	mu       sync.Mutex
	requests []chatRequest
	auth     []string
	reply    func(w http.ResponseWriter, r chatRequest)
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	f.reply(w, req)
}

func answer(text string) func(http.ResponseWriter, chatRequest) {
	return func(w http.ResponseWriter, req chatRequest) {
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}}})
	}
}

func serve(t *testing.T, f *fakeModel) *Model {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &Model{BaseURL: srv.URL + "/v1", Model: "test-model", APIKey: "sk-test", Timeout: 5 * time.Second}
}

func TestModelRequest(t *testing.T) {
	f := &fakeModel{reply: answer("## Goal\nfixed")}
	m := serve(t, f)
	b := work(t)
	long := strings.Repeat("L", 3000)
	c := b.toolCall("read", "big.txt")
	b.assistant("", c)
	b.result(c, long)
	prev := "## Goal\nold goal"
	got, err := m.Summarize(context.Background(), Request{Kind: History, Messages: b.l.Context().Messages, PreviousSummary: &prev, Instructions: "the parser", MaxTokens: 1000})
	if err != nil || got != "## Goal\nfixed" {
		t.Fatalf("got %q, %v", got, err)
	}
	req := f.requests[0]
	if req.Model != "test-model" || req.MaxTokens != 1000 || f.auth[0] != "Bearer sk-test" {
		t.Errorf("request model %q max_tokens %d auth %q", req.Model, req.MaxTokens, f.auth[0])
	}
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[0].Content != SystemPrompt || req.Messages[1].Role != "user" {
		t.Fatalf("messages: %+v", req.Messages)
	}
	user := req.Messages[1].Content
	for _, want := range []string{
		"<conversation>\n[User]: Fix the failing parser test",
		"[Assistant tool calls]: read(path=\"parser.go\")",
		"[Tool result]: " + strings.Repeat("L", 2000) + "\n\n[... 1000 more characters truncated]",
		"\n</conversation>\n\n<previous-summary>\n## Goal\nold goal\n</previous-summary>\n\n" + updatePrompt + "\n\nAdditional focus: the parser",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q", want[:min(len(want), 80)])
		}
	}
	for _, section := range []string{"## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"} {
		if !strings.Contains(updatePrompt, section) || !strings.Contains(summaryPrompt, section) {
			t.Errorf("prompts lack %s", section)
		}
	}
}

func TestPromptKinds(t *testing.T) {
	msgs := work(t).l.Context().Messages
	conv := "<conversation>\n" + Serialize(msgs) + "\n</conversation>\n\n"
	empty := ""
	tests := []struct {
		name string
		r    Request
		want string
	}{
		{"first summary", Request{Kind: History, Messages: msgs}, conv + summaryPrompt},
		{"empty previous summary is no previous summary", Request{Kind: History, Messages: msgs, PreviousSummary: &empty}, conv + summaryPrompt},
		{"turn prefix (pi 1.6.0's framing)", Request{Kind: TurnPrefix, Messages: msgs, Instructions: "x"},
			"# Conversation\n" + Serialize(msgs) + "\n\n# Instructions\n" + turnPrefixPrompt + "\n\nAdditional focus: x"},
		{"branch", Request{Kind: Branch, Messages: msgs}, conv + branchPrompt},
		{"branch with focus", Request{Kind: Branch, Messages: msgs, Instructions: "x"}, conv + branchPrompt + "\n\nAdditional focus: x"},
		{"branch with replaced prompt", Request{Kind: Branch, Messages: msgs, Instructions: "only this", ReplaceInstructions: true}, conv + "only this"},
	}
	for _, tt := range tests {
		if got := Prompt(tt.r); got != tt.want {
			t.Errorf("%s: prompt differs", tt.name)
		}
	}
}

func TestModelErrors(t *testing.T) {
	tests := []struct {
		name    string
		reply   func(http.ResponseWriter, chatRequest)
		timeout time.Duration
		want    string
	}{
		{"bad status", func(w http.ResponseWriter, _ chatRequest) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"invalid api key"}}`))
		}, 0, "401 Unauthorized: invalid api key"},
		{"server error text", func(w http.ResponseWriter, _ chatRequest) { http.Error(w, "upstream down", http.StatusBadGateway) }, 0, "502 Bad Gateway: upstream down"},
		{"empty answer", answer(""), 0, "empty summary"},
		{"no choices", func(w http.ResponseWriter, _ chatRequest) { _, _ = w.Write([]byte(`{"choices":[]}`)) }, 0, "empty summary"},
		{"not JSON", func(w http.ResponseWriter, _ chatRequest) { _, _ = w.Write([]byte(`<html>`)) }, 0, "not chat-completions JSON"},
		{"timeout", func(w http.ResponseWriter, _ chatRequest) {
			time.Sleep(500 * time.Millisecond)
			answer("late")(w, chatRequest{})
		}, 100 * time.Millisecond, "did not answer within 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := serve(t, &fakeModel{reply: tt.reply})
			if tt.timeout > 0 {
				m.Timeout = tt.timeout
			}
			b := work(t)
			before := b.l.Len()
			ctxBefore := contextBytes(t, b.l)
			_, _, err := Compact(context.Background(), b.l.Cursor(""), Options{Settings: Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 1}, Summarizer: m})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if b.l.Len() != before || string(contextBytes(t, b.l)) != string(ctxBefore) {
				t.Error("a failed summary changed the session")
			}
		})
	}
}

func TestModelFromEnv(t *testing.T) {
	env := map[string]string{EnvBaseURL: "http://x/v1", EnvModel: "m", EnvAPIKeyEnv: "MY_KEY", "MY_KEY": "k1", DefaultKey: "k0"}
	m, err := ModelFromEnv(func(k string) string { return env[k] })
	if err != nil || m.APIKey != "k1" || m.Model != "m" || m.BaseURL != "http://x/v1" {
		t.Fatalf("got %+v, %v", m, err)
	}
	delete(env, EnvAPIKeyEnv)
	if m, _ := ModelFromEnv(func(k string) string { return env[k] }); m.APIKey != "k0" {
		t.Errorf("default key variable not used: %q", m.APIKey)
	}
	delete(env, EnvModel)
	if _, err := ModelFromEnv(func(k string) string { return env[k] }); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
}

// A split turn asks for the history and the turn prefix and merges them as pi does.
func TestSummarizeSplitTurn(t *testing.T) {
	f := &fakeModel{reply: func(w http.ResponseWriter, r chatRequest) {
		if strings.Contains(r.Messages[1].Content, turnPrefixPrompt) {
			answer("PREFIX")(w, r)
		} else {
			answer("HISTORY")(w, r)
		}
	}}
	m := serve(t, f)
	b := newBuilder(t)
	b.user("old request")
	b.assistant("old reply")
	b.user("big turn")
	for i := 0; i < 6; i++ {
		c := b.toolCall("edit", "f.go")
		b.assistant(strings.Repeat("t", 200), c)
		b.result(c, strings.Repeat("r", 200))
	}
	p, err := Prepare(b.l.PathTo(""), Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 200})
	if err != nil || !p.IsSplitTurn {
		t.Fatalf("plan %+v, %v", p, err)
	}
	r, err := Summarize(context.Background(), p, m, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<modified-files>\nf.go\n</modified-files>"
	if r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
	for _, req := range f.requests {
		prefix := strings.Contains(req.Messages[1].Content, turnPrefixPrompt)
		if wantMax := map[bool]int{true: 500, false: 800}[prefix]; req.MaxTokens != wantMax {
			t.Errorf("prefix %v: max_tokens %d, want %d", prefix, req.MaxTokens, wantMax)
		}
	}
}

// TestCompactionRecordsUsage: a compaction written with a model summarizer
// records what the summary cost, as pi 1.6.0 does; the mechanical one records none.
func TestCompactionRecordsUsage(t *testing.T) {
	f := &fakeModel{reply: func(w http.ResponseWriter, _ chatRequest) {
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"## Goal\nsummed"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":80,"total_tokens":1280,"prompt_tokens_details":{"cached_tokens":200}}}`))
	}}
	m := serve(t, f)
	for _, s := range []Summarizer{m, Mechanical{}} {
		b := work(t)
		for i := range 6 {
			b.user(strings.Repeat("question ", 400) + strconv.Itoa(i))
			b.assistant(strings.Repeat("answer ", 400))
		}
		e, _, err := Compact(context.Background(), b.l.Cursor(""), Options{Settings: Settings{Enabled: true, ReserveTokens: 1000, KeepRecentTokens: 500}, Summarizer: s})
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Usage *session.Usage `json:"usage"`
		}
		if err := json.Unmarshal(e.Raw(), &d); err != nil {
			t.Fatal(err)
		}
		_, metered := s.(MeteredSummarizer)
		calls := float64(len(f.requests))
		f.requests = nil
		switch {
		case metered && (d.Usage == nil || d.Usage.Input != 1000*calls || d.Usage.CacheRead != 200*calls || d.Usage.Output != 80*calls || d.Usage.TotalTokens != 1280*calls):
			// Each call (the history, and the turn prefix of a split turn) is counted.
			t.Errorf("model summarizer: compaction usage %+v for %v calls, want input 1000, cacheRead 200, output 80, total 1280 each", d.Usage, calls)
		case !metered && d.Usage != nil:
			t.Errorf("mechanical summarizer: compaction usage %+v, want none", d.Usage)
		}
	}
}

// TestMechanicalFindings: each finding names what ran (a call's label, a
// command the user ran, the tool, or nothing) and the start of its output on
// one line; a command without output makes none.
func TestMechanicalFindings(t *testing.T) {
	b := newBuilder(t)
	b.user("go")
	b.msg(map[string]any{"role": "bashExecution", "command": "ls  -la", "output": "  a.go\n\tb.go  ", "exitCode": 0})
	b.msg(map[string]any{"role": "bashExecution", "command": "true", "output": " \n ", "exitCode": 0})
	c := b.toolCall("read", "a.go")
	b.assistant("", c)
	b.result(c, "package a\n\nfunc A() {}")
	b.msg(map[string]any{"role": "toolResult", "toolCallId": "nowhere", "toolName": "grep", "content": []any{map[string]any{"type": "text", "text": "x"}}})
	b.msg(map[string]any{"role": "toolResult", "toolCallId": "nowhere", "isError": true, "content": "plain " + strings.Repeat("y", 200)})
	b.msg(map[string]any{"role": "toolResult", "toolCallId": "nowhere", "content": []any{map[string]any{"type": "text", "text": "z"}}})
	got, err := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: b.l.Context().Messages})
	if err != nil {
		t.Fatal(err)
	}
	want := "## Key findings\n" +
		"- `ls -la`: a.go b.go\n" +
		"- read a.go: package a func A() {}\n" +
		"- grep: x\n" +
		"-  (error): plain " + strings.Repeat("y", 144) + "…\n" +
		"- : z"
	if !strings.HasSuffix(got, want) {
		t.Errorf("summary does not end in\n%s\nbut is\n%s", want, got)
	}
}

// Another agent's tools are summarized by what they do, as pi's are: a Codex
// session's commands (argument vectors, a shell's script) are execution, its
// patch names the files it touches.
func TestMechanicalSummaryForeignTools(t *testing.T) {
	s, err := importers.ReadFile(filepath.Join("..", "testdata", "foreign", "rollout-2026-03-02T10-00-00-cccccccc-0000-4000-8000-000000000003.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Mechanical{}.Summarize(context.Background(), Request{Kind: History, Messages: s.Log().Context().Messages})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- [execution] shell `rg -n 'func main' .`; shell `go test ./...`; exec_command `git status --short`",
		"; apply_patch main.go, notes.md; update_plan 3 items; view_image /work/proj/shot.png",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
