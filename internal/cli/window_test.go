package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

// windowRun runs the arbor command in-process.
func windowRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// windowFixture copies a session of package window's testdata into a temporary folder.
func windowFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "window", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestStatsCommand(t *testing.T) {
	path := windowFixture(t, "coding.jsonl")
	out, errOut, code := windowRun(t, "stats", path, "--window", "50000", "--reserve", "5000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"contextWindow", "completionReserve", "promptBudget", "estimatedUsed", "estimatedRemaining", "utilizationPercent", "messageCount", "entryCount",
		"pathEntryCount", "roleTokens", "resolutionTokens", "phaseTokens", "compactionTokens", "compactedEntryCount", "apiUsage"} {
		if _, ok := s[k]; !ok {
			t.Errorf("stats --json has no %s", k)
		}
	}
	if s["promptBudget"].(float64) != 45000 || s["apiUsage"].(map[string]any)["requests"].(float64) != 35 {
		t.Errorf("promptBudget %v, requests %v", s["promptBudget"], s["apiUsage"].(map[string]any)["requests"])
	}

	out, _, code = windowRun(t, "stats", path, "--window", "50000", "--reserve", "5000")
	if code != 0 {
		t.Fatal(out)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !regexp.MustCompile(`^\[[█░]{20}\] [\d.]+k/45k tokens \([\d.]+%\) │ [\d.]+k remaining │ 70 messages$`).MatchString(first) {
		t.Errorf("status line %q", first)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes when stdout is not a terminal")
	}
	for _, want := range []string{"by role", "by resolution", "by phase", "compaction", "API usage", "35 requests"} {
		if !strings.Contains(out, want) {
			t.Errorf("breakdown lacks %q:\n%s", want, out)
		}
	}

	if _, errOut, code := windowRun(t, "stats", path, "--reserve", "-1"); code != 2 || !strings.Contains(errOut, "--reserve") {
		t.Errorf("bad --reserve: exit %d %s", code, errOut)
	}
}

// The four resolution commands write markers per cursor; arbor context
// renders them, another cursor is unaffected, a reopen restores them, and pi
// still reads the whole conversation.
func TestResolutionCommands(t *testing.T) {
	path := windowFixture(t, "coding.jsonl")
	orig, _ := os.ReadFile(path)
	l := session.Load(orig)
	var results []string
	for _, m := range l.Context().Messages {
		if m.Role == session.RoleToolResult {
			results = append(results, m.Entry.ID)
		}
	}
	s, err := jsonl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	altC, err := s.NewCursor("alt")
	if err != nil {
		t.Fatal(err)
	}
	alt := altC.ID()
	s.Close()

	for _, args := range [][]string{
		{"outline", path, results[0]},
		{"summarize", path, results[1], "--text", "grep found the callers"},
		{"pin", path, results[2]},
		{"summarize", path, results[0], "--cursor", "alt"},
	} {
		if out, errOut, code := windowRun(t, args...); code != 0 {
			t.Fatalf("%v: exit %d %s %s", args, code, out, errOut)
		}
	}
	if _, errOut, code := windowRun(t, "pin", path, "ffffffff"); code != 1 || !strings.Contains(errOut, "ffffffff") {
		t.Errorf("unknown entry: exit %d %s", code, errOut)
	}
	if _, errOut, code := windowRun(t, "pin", path, results[0], "--cursor", "nope"); code != 1 || !strings.Contains(errOut, "nope") {
		t.Errorf("unknown cursor: exit %d %s", code, errOut)
	}
	// What never reaches the model cannot be pinned, and a marker is not part of the
	// conversation: session.Resolvable, the check the RPC servers use too.
	if _, errOut, code := windowRun(t, "label", path, results[0], "checked"); code != 0 {
		t.Fatalf("label: %s", errOut)
	}
	var attached, marker string
	after, _ := os.ReadFile(path)
	for _, e := range session.Load(after).Entries() {
		switch {
		case e.IsMarker() && marker == "":
			marker = e.ID
		case !e.IsMarker() && session.DefaultLevel(e) == session.Attached && attached == "":
			attached = e.ID
		}
	}
	if attached == "" || marker == "" {
		t.Fatalf("the fixture lacks an attached entry (%q) or a marker (%q)", attached, marker)
	}
	for _, c := range []struct{ verb, id, says string }{
		{"pin", attached, "never reaches the model"},
		{"outline", attached, "never reaches the model"},
		{"pin", marker, "arbor marker"},
	} {
		if _, errOut, code := windowRun(t, c.verb, path, c.id); code != 1 || !strings.Contains(errOut, c.says) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%s %s: exit %d %q, want one line saying %q", c.verb, c.id, code, errOut, c.says)
		}
	}

	text := func(args ...string) map[string]string {
		out, errOut, code := windowRun(t, append([]string{"context", path, "--json", "--resolved"}, args...)...)
		if code != 0 {
			t.Fatalf("context %v: %s", args, errOut)
		}
		var ctx struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal([]byte(out), &ctx); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, raw := range ctx.Messages {
			var m struct {
				ToolCallID string `json:"toolCallId"`
				Content    []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal(raw, &m)
			if m.ToolCallID != "" && len(m.Content) > 0 {
				got[m.ToolCallID] = m.Content[0].Text
			}
		}
		return got
	}
	// Writing through cursor alt made it the active one (SPEC §6.2), so name main.
	main := text("--cursor", "main")
	if got := main["toolu_000001"]; !strings.HasPrefix(got, "read internal/pkg0/strings.go: ") || strings.Count(got, "\n") > 3 {
		t.Errorf("outlined read: %q", got)
	}
	if got := main["toolu_000002"]; got != "grep found the callers" {
		t.Errorf("summary with --text: %q", got)
	}
	other := text("--cursor", "alt")
	if got := other["toolu_000001"]; got != "read internal/pkg0/strings.go: "+strings.SplitN(main["toolu_000001"], ": ", 2)[1][:strings.Index(strings.SplitN(main["toolu_000001"], ": ", 2)[1]+"\n", "\n")] {
		t.Errorf("cursor alt renders %q", got)
	}
	if strings.HasPrefix(other["toolu_000002"], "grep found") {
		t.Error("the main cursor's summary leaked into cursor alt")
	}
	// Without --resolved, --json is pi's context: every message in full.
	if out, errOut, code := windowRun(t, "context", path, "--json", "--cursor", "main"); code != 0 || strings.Contains(out, "grep found the callers") {
		t.Errorf("context --json applied the cursor's resolutions without --resolved (exit %d %s)", code, errOut)
	}

	// reopen: each cursor keeps its own stamps
	re, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]session.Resolution{
		results[0]: {Level: session.Outlined},
		results[1]: {Level: session.Summarized, Text: "grep found the callers"},
		results[2]: {Level: session.Pinned},
	}
	if diff := cmp.Diff(want, re.Cursor(session.MainCursor).Resolutions()); diff != "" {
		t.Errorf("main cursor after reopen:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]session.Resolution{results[0]: {Level: session.Summarized}}, re.Cursor(alt).Resolutions()); diff != "" {
		t.Errorf("cursor alt after reopen:\n%s", diff)
	}

	if _, _, code := windowRun(t, "unpin", path, results[2]); code != 0 {
		t.Fatal("unpin failed")
	}
	re, _ = jsonl.Read(path)
	if r, _ := re.Cursor("").Resolution(results[2]); r.Level != session.Full {
		t.Errorf("after unpin: %v", r)
	}

	piSeesEverything(t, orig, path)
}

// piSeesEverything runs pi on the original and the stamped file: the markers
// are custom entries, so pi must build the same messages from both.
func piSeesEverything(t *testing.T, orig []byte, path string) {
	const pi = "/tmp/peers/pi-0.73.1/pi.mjs"
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(pi); err != nil || serr != nil {
		t.Log("node or pi missing: skipping pi's reading of the stamped file")
		return
	}
	before := filepath.Join(t.TempDir(), "orig.jsonl")
	os.WriteFile(before, orig, 0o600)
	read := func(file string) any {
		out, err := exec.Command(node, pi, "context", file).Output()
		if err != nil {
			t.Fatalf("pi context %s: %v", file, err)
		}
		var v struct {
			Messages any `json:"messages"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		return v.Messages
	}
	if diff := cmp.Diff(read(before), read(path)); diff != "" {
		t.Errorf("pi reads a different conversation once arbor stamped resolutions:\n%s", diff)
	}
}

func TestContextBudget(t *testing.T) {
	t.Setenv("ARBOR_DIR", t.TempDir())
	path := windowFixture(t, "long.jsonl")
	out, errOut, code := windowRun(t, "context", path, "--budget", "6000", "--format", "llm", "--explain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || msgs[0]["role"] != "user" || !strings.Contains(out, "left out here to fit the context window") {
		t.Errorf("%d messages; first %v", len(msgs), msgs[0]["role"])
	}
	if !regexp.MustCompile(`(?m)^budget 6000 tokens, used \d+`).MatchString(errOut) || !strings.Contains(errOut, "left out") || !strings.Contains(errOut, "summarized") {
		t.Errorf("--explain:\n%s", errOut)
	}

	// a blob named in the output reads back as the full output
	ref := regexp.MustCompile(`sha256:[0-9a-f]{64}`).FindString(out)
	if ref != "" {
		blobOut, errOut, code := windowRun(t, "blob", ref)
		if code != 0 || len(blobOut) == 0 {
			t.Errorf("blob %s: exit %d %s", ref, code, errOut)
		}
		if !strings.Contains(string(mustRead(t, path)), jsonEscape(strings.SplitN(blobOut, "\n", 2)[0])) {
			t.Error("blob does not hold text from the session")
		}
	}

	// the transcript marks what is not as logged
	text, errOut, code := windowRun(t, "context", windowFixture(t, "dangling.jsonl"), "--budget", "2500")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, want := range []string{"(outlined)", "(cut)", "── toolResult (added by arbor)"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}

	if _, errOut, code := windowRun(t, "context", path, "--budget", "10"); code != 1 || !strings.Contains(errOut, "cannot fit in 10 tokens") {
		t.Errorf("tiny budget: exit %d %s", code, errOut)
	}
	if _, _, code := windowRun(t, "context", path, "--explain"); code != 2 {
		t.Errorf("--explain without --budget: exit %d", code)
	}
	if _, _, code := windowRun(t, "context", path, "--budget", "-5"); code != 2 {
		t.Errorf("negative budget: exit %d", code)
	}
	// without a budget or stamps the output is pi's context, untouched
	plain, _, _ := windowRun(t, "context", path, "--json")
	l, _ := jsonl.Read(path)
	var b bytes.Buffer
	ctx := l.Context()
	ctx.WriteJSON(&b)
	if plain != b.String()+"\n" {
		t.Error("plain context changed")
	}
}

func TestBlobCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ARBOR_DIR", dir)
	full := strings.Repeat("long output line\n", 5000)
	l := session.New("/p")
	add := func(v map[string]any) {
		m, _ := session.NewMessage(v)
		l.AppendMessage(m)
	}
	add(map[string]any{"role": "user", "content": "run it"})
	add(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "toolCall", "id": "c", "name": "bash", "arguments": map[string]any{"command": "make"}}}, "stopReason": "toolUse"})
	add(map[string]any{"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": []any{map[string]any{"type": "text", "text": full}}, "isError": false})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var file bytes.Buffer
	file.Write(l.Header().Raw())
	file.WriteString("\n")
	for _, e := range l.Entries() {
		file.Write(e.Raw())
		file.WriteString("\n")
	}
	os.WriteFile(path, file.Bytes(), 0o600)
	out, errOut, code := windowRun(t, "context", path, "--budget", "4000", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	ref := regexp.MustCompile(`sha256:[0-9a-f]{64}`).FindString(out)
	if ref == "" {
		t.Fatalf("no blob reference in %s", out[:min(len(out), 500)])
	}
	for _, arg := range []string{ref, strings.TrimPrefix(ref, "sha256:"), ref[:15]} {
		got, errOut, code := windowRun(t, "blob", arg)
		if code != 0 || got != full {
			t.Errorf("blob %s: exit %d %s (%d bytes)", arg, code, errOut, len(got))
		}
	}
	if _, errOut, code := windowRun(t, "blob", "sha256:00000000"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("missing blob: exit %d %s", code, errOut)
	}
	if _, errOut, code := windowRun(t, "blob", "xyz"); code != 1 || !strings.Contains(errOut, "not a blob reference") {
		t.Errorf("bad ref: exit %d %s", code, errOut)
	}
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
