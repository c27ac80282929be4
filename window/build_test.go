package window

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window/blob"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func load(t testing.TB, name string) *session.Log {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return session.Load(b)
}

// pairingErrors lists every tool result not right after its call and every call without a result.
func pairingErrors(msgs []Message) []string {
	var errs []string
	var open []string
	var head map[string]bool
	flush := func(at int) {
		for _, id := range open {
			errs = append(errs, fmt.Sprintf("message %d: call %s has no result", at, id))
		}
		open, head = nil, nil
	}
	for i, m := range msgs {
		d, ok := data(m.Raw)
		if !ok {
			errs = append(errs, fmt.Sprintf("message %d does not parse", i))
			continue
		}
		if d.Role != m.Role {
			errs = append(errs, fmt.Sprintf("message %d: role %q, raw says %q", i, m.Role, d.Role))
		}
		switch m.Role {
		case session.RoleToolResult:
			if !head[d.ToolCallID] {
				errs = append(errs, fmt.Sprintf("message %d: result %s is not right after its call", i, d.ToolCallID))
			}
			delete(head, d.ToolCallID)
			open = slices.DeleteFunc(open, func(id string) bool { return id == d.ToolCallID })
			continue
		case session.RoleAssistant:
			flush(i)
			head = map[string]bool{}
			for _, b := range d.Content.Blocks {
				if b.Type == "toolCall" {
					head[b.ID] = true
					open = append(open, b.ID)
				}
			}
			continue
		}
		flush(i)
	}
	flush(len(msgs))
	return errs
}

