package importers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
)

// item is one thing a user would miss from an import: a prompt, an assistant
// text, a tool call, a tool result or a compaction summary.
type item struct {
	kind string // user, text, call, result, summary
	val  string
}

func (i item) String() string { return fmt.Sprintf("%s %.80q", i.kind, i.val) }

// sourceItems reads a Claude Code or Codex file the simple way, apart from the
// importers' own readers: every prompt, text, call, result and summary in the
// order the source wrote them.
func sourceItems(t *testing.T, format Format, data []byte) []item {
	t.Helper()
	var out []item
	seen := map[string]bool{}
	add := func(kind, val string) {
		if val != "" {
			out = append(out, item{kind, val})
		}
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l map[string]any
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch format {
		case Claude:
			uuid, _ := l["uuid"].(string)
			msg, _ := l["message"].(map[string]any)
			if msg == nil || uuid == "" || seen["u"+uuid] || (l["type"] != "user" && l["type"] != "assistant") {
				continue
			}
			seen["u"+uuid] = true
			kind := "user"
			if l["type"] == "assistant" {
				kind = "text"
			}
			if l["isCompactSummary"] == true {
				kind = "summary"
			}
			if s, ok := msg["content"].(string); ok {
				add(kind, s)
				continue
			}
			blocks, _ := msg["content"].([]any)
			var texts []string
			for _, b := range blocks {
				b, _ := b.(map[string]any)
				switch b["type"] {
				case "text":
					s, _ := b["text"].(string)
					if kind == "summary" {
						texts = append(texts, s)
						continue
					}
					// Streaming repeats a block on the next line of the response.
					id, _ := msg["id"].(string)
					if kind == "text" && seen["t"+id+s] {
						continue
					}
					seen["t"+id+s] = true
					add(kind, s)
				case "tool_use":
					add("call", fmt.Sprintf("%v %v", b["name"], b["id"]))
				case "tool_result":
					add("result", fmt.Sprint(b["tool_use_id"]))
				}
			}
			if kind == "summary" {
				add("summary", strings.Join(texts, "\n"))
			}
		case Codex:
			p, _ := l["payload"].(map[string]any)
			if l["type"] != "response_item" && l["type"] != "compacted" {
				if _, bare := l["role"]; !bare && l["call_id"] == nil {
					continue
				}
				p = l // the oldest layout: bare items
			}
			if l["type"] == "compacted" {
				s, _ := p["message"].(string)
				add("summary", s)
				continue
			}
			switch p["type"] {
			case "message":
				kind := "user"
				switch p["role"] {
				case "assistant":
					kind = "text"
				case "user":
				default:
					continue // developer instructions
				}
				blocks, _ := p["content"].([]any)
				for _, b := range blocks {
					b, _ := b.(map[string]any)
					if b["type"] == "input_text" || b["type"] == "output_text" {
						s, _ := b["text"].(string)
						add(kind, s)
					}
				}
			case "function_call", "custom_tool_call", "local_shell_call":
				add("call", fmt.Sprintf("%v %v", p["name"], p["call_id"]))
			case "function_call_output", "custom_tool_call_output":
				add("result", fmt.Sprint(p["call_id"]))
			}
		}
	}
	return out
}

// importItems is what an imported session file holds, in file order, read
// as plain JSON: texts of prompts and of context the agent injected, assistant
// texts and calls, results (kept ones too), compaction summaries.
func importItems(t *testing.T, data []byte) []item {
	t.Helper()
	var out []item
	add := func(kind, val string) {
		if val != "" {
			out = append(out, item{kind, val})
		}
	}
	texts := func(kind string, content any) {
		if s, ok := content.(string); ok {
			add(kind, s)
			return
		}
		blocks, _ := content.([]any)
		for _, b := range blocks {
			b, _ := b.(map[string]any)
			switch b["type"] {
			case "text":
				s, _ := b["text"].(string)
				add(kind, s)
			case "toolCall":
				add("call", fmt.Sprintf("%v %v", b["name"], b["id"]))
			}
		}
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		switch e["type"] {
		case "message":
			m, _ := e["message"].(map[string]any)
			switch m["role"] {
			case "user":
				texts("user", m["content"])
			case "assistant":
				texts("text", m["content"])
			case "toolResult":
				add("result", fmt.Sprint(m["toolCallId"]))
			}
		case "custom_message":
			texts("user", e["content"])
		case "custom":
			if d, ok := e["data"].(map[string]any); ok && e["customType"] == "import.orphan_tool_result" {
				add("result", fmt.Sprint(d["toolCallId"]))
			}
		case "compaction":
			s, _ := e["summary"].(string)
			add("summary", s)
		}
	}
	return out
}

