package window

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fileUsage sums the usage of every assistant message in a file, read with
// encoding/json and nothing of arbor's.
func fileUsage(t *testing.T, path string) (APIUsage, int) {
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var u APIUsage
	entries := 0
	sc := bufio.NewScanner(bytes.NewReader(f))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v struct {
			Type    string `json:"type"`
			Message struct {
				Role  string `json:"role"`
				Usage *struct {
					Input, Output, CacheRead, CacheWrite, TotalTokens float64
					Cost                                              struct{ Total float64 }
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &v) != nil || v.Type == "session" {
			continue
		}
		entries++
		if v.Type == "message" && v.Message.Role == "assistant" && v.Message.Usage != nil {
			m := v.Message.Usage
			u.Input += m.Input
			u.Output += m.Output
			u.CacheRead += m.CacheRead
			u.CacheWrite += m.CacheWrite
			u.TotalTokens += m.TotalTokens
			u.Cost += m.Cost.Total
			u.Requests++
		}
	}
	return u, entries
}

func TestStatsAgreeWithTheFile(t *testing.T) {
	for _, name := range []string{"coding.jsonl", "long.jsonl", "dangling.jsonl"} {
		t.Run(name, func(t *testing.T) {
			path := "testdata/" + name
			l := load(t, name)
			s := Measure(l.Cursor(""), StatsOptions{Window: 100000, Reserve: 10000})
			u, entries := fileUsage(t, path)
			if diff := cmp.Diff(u, s.APIUsage, cmpopts.IgnoreUnexported(APIUsage{}), cmpopts.IgnoreFields(APIUsage{}, "ByModel"), cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
				t.Errorf("apiUsage (-file +stats):\n%s", diff)
			}
			if s.EntryCount != entries || s.PathEntryCount != entries {
				t.Errorf("entries %d on path %d, file has %d", s.EntryCount, s.PathEntryCount, entries)
			}
			ctx := l.Context()
			sum := 0
			for _, m := range ctx.Messages {
				sum += DefaultEstimator.Message(m)
			}
			// the dangling fixture gains the error result that closes its last call
			if s.MessageCount != len(ctx.Messages) && !(name == "dangling.jsonl" && s.MessageCount == len(ctx.Messages)+1) {
				t.Errorf("messageCount %d, context has %d", s.MessageCount, len(ctx.Messages))
			}
			role := s.RoleTokens.User + s.RoleTokens.Assistant + s.RoleTokens.Tool + s.RoleTokens.System
			res := s.ResolutionTokens.Full + s.ResolutionTokens.Outlined + s.ResolutionTokens.Summarized + s.ResolutionTokens.Pinned
			ph := s.PhaseTokens.Exploration + s.PhaseTokens.Execution + s.PhaseTokens.Verification + s.PhaseTokens.Conclusion + s.PhaseTokens.Unclassified
			if role != res || res != ph || (name != "dangling.jsonl" && role != sum) {
				t.Errorf("by role %d, by resolution %d, by phase %d, messages %d", role, res, ph, sum)
			}
			// Each breakdown, with what the provider counted beyond the messages, makes the tokens used.
			if role+s.BeyondMessages != s.EstimatedUsed {
				t.Errorf("by role %d + beyond the messages %d = %d, want estimatedUsed %d", role, s.BeyondMessages, role+s.BeyondMessages, s.EstimatedUsed)
			}
			// pi's estimate: the last good assistant's usage plus what came after.
			var want int
			var anchor string
			for i := len(ctx.Messages) - 1; i >= 0; i-- {
				m := ctx.Messages[i]
				msg, _ := session.ParseMessage(m.Raw)
				d, _ := msg.Data()
				if d.Role == "assistant" && d.Usage != nil && d.StopReason != "error" && d.StopReason != "aborted" {
					anchor = m.Entry.ID
					want += int(d.Usage.TotalTokens)
					break
				}
				want += DefaultEstimator.Message(m)
			}
			if name == "dangling.jsonl" {
				// the error result that closes the unanswered call comes after the anchor
				last := ctx.Messages[len(ctx.Messages)-1]
				msg, _ := session.ParseMessage(last.Raw)
				d, _ := msg.Data()
				b := d.Content.Blocks[0]
				want += (&planner{est: &DefaultEstimator}).closing(toolBlock{b.ID, call{name: b.Name}}, timestampOf(last.Raw)).tokens
			}
			if s.UsageAnchor != anchor || s.EstimatedUsed != want {
				t.Errorf("estimatedUsed %d anchored on %s, want %d on %s", s.EstimatedUsed, s.UsageAnchor, want, anchor)
			}
			if s.PromptBudget != 90000 || s.EstimatedRemaining != max(0, 90000-s.EstimatedUsed) {
				t.Errorf("budget %d remaining %d", s.PromptBudget, s.EstimatedRemaining)
			}
		})
	}
}

func TestStatsFollowResolutions(t *testing.T) {
	l := load(t, "coding.jsonl")
	ctx := l.Context()
	c := l.Cursor("")
	var pinned, outlined string
	for _, m := range ctx.Messages {
		if m.Role == session.RoleToolResult {
			if pinned == "" {
				pinned = m.Entry.ID
			} else if outlined == "" {
				outlined = m.Entry.ID
			}
		}
	}
	if err := c.SetResolution(pinned, session.Resolution{Level: session.Pinned}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetResolution(outlined, session.Resolution{Level: session.Outlined}); err != nil {
		t.Fatal(err)
	}
	s := Measure(c, StatsOptions{})
	if s.ResolutionTokens.Pinned == 0 || s.ResolutionTokens.Outlined == 0 {
		t.Errorf("resolution tokens %+v", s.ResolutionTokens)
	}
	if s.UsageAnchor != "" {
		t.Errorf("anchored on %s although an earlier entry is outlined", s.UsageAnchor)
	}
	if s.ContextWindow != DefaultWindow || s.CompletionReserve != DefaultReserve {
		t.Errorf("defaults %d %d", s.ContextWindow, s.CompletionReserve)
	}
}

func TestPhases(t *testing.T) {
	l := load(t, "coding.jsonl")
	s := Measure(l.Cursor(""), StatsOptions{})
	p := s.PhaseTokens
	// The fixture's tools, phased by hand: reading and searching explore,
	// edits execute, go test after an edit verifies, the final reply concludes.
	want := PhaseTokens{}
	byCall := map[string]Phase{}
	for _, m := range l.Context().Messages {
		d, _ := data(m.Raw)
		n := DefaultEstimator.Message(m)
		switch m.Role {
		case session.RoleUser:
			want.Unclassified += n
		case session.RoleAssistant:
			ph := Conclusion
			for _, b := range d.Content.Blocks {
				if b.Type == "toolCall" {
					ph = map[string]Phase{"read": Exploration, "grep": Exploration, "edit": Execution, "bash": Verification}[b.Name]
					byCall[b.ID] = ph
				}
			}
			want.add(ph, n)
		case session.RoleToolResult:
			want.add(byCall[d.ToolCallID], n)
		}
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("phase tokens (-by hand +Measure):\n%s", diff)
	}
	if p.Exploration == 0 || p.Execution == 0 || p.Verification == 0 || p.Conclusion == 0 {
		t.Errorf("phases %+v: every phase of a fix-and-test session should have tokens", p)
	}
	if p.Unclassified > s.RoleTokens.User {
		t.Errorf("unclassified %d is more than the user's requests %d", p.Unclassified, s.RoleTokens.User)
	}
	c := DefaultClassifier()
	for _, tc := range []struct {
		tool, cmd string
		edited    bool
		want      Phase
	}{
		{"read", "", false, Exploration},
		{"read_file", "", true, Exploration},
		{"edit", "", false, Execution},
		{"write_file", "", false, Execution},
		{"bash", "go test ./...", true, Verification},
		{"bash", "go test ./...", false, Exploration},
		{"bash", "cd pkg && go test -run X .", true, Verification},
		{"bash", "ls -la | head", true, Exploration},
		{"bash", "git diff HEAD~1", true, Exploration},
		{"bash", "rm -rf build && mkdir build", false, Execution},
		{"bash", "/usr/bin/grep -rn foo .", false, Exploration},
		{"run_command", "cargo test", true, Verification},
		{"cargo_check", "", true, Verification},
		{"cargo_check", "", false, Exploration},
		{"my_tool", "", false, Unclassified},
	} {
		if got := c.Tool(tc.tool, tc.cmd, tc.edited); got != tc.want {
			t.Errorf("%s %q (edited %v) = %s, want %s", tc.tool, tc.cmd, tc.edited, got, tc.want)
		}
	}
}

func TestLoadClassifier(t *testing.T) {
	path := t.TempDir() + "/phases.json"
	os.WriteFile(path, []byte(`{"tools":{"my_tool":"execution"},"commands":{"bazel test":"verification"}}`), 0o600)
	c, err := LoadClassifier(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tool("my_tool", "", false) != Execution || c.Tool("bash", "bazel test //...", true) != Verification || c.Tool("read", "", false) != Exploration {
		t.Error("file does not lay over the defaults")
	}
	os.WriteFile(path, []byte(`{"tools":{"x":"thinking"}}`), 0o600)
	if _, err := LoadClassifier(path); err == nil {
		t.Error("unknown phase accepted")
	}
}

// FileUsage's byte search finds usage written with escapes too.
func TestFileUsageEscapedName(t *testing.T) {
	data := `{"type":"session","version":3,"id":"s","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","\u0075sage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.5}},"stopReason":"stop","timestamp":1}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-12-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.5}},"stopReason":"stop","timestamp":2}}
`
	u := FileUsage(session.Load([]byte(data)))
	if u.Requests != 2 || u.TotalTokens != 6 || u.Cost != 1 {
		t.Errorf("FileUsage = %+v, want 2 requests, 6 tokens, $1", u)
	}
}

// TestFileUsageOnEveryCore: read a run at a time on every core, the usage
// sums are those of adding each entry's record in the file's order, to the
// last bit, whatever the run size.
func TestFileUsageOnEveryCore(t *testing.T) {
	logs := realisticSessions(t)
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := "null"
	for i := range 3000 {
		id := fmt.Sprintf(`"m%d"`, i)
		fmt.Fprintf(&b, `{"type":"message","id":%s,"parentId":%s,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m%d","usage":{"input":%d,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":%v}},"stopReason":"stop","timestamp":1}}`+"\n",
			id, parent, i%3, i, 0.1+float64(i)/7)
		parent = id
	}
	logs["3,000 replies of three models"] = session.Load([]byte(b.String()))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(n int) { usageRun = n }(usageRun)
	for name, l := range logs {
		var want APIUsage
		for _, e := range l.Entries() {
			if key, m, ok := e.UsageRecord(); ok {
				want.add(key, m)
			}
		}
		want.finish()
		for _, run := range []int{1, 7, 4096} {
			usageRun = run
			if got := FileUsage(l); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, runs of %d: FileUsage = %+v, want %+v", name, run, got, want)
			}
		}
	}
}

// TestMeasureMatchesBuild: Measure builds the context a chunk of messages at
// a time and keeps only sums; at any chunk size, on every realistic session,
// with and without levels a cursor stamped, and when call ids repeat (the
// later call wins), its sums and anchor are those of the messages Build gives.
func TestMeasureMatchesBuild(t *testing.T) {
	logs := realisticSessions(t)
	logs["repeated call ids"] = repeatedCallIDs(t)
	o := StatsOptions{Estimator: &DefaultEstimator, Classifier: DefaultClassifier()}
	for name, l := range logs {
		c := l.Cursor("")
		for _, stamped := range []bool{false, true} {
			if stamped {
				stampSome(c)
			}
			ctx, stamps := c.ContextWithResolutions()
			res, err := Build(ctx, stamps, Options{Estimator: o.Estimator})
			if err != nil {
				t.Fatal(err)
			}
			var path []*session.Entry
			if leaf := c.Leaf(); leaf != nil {
				path = l.PathTo(leaf.ID)
			}
			invalidated := -1
			for i, e := range path {
				if e.Type == session.TypeCompaction || e.Type == session.TypeContextEdit {
					invalidated = i
				}
			}
			want, wantSum := builtSums(o, res)
			wantID, wantTokens, wantOK := builtAnchor(res, path, invalidated)
			for _, chunk := range []int{1, 2, 7, measureChunk} {
				var got Stats
				tl := o.measure(ctx, stamps, &got, chunk)
				if sumsOf(got) != sumsOf(want) || tl.sum != wantSum {
					t.Errorf("%s (stamped %v, chunk %d): measured %+v (%d tokens), built %+v (%d)", name, stamped, chunk, sumsOf(got), tl.sum, sumsOf(want), wantSum)
				}
				id, tokens, ok := tl.anchor(path, invalidated)
				if id != wantID || tokens != wantTokens || ok != wantOK {
					t.Errorf("%s (stamped %v, chunk %d): anchor %s %d %v, built %s %d %v", name, stamped, chunk, id, tokens, ok, wantID, wantTokens, wantOK)
				}
			}
		}
	}
}

// sums are the fields of Stats summed over the messages.
type sums struct {
	n          int
	role       RoleTokens
	resolution ResolutionTokens
	phase      PhaseTokens
	compaction int
}

func sumsOf(s Stats) sums {
	return sums{s.MessageCount, s.RoleTokens, s.ResolutionTokens, s.PhaseTokens, s.CompactionTokens}
}

// stampSome outlines every third tool result, summarizes every fifth
// assistant message and pins every seventh message of c's context.
func stampSome(c *session.Cursor) {
	for i, m := range c.Context().Messages {
		if m.Entry == nil {
			continue
		}
		lv := session.Level("")
		switch {
		case m.Role == session.RoleToolResult && i%3 == 0:
			lv = session.Outlined
		case m.Role == session.RoleAssistant && i%5 == 0:
			lv = session.Summarized
		case i%7 == 0:
			lv = session.Pinned
		}
		if lv != "" {
			_ = c.SetResolution(m.Entry.ID, session.Resolution{Level: lv}) // metadata cannot be stamped
		}
	}
}

// repeatedCallIDs is a session whose tool call ids repeat, as some providers
// number them: the outline of an early result names the later call's argument.
func repeatedCallIDs(t *testing.T) *session.Log {
	t.Helper()
	l := session.New("/p")
	add := func(_ *session.Entry, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		command := "ls " + strings.Repeat("d", i+1)
		if i == 5 {
			command = "rm -rf build" // the call every call_0 is classified by
		}
		add(l.AppendUser(fmt.Sprintf("step %d", i)))
		add(l.AppendAssistant(session.Assistant{Content: []session.Block{session.ToolCallBlock("call_0", "bash", map[string]string{"command": command})}, StopReason: "toolUse", Usage: session.Usage{Input: 100, Output: float64(i + 1)}}))
		if i != 3 { // one call is never answered: a closing result names its tool
			add(l.AppendToolResult(session.ToolResult{ToolCallID: "call_0", ToolName: "bash", Content: []session.Block{session.TextBlock(strings.Repeat("a file\n", 40))}}))
		}
	}
	return l
}

// builtSums is what Measure sums, summed over the messages Build gave.
func builtSums(o StatsOptions, res *Result) (Stats, int) {
	var s Stats
	t := &tally{s: &s, phases: phaser{o: o, calls: callsOfResult(res), byCall: map[string]Phase{}}}
	for _, m := range res.Messages {
		t.add(m)
	}
	return s, t.sum
}

// callsOfResult indexes the calls of the messages as logged, as the planner does.
func callsOfResult(res *Result) callIndex {
	cs := callIndex{}
	for _, m := range res.Messages {
		if m.orig != nil && m.orig.assistant {
			cs.addBlocks(m.orig.calls)
		}
	}
	return cs
}

// builtAnchor is the anchor as its definition reads, over the messages Build gave.
func builtAnchor(res *Result, path []*session.Entry, lastCompaction int) (string, int, bool) {
	after := map[string]bool{}
	if lastCompaction >= 0 {
		for _, e := range path[lastCompaction+1:] {
			after[e.ID] = true
		}
	}
	for i := len(res.Messages) - 1; i >= 0; i-- {
		m := res.Messages[i]
		if m.Role != session.RoleAssistant || m.Entry == nil || m.Synthetic {
			continue
		}
		d, ok := data(m.Raw)
		if !ok || d.Usage == nil || d.StopReason == "aborted" || d.StopReason == "error" || contextTokens(*d.Usage) <= 0 {
			continue
		}
		if lastCompaction >= 0 && !after[m.Entry.ID] {
			return "", 0, false
		}
		for _, prev := range res.Messages[:i+1] {
			if prev.Level == session.Outlined || prev.Level == session.Summarized || prev.cut {
				return "", 0, false
			}
		}
		tokens := int(contextTokens(*d.Usage))
		for _, later := range res.Messages[i+1:] {
			tokens += later.Tokens
		}
		return m.Entry.ID, tokens, true
	}
	return "", 0, false
}