func TestDanglingCallIsClosed(t *testing.T) {
	before, err := os.ReadFile("testdata/dangling.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	l := session.Load(before)
	for _, budget := range []int{0, 3000} {
		r, err := Build(l.Context(), nil, Options{Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if errs := pairingErrors(r.Messages); len(errs) > 0 {
			t.Fatalf("budget %d: %v", budget, errs)
		}
		last := r.Messages[len(r.Messages)-1]
		d, _ := data(last.Raw)
		if !last.Synthetic || d.Role != session.RoleToolResult || !d.IsError || d.Content.Text("") != NoResultText || d.ToolName != "bash" {
			t.Errorf("budget %d: last message is %s, want the synthetic error result of the bash call", budget, last.Raw)
		}
		if len(r.Closed) != 1 {
			t.Errorf("budget %d: Closed = %v, want one call", budget, r.Closed)
		}
		llm := r.ForModel()
		if !bytes.Contains(llm[len(llm)-1], []byte(`"isError":true`)) {
			t.Errorf("budget %d: the model-ready messages end with %s", budget, llm[len(llm)-1])
		}
	}
	after, _ := os.ReadFile("testdata/dangling.jsonl")
	if !bytes.Equal(before, after) {
		t.Error("building the context changed the file")
	}
	if n := len(l.Context().Messages); l.Context().Messages[n-1].Role != session.RoleAssistant {
		t.Error("the log's own context gained a message")
	}
}

func TestOrphanResultBecomesUserText(t *testing.T) {
	l := session.New("/p")
	appendJSON(t, l, `{"role":"user","content":"go","timestamp":1}`)
	appendJSON(t, l, `{"role":"toolResult","toolCallId":"gone","toolName":"read","content":[{"type":"text","text":"data"}],"isError":false,"timestamp":2}`)
	appendJSON(t, l, `{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop","timestamp":3}`)
	r, err := Build(l.Context(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Messages[1].Role; got != session.RoleUser {
		t.Fatalf("orphan result rendered as %s", got)
	}
	if !strings.Contains(string(r.Messages[1].Raw), "data") || len(r.Orphans) != 1 {
		t.Errorf("orphan lost its text or was not reported: %s %v", r.Messages[1].Raw, r.Orphans)
	}
}

func appendJSON(t testing.TB, l *session.Log, raw string) *session.Entry {
	t.Helper()
	m, err := session.ParseMessage([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.AppendMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestBudgetCutsLargeResultsAtLineBoundary(t *testing.T) {
	l := session.New("/p")
	var big strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&big, "line %d: héllo wörld ✓ some output here\n", i)
	}
	appendJSON(t, l, `{"role":"user","content":"show the log","timestamp":1}`)
	appendJSON(t, l, `{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cat big.log"}}],"stopReason":"toolUse","timestamp":2}`)
	res := string(marshal(map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": []textBlock{{"text", big.String()}}, "isError": false, "timestamp": 3}))
	appendJSON(t, l, res)
	store := blob.Store{Dir: t.TempDir()}
	r, err := Build(l.Context(), nil, Options{Budget: 8000, Blobs: store})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokens > 8000 || len(r.Cuts) != 1 {
		t.Fatalf("tokens %d, cuts %v", r.Tokens, r.Cuts)
	}
	d, _ := data(r.Messages[2].Raw)
	text := d.Content.Text("")
	body, note, ok := strings.Cut(text, "\n[Output cut to ")
	if !ok {
		t.Fatalf("no note in %q", text[max(0, len(text)-300):])
	}
	if !utf8.ValidString(text) || !strings.HasSuffix(body, "\n") || !strings.HasPrefix(big.String(), body) {
		t.Error("the kept part is not a prefix of whole lines")
	}
	if r.Messages[2].Tokens > 2000 {
		t.Errorf("cut result has %d tokens, want at most a quarter of the budget", r.Messages[2].Tokens)
	}
	if !strings.Contains(note, "of 4000 lines") || !strings.Contains(note, "arbor blob "+r.Cuts[0].Blob) {
		t.Errorf("note %q does not give the size and the blob", note)
	}
	full, err := store.Get(r.Cuts[0].Blob)
	if err != nil || string(full) != big.String() {
		t.Errorf("blob %s does not hold the full output (err %v)", r.Cuts[0].Blob, err)
	}
}

func TestBoundToolResult(t *testing.T) {
	store := blob.Store{Dir: t.TempDir()}
	text := strings.Repeat("0123456789\n", 1000)
	m, _ := session.NewMessage(map[string]any{"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": []textBlock{{"text", text}}, "details": map[string]any{"truncation": nil}, "isError": false})
	out, ref, err := BoundToolResult(m, 500, store)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Raw()) > 1000 {
		t.Errorf("bounded message is %d bytes", len(out.Raw()))
	}
	var v struct {
		Details struct {
			ArborBlob struct {
				Ref   string `json:"ref"`
				Bytes int    `json:"bytes"`
			} `json:"arborBlob"`
		} `json:"details"`
	}
	_ = unmarshal(out.Raw(), &v)
	if v.Details.ArborBlob.Ref != ref || v.Details.ArborBlob.Bytes != len(text) {
		t.Errorf("details.arborBlob = %+v, want %s %d", v.Details.ArborBlob, ref, len(text))
	}
	got, err := store.Get(ref[:20])
	if err != nil || string(got) != text {
		t.Errorf("blob read back by prefix: %v", err)
	}
	small, ref, err := BoundToolResult(m, len(text), store)
	if err != nil || ref != "" || !bytes.Equal(small.Raw(), m.Raw()) {
		t.Error("a result within the bound changed")
	}
}

func TestTenThousandMessagesFitSmallBudgets(t *testing.T) {
	l := session.Load(genSession(9, 1000, false))
	ctx := l.Context()
	if n := len(ctx.Messages); n < 10000 {
		t.Fatalf("generated %d messages, want 10,000 or more", n)
	}
	for _, budget := range []int{3000, 60000} {
		r, err := Build(ctx, nil, Options{Budget: budget})
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if r.Tokens > budget {
			t.Errorf("budget %d: used %d", budget, r.Tokens)
		}
		if errs := pairingErrors(r.Messages); len(errs) > 0 {
			t.Errorf("budget %d: %v", budget, errs[:1])
		}
		if r.LeftOut.Turns == 0 {
			t.Errorf("budget %d: nothing left out of %d messages", budget, len(ctx.Messages))
		}
		notes := 0
		for _, m := range r.Messages {
			if m.Synthetic && m.Role == session.RoleUser {
				notes++
				if !strings.Contains(string(m.Raw), "session still holds them") {
					t.Errorf("note %s", m.Raw)
				}
			}
		}
		if notes != 1 {
			t.Errorf("budget %d: %d notes, want 1", budget, notes)
		}
	}
}

func TestBudgetErrorGivesTheNumbers(t *testing.T) {
	l := load(t, "coding.jsonl")
	_, err := Build(l.Context(), nil, Options{Budget: 20})
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrBudget) {
		t.Fatalf("err = %v, want a *BudgetError", err)
	}
	if be.Budget != 20 || be.Protected <= 20 || !strings.Contains(err.Error(), fmt.Sprint(be.Protected)) {
		t.Errorf("error %q does not give the numbers", err)
	}
}

func TestTwoCursorsResolveOneEntryDifferently(t *testing.T) {
	l := load(t, "coding.jsonl")
	ctx := l.Context()
	var target *session.Entry
	for _, m := range ctx.Messages {
		if m.Role == session.RoleToolResult {
			target = m.Entry
			break
		}
	}
	a := map[string]session.Resolution{target.ID: {Level: session.Outlined}}
	b := map[string]session.Resolution{target.ID: {Level: session.Summarized, Text: "looked at the scanner"}}
	ra, _ := Build(ctx, a, Options{})
	rb, _ := Build(ctx, b, Options{})
	find := func(r *Result) Message {
		for _, m := range r.Messages {
			if m.Entry == target {
				return m
			}
		}
		t.Fatal("entry left out")
		return Message{}
	}
	ma, mb := find(ra), find(rb)
	if ma.Level != session.Outlined || mb.Level != session.Summarized {
		t.Fatalf("levels %s %s", ma.Level, mb.Level)
	}
	da, _ := data(ma.Raw)
	db, _ := data(mb.Raw)
	if !strings.HasPrefix(da.Content.Text(""), "read internal/") || db.Content.Text("") != "looked at the scanner" {
		t.Errorf("outlined %q, summarized %q", da.Content.Text(""), db.Content.Text(""))
	}
}

// The property test draws sessions of user requests, assistant replies with
// tool calls, bash runs and custom messages, pins and stamps some entries,
// and checks the planner's promises for a random budget.
func TestPlannerProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx, res := randomContext(t, 1, 40, 3000)
		budget := rapid.IntRange(1, 20000).Draw(t, "budget")
		o := Options{Budget: budget, ResultShare: 1}
		r, err := Build(ctx, res, o)
		protected := protectedTokens(ctx, res)
		if err != nil {
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("unexpected error %v", err)
			}
			if protected <= budget {
				t.Fatalf("failed although the protected part (%d) fits %d: %v", protected, budget, err)
			}
			return
		}
		if r.Tokens > budget {
			t.Fatalf("used %d of %d", r.Tokens, budget)
		}
		sum := 0
		for _, m := range r.Messages {
			sum += m.Tokens
			if got := DefaultEstimator.Message(m.ContextMessage); got != m.Tokens {
				t.Fatalf("message counted %d, recounted %d", m.Tokens, got)
			}
		}
		if sum != r.Tokens {
			t.Fatalf("messages sum to %d, result says %d", sum, r.Tokens)
		}
		if errs := pairingErrors(r.Messages); len(errs) > 0 {
			t.Fatal(errs)
		}
		cut := map[string]bool{}
		for _, c := range r.Cuts {
			cut[c.EntryID] = true
		}
		kept := map[string]Message{}
		for _, m := range r.Messages {
			if m.Entry != nil {
				kept[m.Entry.ID] = m
			}
		}
		for _, want := range mustKeep(ctx, res) {
			got, ok := kept[want.Entry.ID]
			if !ok {
				t.Fatalf("protected entry %s (%s) left out", want.Entry.ID, want.Role)
			}
			lv := levelOf(want.Entry, res)
			if got.Level != lv || lv != session.Outlined && !cut[want.Entry.ID] && !bytes.Equal(got.Raw, want.Raw) {
				t.Fatalf("protected entry %s changed: %s → %s", want.Entry.ID, lv, got.Level)
			}
		}
		again, _ := Build(ctx, res, o)
		if diff := cmp.Diff(explainJSON(r), explainJSON(again)); diff != "" {
			t.Fatalf("not deterministic: %s", diff)
		}
	})
}

func appendData(t *rapid.T, l *session.Log, v map[string]any) {
	m, err := session.NewMessage(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendMessage(m); err != nil {
		t.Fatal(err)
	}
}

func levelOf(e *session.Entry, res map[string]session.Resolution) session.Level {
	if r, ok := res[e.ID]; ok {
		return r.Level
	}
	return session.Full
}

// turnsOf groups a context the way the package comment defines turns,
// independently of the planner.
func turnsOf(ctx session.Context) [][]session.ContextMessage {
	var out [][]session.ContextMessage
	for _, m := range ctx.Messages {
		if m.Role == session.RoleToolResult && len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], m)
			continue
		}
		out = append(out, []session.ContextMessage{m})
	}
	return out
}