// checkItems fails for every item of the source the import lacks, and for
// any of one kind that the import holds in another order.
func checkItems(t *testing.T, name string, src, imp []item) {
	t.Helper()
	for _, p := range lacking(src, imp) {
		t.Errorf("%s: %s", name, p)
	}
}

// lacking lists the items of src that imp lacks or holds out of order.
func lacking(src, imp []item) (out []string) {
	byKind := func(items []item) map[string][]string {
		m := map[string][]string{}
		for _, i := range items {
			m[i.kind] = append(m[i.kind], i.val)
		}
		return m
	}
	have := byKind(imp)
	for kind, want := range byKind(src) {
		got := have[kind]
		j := 0
		for _, w := range want {
			// A summary may be wrapped in what the agent rebuilt the context
			// with (Codex puts the user's messages before it).
			match := func(g string) bool { return g == w || kind == "summary" && strings.Contains(g, w) }
			k := slices.IndexFunc(got[j:], match)
			if k < 0 {
				if slices.ContainsFunc(got, match) {
					out = append(out, fmt.Sprintf("%s %.80q is in the import out of order", kind, w))
				} else {
					out = append(out, fmt.Sprintf("%s %.80q is missing from the import", kind, w))
				}
				continue
			}
			j += k + 1
		}
	}
	return out
}

// foreignFixtures are the Claude Code and Codex files among the fixtures.
func foreignFixtures(t *testing.T) (out []string) {
	for _, f := range fixtures(t) {
		p := filepath.ToSlash(f)
		if strings.HasPrefix(p, "testdata/claude/") || strings.HasPrefix(p, "testdata/codex/") {
			out = append(out, f)
		}
	}
	if len(out) < 8 {
		t.Fatalf("only %d Claude Code and Codex fixtures", len(out))
	}
	return out
}

