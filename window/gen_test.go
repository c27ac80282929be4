package window

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// genSession writes a realistic pi coding session: user requests, assistant
// replies with thinking and tool calls (read, grep, edit, bash running tests),
// tool results of realistic size and kind (Go source from GOROOT, test output,
// grep hits), and provider usage on every assistant message. With dangling,
// the session ends on a tool call whose result was never written.
func genSession(seed uint64, turns int, dangling bool) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	sources := goSources()
	var b bytes.Buffer
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	now := t0
	line := func(v map[string]any) {
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
	}
	line(map[string]any{"type": "session", "version": 3, "id": fmt.Sprintf("0195f1c2-0000-7000-8000-%012d", seed), "timestamp": now.Format("2006-01-02T15:04:05.000Z"), "cwd": "/home/dev/project"})
	parent := any(nil)
	n := 0
	context := 3200.0
	entry := func(msg map[string]any) string {
		n++
		now = now.Add(time.Duration(2+r.IntN(30)) * time.Second)
		id := fmt.Sprintf("%08x", uint32(seed)*2654435761+uint32(n)*40503)
		msg["timestamp"] = now.UnixMilli()
		line(map[string]any{"type": "message", "id": id, "parentId": parent, "timestamp": now.Format("2006-01-02T15:04:05.000Z"), "message": msg})
		parent = id
		return id
	}
	assistant := func(content []any, stop string) {
		out := 40 + r.IntN(400)
		in := int(context)
		context += float64(out)
		entry(map[string]any{"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
			"usage": map[string]any{"input": 3, "output": out, "cacheRead": in - 3, "cacheWrite": r.IntN(900), "totalTokens": in + out,
				"cost": map[string]any{"input": 0.000009, "output": float64(out) * 0.000015, "cacheRead": float64(in) * 0.0000003, "cacheWrite": 0.001, "total": float64(out)*0.000015 + float64(in)*0.0000003 + 0.001}},
			"stopReason": stop})
	}
	callID := 0
	tool := func(name string, args map[string]any, result string, isErr bool, think string) {
		callID++
		id := fmt.Sprintf("toolu_%06d", callID)
		assistant([]any{
			map[string]any{"type": "thinking", "thinking": think, "thinkingSignature": "sig"},
			map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args},
		}, "toolUse")
		entry(map[string]any{"role": "toolResult", "toolCallId": id, "toolName": name, "content": []any{map[string]any{"type": "text", "text": result}}, "isError": isErr})
		context += float64(len(result)) / 3
	}
	requests := []string{
		"The scanner in internal/scan drops the last line when the file has no trailing newline. Find out why and fix it, with a test.",
		"Add a --limit flag to the list command so it prints at most N sessions, newest first.",
		"Our CI says TestSplitLines fails on Windows line endings. Can you make the splitter accept \\r\\n and keep the tests green?",
		"Refactor the index so lookups by prefix do not scan every key; keep the public API the same.",
		"Please review the error messages in the loader: each should name the file and say what to do next.",
	}
	for turn := range turns {
		entry(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": requests[turn%len(requests)] + fmt.Sprintf(" (round %d)", turn+1)}}})
		context += 60
		src := sources[r.IntN(len(sources))]
		path := fmt.Sprintf("internal/pkg%d/%s", turn%7, filepath.Base(src.name))
		lines := strings.Split(src.text, "\n")
		start := r.IntN(max(1, len(lines)-200))
		chunk := strings.Join(lines[start:min(len(lines), start+40+r.IntN(400))], "\n")
		tool("read", map[string]any{"path": path}, chunk, false, "Let me look at the code first to see how it handles the end of input.")
		hits := []string{}
		for i := range 3 + r.IntN(12) {
			hits = append(hits, fmt.Sprintf("%s:%d:%s", path, 10+i*17, strings.TrimSpace(lines[(start+i*7)%len(lines)])))
		}
		tool("grep", map[string]any{"pattern": "func ", "path": filepath.Dir(path)}, strings.Join(hits, "\n"), false, "Now where is it called from?")
		if r.IntN(5) == 0 {
			tool("read", map[string]any{"path": path + ".orig"}, "ENOENT: no such file or directory, open '"+path+".orig'", true, "Maybe there is a backup.")
		}
		tool("edit", map[string]any{"path": path, "oldText": lines[start], "newText": lines[start] + " // fixed"}, "Successfully replaced text in "+path+".", false, "I see the problem; the loop exits before flushing the last token.")
		fail := r.IntN(3) == 0
		tool("bash", map[string]any{"command": "go test ./..."}, testOutput(r, fail), fail, "Run the tests.")
		if fail {
			tool("edit", map[string]any{"path": path, "oldText": "x", "newText": "y"}, "Successfully replaced text in "+path+".", false, "One more fix for the failing case.")
			tool("bash", map[string]any{"command": "go test ./... && go vet ./..."}, testOutput(r, false), false, "And again.")
		}
		assistant([]any{map[string]any{"type": "text", "text": "Fixed: the scanner now flushes the final token when the input ends without a newline. I added TestScanNoTrailingNewline, and `go test ./...` passes."}}, "stop")
	}
	if dangling {
		callID++
		assistant([]any{map[string]any{"type": "toolCall", "id": fmt.Sprintf("toolu_%06d", callID), "name": "bash", "arguments": map[string]any{"command": "go test -race ./..."}}}, "toolUse")
	}
	return b.Bytes()
}

func testOutput(r *rand.Rand, fail bool) string {
	var b strings.Builder
	total := 8 + r.IntN(40)
	failed := 0
	if fail {
		failed = 1 + r.IntN(3)
	}
	for i := range total {
		name := fmt.Sprintf("TestCase%02d", i)
		if i < failed {
			fmt.Fprintf(&b, "=== RUN   %s\n    scan_test.go:%d: got %q, want %q\n--- FAIL: %s (0.00s)\n", name, 40+i, "abc", "abcd", name)
			continue
		}
		fmt.Fprintf(&b, "=== RUN   %s\n--- PASS: %s (0.0%ds)\n", name, name, r.IntN(9))
	}
	if fail {
		b.WriteString("FAIL\nFAIL\texample.com/project/internal/scan\t0.012s\nFAIL\n\nCommand exited with code 1")
	} else {
		b.WriteString("PASS\nok  \texample.com/project/internal/scan\t0.011s")
	}
	return b.String()
}

type source struct{ name, text string }

// goSources returns some of the standard library's Go files: real code, and
// the same for a given Go release.
func goSources() []source {
	var out []source
	root := ""
	if b, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(b))
	}
	for _, f := range []string{"strings/strings.go", "bufio/scan.go", "sort/sort.go", "path/filepath/path.go", "encoding/csv/reader.go"} {
		b, err := os.ReadFile(filepath.Join(root, "src", f))
		if err == nil {
			out = append(out, source{f, string(b)})
		}
	}
	if len(out) == 0 {
		out = append(out, source{"main.go", strings.Repeat("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n", 50)})
	}
	return out
}