// mustKeep is what the planner may not touch: the first and last user
// requests, the last turn and pinned entries.
func mustKeep(ctx session.Context, res map[string]session.Resolution) []session.ContextMessage {
	turns := turnsOf(ctx)
	var out []session.ContextMessage
	first, last := -1, -1
	for i, t := range turns {
		if t[0].Role == session.RoleUser {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for i, t := range turns {
		for _, m := range t {
			if i == first || i == last || i == len(turns)-1 || levelOf(m.Entry, res) == session.Pinned {
				out = append(out, m)
			}
		}
	}
	return out
}

// protectedTokens is the least the context can shrink to: protected turns
// as they are, turns holding a pinned entry with the rest summarized, and
// the closing results of unanswered calls.
func protectedTokens(ctx session.Context, res map[string]session.Resolution) int {
	keep := map[string]bool{}
	for _, m := range mustKeep(ctx, res) {
		keep[m.Entry.ID] = true
	}
	cs := callsOf(ctx.Messages)
	est := &DefaultEstimator
	n := 0
	for _, t := range turnsOf(ctx) {
		pinnedTurn := false
		for _, m := range t {
			if keep[m.Entry.ID] {
				pinnedTurn = true
			}
		}
		if !pinnedTurn {
			continue
		}
		answered := map[string]bool{}
		for _, m := range t {
			if d, _ := data(m.Raw); m.Role == session.RoleToolResult {
				answered[d.ToolCallID] = true
			}
		}
		if d, _ := data(t[0].Raw); t[0].Role == session.RoleAssistant {
			for _, b := range d.Content.Blocks {
				if b.Type == "toolCall" && !answered[b.ID] {
					n += (&planner{est: est}).closing(toolBlock{b.ID, call{name: b.Name}}, timestampOf(t[0].Raw)).tokens
				}
			}
		}
		for _, m := range t {
			lv := levelOf(m.Entry, res)
			r := renderLevel(m, lv, "", cs)
			if !keep[m.Entry.ID] {
				if s := renderLevel(m, session.Summarized, "", cs); est.Message(s) < est.Message(r) {
					r = s
				}
			}
			n += est.Message(r)
		}
	}
	return n
}

func explainJSON(r *Result) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.Write(m.Raw)
		b.WriteString("\n")
	}
	return b.String() + r.Explain()
}