// TestImportHoldsEverything: every prompt, assistant text, tool call and
// result, and compaction summary of each Claude Code and Codex fixture is in
// its import, in order.
func TestImportHoldsEverything(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(t.TempDir(), "5eed0000-1111-4222-8333-944445555666.jsonl")
	if err := os.WriteFile(report, []byte(reportSource), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(foreignFixtures(t), report) {
		s, err := ReadFile(f)
		if f != report {
			s, err = mustRead(t, f), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := Write(s, dir)
		if err != nil {
			t.Fatal(err)
		}
		if w.Pending != 0 {
			t.Errorf("%s: %d entries held back from a complete file", f, w.Pending)
		}
		src := sourceItems(t, Format(s.Header.From.Format), mustFile(t, f))
		checkItems(t, f, src, importItems(t, mustFile(t, w.Path)))
	}
}

// TestCheckItemsNotices: the comparison fails when an item is dropped.
func TestCheckItemsNotices(t *testing.T) {
	f := "testdata/claude/real-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a36efb2a1231c41e2.jsonl"
	src := sourceItems(t, Claude, mustFile(t, f))
	if len(src) < 3 {
		t.Fatalf("%s gives only %v", f, src)
	}
	imp := importItems(t, mustRead(t, f).Bytes())
	for i := range src {
		k := slices.Index(imp, src[i])
		if k < 0 {
			t.Fatalf("%v is not in the import", src[i])
		}
		if len(lacking(src, slices.Delete(slices.Clone(imp), k, k+1))) == 0 {
			t.Errorf("dropping %v went unnoticed", src[i])
		}
	}
}

// reportSource is a Claude Code subagent that ends the way real ones do: its
// final report written as two lines of one response with no stop reason, then
// a compaction whose summary is the last line.
const reportSource = `{"parentUuid":null,"isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:00.000Z","type":"user","message":{"role":"user","content":"Survey the repository"},"uuid":"u1"}
{"parentUuid":"u1","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:01.000Z","type":"assistant","requestId":"r1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"stop_reason":null},"uuid":"a1"}
{"parentUuid":"a1","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:02.000Z","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"README.md\nmain.go","is_error":false}]},"uuid":"t1"}
{"parentUuid":"t1","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:03.000Z","type":"assistant","requestId":"r2","message":{"id":"m2","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"thinking","thinking":"Two files.","signature":"sig"}],"stop_reason":null},"uuid":"a2"}
{"parentUuid":"a2","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:04.000Z","type":"assistant","requestId":"r2","message":{"id":"m2","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"## Report\nThe repository holds README.md and main.go."}],"stop_reason":null},"uuid":"a3"}
{"parentUuid":"a3","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:05.000Z","type":"assistant","requestId":"r2","message":{"id":"m2","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"README.md"}}],"stop_reason":null},"uuid":"a4"}
{"parentUuid":"a4","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:06.000Z","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"# app","is_error":false}]},"uuid":"t2"}
{"parentUuid":"t2","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:07.000Z","type":"assistant","requestId":"r3","message":{"id":"m3","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"Final report: README.md says '# app'."}],"stop_reason":null},"uuid":"a5"}
{"parentUuid":null,"logicalParentUuid":"a5","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:08.000Z","type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":1200},"uuid":"c1"}
{"parentUuid":"c1","isSidechain":true,"sessionId":"5eed0000-1111-4222-8333-944445555666","cwd":"/work/app","timestamp":"2026-05-01T10:00:09.000Z","type":"user","isCompactSummary":true,"message":{"role":"user","content":"<summary>The agent surveyed the repository: README.md and main.go.</summary>"},"uuid":"s1"}
`

// TestHeldBackOnlyWhileTorn: a source imported after every line and after
// every half line. A torn last line is held back, and only it; each complete
// line is in the import at once, the final response and the final summary
// too; at the end the import holds what a fresh import of the whole file
// holds, each entry once.
func TestHeldBackOnlyWhileTorn(t *testing.T) {
	sources := map[string][]byte{"5eed0000-1111-4222-8333-944445555666.jsonl": []byte(reportSource)}
	for _, f := range foreignFixtures(t) {
		sources[f] = mustFile(t, f)
	}
	for name, data := range sources {
		if len(data) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, filepath.Base(name))
			format := Claude
			if strings.Contains(name, "codex") {
				format = Codex
			}
			out := filepath.Join(tmp, "out")
			path := filepath.Join(out, "none")
			ls := bytes.SplitAfter(data, []byte("\n"))
			for i, l := range ls {
				if len(bytes.TrimSpace(l)) == 0 {
					continue
				}
				done := bytes.Join(ls[:i], nil)
				for _, step := range [][]byte{append(slices.Clone(done), l[:len(l)/2]...), append(slices.Clone(done), l...)} {
					if err := os.WriteFile(src, step, 0o600); err != nil {
						t.Fatal(err)
					}
					s, err := Read(format, Input{Path: src, Data: step})
					if err != nil {
						t.Fatal(err)
					}
					s.Header.Timestamp = "2026-05-01T10:00:00.000Z" // a prefix may not have the source's yet
					w, err := Write(s, out)
					if err != nil {
						t.Fatal(err)
					}
					torn := !bytes.HasSuffix(step, []byte("\n")) && !json.Valid(bytes.TrimSpace(l[:len(l)/2]))
					if want := map[bool]int{true: 1}[torn]; w.Pending != want {
						t.Errorf("line %d (%d bytes): %d entries held back, want %d", i+1, len(step), w.Pending, want)
					}
					path = w.Path
					if !torn {
						complete := step[:bytes.LastIndexByte(step, '\n')+1]
						for _, p := range lacking(sourceItems(t, format, complete), importItems(t, mustFile(t, path))) {
							t.Errorf("after line %d: %s", i+1, p)
						}
					}
				}
			}
			s, err := Read(format, Input{Path: src, Data: data})
			if err != nil {
				t.Fatal(err)
			}
			s.Header.Timestamp = "2026-05-01T10:00:00.000Z"
			fresh, err := Write(s, filepath.Join(tmp, "fresh"))
			if err != nil {
				t.Fatal(err)
			}
			if fresh.Pending != 0 {
				t.Errorf("a complete file had %d entries held back", fresh.Pending)
			}
			checkGrown(t, name, mustFile(t, path), mustFile(t, fresh.Path))
			checkToolResults(t, name, session.Load(mustFile(t, path)))
		})
	}
}