// randomContext draws a session and a cursor's stamps.
func randomContext(t *rapid.T, minUnits, maxUnits, maxText int) (session.Context, map[string]session.Resolution) {
	l := session.New("/p")
	units := rapid.IntRange(minUnits, maxUnits).Draw(t, "units")
	calls := 0
	text := func(label string) string {
		n := rapid.IntRange(0, maxText).Draw(t, label)
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(rapid.SampledFrom([]string{"word ", "func f() {}\n", "émoji ✓ ", "\n", "x := []int{1, 2}\n"}).Draw(t, label+"w"))
		}
		return b.String()
	}
	for u := range units {
		switch rapid.IntRange(0, 4).Draw(t, "kind") {
		case 0, 1:
			appendData(t, l, map[string]any{"role": "user", "content": text("user"), "timestamp": u})
		case 2:
			k := rapid.IntRange(0, 3).Draw(t, "calls")
			content := []any{map[string]any{"type": "text", "text": text("reply")}}
			var ids []string
			for range k {
				calls++
				id := fmt.Sprintf("call%d", calls)
				ids = append(ids, id)
				content = append(content, map[string]any{"type": "toolCall", "id": id, "name": rapid.SampledFrom([]string{"read", "bash", "edit", "mcp"}).Draw(t, "tool"), "arguments": map[string]any{"path": "a/b.go", "command": "go test ./..."}})
			}
			appendData(t, l, map[string]any{"role": "assistant", "content": content, "stopReason": "toolUse", "timestamp": u})
			for i, id := range ids {
				if u == units-1 && i == len(ids)-1 && rapid.Bool().Draw(t, "crash") {
					break // a crash before the last result
				}
				appendData(t, l, map[string]any{"role": "toolResult", "toolCallId": id, "toolName": "bash", "content": []any{map[string]any{"type": "text", "text": text("result")}}, "isError": rapid.Bool().Draw(t, "err"), "timestamp": u})
			}
		case 3:
			appendData(t, l, map[string]any{"role": "bashExecution", "command": "ls", "output": text("bash"), "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": u})
		case 4:
			if _, err := l.AppendCustomMessage("note", session.TextContent(text("custom")), true, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := l.Context()
	res := map[string]session.Resolution{}
	for _, m := range ctx.Messages {
		switch rapid.IntRange(0, 9).Draw(t, "stamp") {
		case 0:
			res[m.Entry.ID] = session.Resolution{Level: session.Pinned}
		case 1:
			res[m.Entry.ID] = session.Resolution{Level: session.Outlined}
		}
	}
	return ctx, res
}

// TestLeaveOutEarlyChangesNothing checks the shortcut for contexts that must
// lose turns against the planner without it.
func TestLeaveOutEarlyChangesNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx, res := randomContext(t, 50, 200, 200)
		budget := rapid.IntRange(1, 1200).Draw(t, "budget")
		o := Options{Budget: budget}
		fast, ferr := build(ctx, res, o, true)
		slow, serr := build(ctx, res, o, false)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("early %v, without %v", ferr, serr)
		}
		if ferr != nil {
			if diff := cmp.Diff(serr.Error(), ferr.Error()); diff != "" {
				t.Fatal(diff)
			}
			return
		}
		if diff := cmp.Diff(explainJSON(slow), explainJSON(fast)); diff != "" {
			t.Fatalf("(-without +early):\n%s", diff)
		}
		if diff := cmp.Diff(slow.LeftOut, fast.LeftOut); diff != "" {
			t.Fatal(diff)
		}
	})
}

// A reply whose outline saves nothing (its only text is empty) is still
// summarized when that is smaller, and a budget the protected part fits is
// met; one token less gives an error whose parts add up. The case is what
// TestPlannerProperties once drew: a pinned result in a turn whose call
// message outlines to as many tokens as it has.
func TestPlannerSummarizesWhatOutliningCannotShrink(t *testing.T) {
	l := session.New("/p")
	add := func(v map[string]any) string {
		t.Helper()
		m, err := session.NewMessage(v)
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.AppendMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	args := map[string]any{"path": "a/b.go", "command": "go test ./..."}
	add(map[string]any{"role": "user", "content": "fix the scanner", "timestamp": 0})
	add(map[string]any{"role": "assistant", "stopReason": "toolUse", "timestamp": 1, "content": []any{
		map[string]any{"type": "text", "text": ""},
		map[string]any{"type": "toolCall", "id": "call6", "name": "read", "arguments": args},
		map[string]any{"type": "toolCall", "id": "call7", "name": "mcp", "arguments": args},
		map[string]any{"type": "toolCall", "id": "call8", "name": "edit", "arguments": args},
	}})
	var pinned string
	for _, id := range []string{"call6", "call7", "call8"} {
		e := add(map[string]any{"role": "toolResult", "toolCallId": id, "toolName": "bash", "isError": false, "timestamp": 1,
			"content": []any{map[string]any{"type": "text", "text": "func f() {}\n"}}})
		if id == "call7" {
			pinned = e
		}
	}
	add(map[string]any{"role": "user", "content": strings.Repeat("x := []int{1, 2}\n", 40), "timestamp": 2})
	add(map[string]any{"role": "user", "content": "thanks", "timestamp": 3})
	ctx := l.Context()
	res := map[string]session.Resolution{pinned: {Level: session.Pinned}}
	call := ctx.Messages[1]
	cs := callsOf(ctx.Messages)
	full, outlined, summarized := DefaultEstimator.Message(call), DefaultEstimator.Message(renderLevel(call, session.Outlined, "", cs)), DefaultEstimator.Message(renderLevel(call, session.Summarized, "", cs))
	if outlined < full || summarized >= full {
		t.Fatalf("the case no longer holds: full %d, outlined %d, summarized %d", full, outlined, summarized)
	}

	protected := protectedTokens(ctx, res)
	r, err := Build(ctx, res, Options{Budget: protected, ResultShare: 1})
	if err != nil {
		t.Fatalf("the protected part (%d) fits the budget, yet: %v", protected, err)
	}
	if r.Tokens > protected {
		t.Errorf("used %d of %d", r.Tokens, protected)
	}
	if got := r.Messages[1]; got.Entry != call.Entry || got.Level != session.Summarized {
		t.Errorf("the call message is at %s, want summarized", got.Level)
	}

	_, err = Build(ctx, res, Options{Budget: protected - 1, ResultShare: 1})
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a *BudgetError", err)
	}
	parts := be.System + be.First + be.Last + be.LastTurn + be.Pinned + be.Paired
	if be.Protected != protected || parts != be.Protected {
		t.Errorf("needs %d, parts add up to %d, protected part is %d: %v", be.Protected, parts, protected, err)
	}
	if be.NPinned != 1 || be.Paired == 0 {
		t.Errorf("%d pinned entries, the rest of their turns %d: %v", be.NPinned, be.Paired, err)
	}
	for _, n := range []int{be.Protected, be.First, be.LastTurn, be.Pinned, be.Paired} {
		if !strings.Contains(err.Error(), fmt.Sprint(n)) {
			t.Errorf("error %q does not give %d", err, n)
		}
	}
}

// BuildForModel is Build then ForModel, with the same totals, on contexts
// that take several item chunks.
func TestBuildForModelIsBuildThenForModel(t *testing.T) {
	defer func(n int) { itemChunk = n }(itemChunk)
	itemChunk = 16
	rapid.Check(t, func(t *rapid.T) {
		ctx, res := randomContext(t, 1, 200, 200)
		o := Options{Budget: rapid.SampledFrom([]int{0, 300, 3000, 1 << 30}).Draw(t, "budget")}
		want, werr := Build(ctx, res, o)
		got, msgs, err := BuildForModel(ctx, res, o)
		if (werr == nil) != (err == nil) {
			t.Fatalf("Build %v, BuildForModel %v", werr, err)
		}
		if err != nil {
			return
		}
		wantMsgs := want.ForModel()
		if len(msgs) != len(wantMsgs) {
			t.Fatalf("%d messages, want %d", len(msgs), len(wantMsgs))
		}
		for i := range msgs {
			if string(msgs[i]) != string(wantMsgs[i]) {
				t.Fatalf("message %d: %s, want %s", i, msgs[i], wantMsgs[i])
			}
		}
		if got.Messages != nil {
			t.Fatalf("%d built messages kept", len(got.Messages))
		}
		for _, c := range got.Changes { // positions count across the chunks
			if m := ctx.Messages[c.Position]; m.Entry == nil || m.Entry.ID != c.EntryID {
				t.Fatalf("change of %s at position %d, which holds another message (%s)", c.EntryID, c.Position, m.Raw)
			}
		}
		want.Messages = nil
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Message{})); diff != "" {
			t.Fatalf("result (-Build +BuildForModel):\n%s", diff)
		}
	})
}

// After a compaction the kept messages can start with a tool result whose
// call was summarized away (pi before 1.6.0, extensions). The planner turns
// it into user text; it is not the user's first request, which stays whole.
func TestFirstRequestAfterAStrayResult(t *testing.T) {
	l := session.New("/p")
	add := func(v map[string]any) *session.Entry {
		m, err := session.NewMessage(v)
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.AppendMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	big := strings.Repeat("word ", 2000)
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	add(map[string]any{"role": "toolResult", "toolCallId": "summarized-away", "toolName": "bash", "content": text("stray"), "isError": false, "timestamp": 1})
	first := add(map[string]any{"role": "user", "content": "first request " + big, "timestamp": 2})
	add(map[string]any{"role": "assistant", "content": text(big), "timestamp": 3})
	add(map[string]any{"role": "user", "content": "middle " + big, "timestamp": 4})
	add(map[string]any{"role": "assistant", "content": text(big), "timestamp": 5})
	add(map[string]any{"role": "user", "content": "last", "timestamp": 6})
	add(map[string]any{"role": "assistant", "content": text("ok"), "timestamp": 7})
	r, err := Build(l.Context(), nil, Options{Budget: 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Messages {
		if m.Entry != nil && m.Entry.ID == first.ID && m.Level != session.Full {
			t.Errorf("the first request was %s", m.Level)
		}
	}
	_, err = Build(l.Context(), nil, Options{Budget: 1000})
	var be *BudgetError
	if !errors.As(err, &be) || be.First < 2000 {
		t.Errorf("a budget below the first request: %v, want a BudgetError counting it as the first request", err)
	}
}
