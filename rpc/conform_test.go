package rpc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/window"
)

// TestServeEveryMethod calls every method of arbor serve with good
// parameters and checks what a client would notice; a method added to the
// table without a case here fails the test.
func TestServeEveryMethod(t *testing.T) {
	fake := agenttest.New(t, "openai",
		agenttest.Reply{Text: "the answer is blue", Input: 1000, Output: 10},
		agenttest.Reply{Text: "and then green", Input: 1200, Output: 10},
		agenttest.Reply{Text: "summary"}, agenttest.Reply{Text: "prefix"})
	cfg := testConfig(t, fake, t.TempDir())
	c := startServe(t, cfg)
	called := map[string]bool{}
	call := func(method string, params any) map[string]any {
		t.Helper()
		called[method] = true
		return result(t, first(c.call(method, params)))
	}
	call("prompt", map[string]any{"message": "what colour"})
	call("prompt", map[string]any{"message": "and next"})
	es := call("getEntries", nil)["entries"].([]any)
	var user, assistant string
	for _, en := range es {
		m := en.(map[string]any)
		if msg, ok := m["message"].(map[string]any); ok {
			switch {
			case msg["role"] == "user" && user == "":
				user = m["id"].(string)
			case msg["role"] == "assistant" && assistant == "":
				assistant = m["id"].(string)
			}
		}
	}
	state := call("getState", nil)
	path := state["sessionFile"].(string)
	if got := call("getMessages", nil)["messages"].([]any); len(got) != 4 {
		t.Errorf("getMessages: %d", len(got))
	}
	// The context: the last reply's usage (1200 in, 10 out); no window known,
	// so arbor stats' default window.
	if s := call("getSessionStats", nil); s["apiUsage"].(map[string]any)["totalInputTokens"].(float64) != 2200 ||
		s["estimatedUsed"].(float64) != 1210 || s["contextWindow"].(float64) != window.DefaultWindow || s["utilizationPercent"].(float64) != 0 {
		t.Errorf("getSessionStats %v", s)
	}
	if r := call("label", map[string]any{"entryId": user, "label": "start"}); len(r) != 0 {
		t.Errorf("label %v", r)
	}
	tree := call("getTree", nil)
	if !strings.Contains(fmt.Sprint(tree["tree"]), "label:start") {
		t.Errorf("getTree after label: %v", tree)
	}
	ft := call("getTree", map[string]any{"filter": "user"})
	rows := ft["rows"].([]any)
	if len(rows) != 2 || !strings.Contains(rows[0].(map[string]any)["text"].(string), "what colour") || ft["total"].(float64) <= 2 {
		t.Errorf("getTree{filter:user} %v", ft)
	}
	if rows := call("getTree", map[string]any{"filter": "labeled"})["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["entryId"] != user {
		t.Errorf("getTree{filter:labeled} %v", rows)
	}
	errorOf(t, first(c.call("getTree", map[string]any{"filter": "bogus"})), -32602)
	if r := call("pin", map[string]any{"entryId": assistant}); r["level"] != "pinned" && r["level"] != "pin" {
		t.Errorf("pin %v", r)
	}
	if r := call("unpin", map[string]any{"entryId": assistant}); r["level"] == "pinned" {
		t.Errorf("unpin %v", r)
	}
	if r := call("setResolution", map[string]any{"entryId": assistant, "level": "outline", "text": "[blue]"}); r["level"] == "" {
		t.Errorf("setResolution %v", r)
	}
	if !strings.Contains(fmt.Sprint(call("getMessages", nil)), "[blue]") {
		t.Error("the outline does not stand for the entry in getMessages")
	}
	call("setResolution", map[string]any{"entryId": assistant, "level": "unpin"})
	call("setSessionName", map[string]any{"name": "colours"})
	if st := call("getState", nil); st["sessionName"] != "colours" {
		t.Errorf("name %v", st)
	}
	if hits := call("search", map[string]any{"query": "blue"})["hits"].([]any); len(hits) == 0 || hits[0].(map[string]any)["path"] != path {
		t.Errorf("search %v", hits)
	}
	fork := call("fork", map[string]any{"name": "side"})["cursorId"].(string)
	bs := call("listBranches", nil)["branches"].([]any)
	if len(bs) != 2 {
		t.Fatalf("listBranches %v", bs)
	}
	if r := call("nameBranch", map[string]any{"cursorId": fork, "name": "other side"}); r["name"] != "other side" {
		t.Errorf("nameBranch %v", r)
	}
	call("switchBranch", map[string]any{"cursorId": fork})
	for _, b := range call("listBranches", nil)["branches"].([]any) {
		b := b.(map[string]any)
		if (b["cursorId"] == fork) != (b["active"] == true) {
			t.Errorf("after switchBranch: %v", b)
		}
	}
	leaf := call("branchTo", map[string]any{"entryId": assistant, "summary": "we left the green part"})["leafId"].(string)
	if leaf == assistant || !strings.Contains(fmt.Sprint(call("getMessages", nil)), "we left the green part") {
		t.Errorf("branchTo with a summary: leaf %s", leaf)
	}
	if r := call("branchTo", map[string]any{"entryId": user}); r["leafId"] != user {
		t.Errorf("branchTo %v", r)
	}
	call("clear", nil)
	if st := call("getState", nil); st["messageCount"].(float64) != 0 {
		t.Errorf("after clear %v", st)
	}
	call("switchBranch", map[string]any{"cursorId": bs[0].(map[string]any)["cursorId"]})
	call("compact", nil)
	if es := call("getEntries", nil)["entries"].([]any); es[len(es)-1].(map[string]any)["type"] != "compaction" {
		t.Errorf("compact did not append a compaction: %v", es[len(es)-1])
	}
	if u := call("compactUndo", nil); u["compaction"] == "" || u["to"] == "" {
		t.Errorf("compactUndo %v", u)
	}
	if r := call("setModel", map[string]any{"model": "other"}); r["model"] != "other" || r["provider"] != "openai" || r["estimatedUsed"].(float64) <= 0 {
		t.Errorf("setModel %v", r)
	}
	if m := call("listModels", nil)["models"].([]any); fmt.Sprint(m) != "[map[id:fake-model provider:openai] map[id:other provider:openai]]" {
		t.Errorf("listModels %v", m)
	}
	if p := call("listProviders", nil)["providers"].([]any); fmt.Sprint(p) != "[map[active:true isExternal:false name:openai reachable:true]]" {
		t.Errorf("listProviders %v", p)
	}
	if x := call("listExtensions", nil)["extensions"].([]any); len(x) != 0 {
		t.Errorf("listExtensions %v", x)
	}
	if r := call("reloadExtensions", nil); len(r) != 0 {
		t.Errorf("reloadExtensions %v", r)
	}
	called["approvalResponse"] = true
	if e := errorOf(t, first(c.call("approvalResponse", map[string]any{"approved": true})), -32602); !strings.Contains(fmt.Sprint(e["message"]), "no tool approval is pending") {
		t.Errorf("approvalResponse %v", e)
	}
	if tools := call("listTools", nil)["tools"].([]any); len(tools) != 2 || tools[0].(map[string]any)["description"] == "" {
		t.Errorf("listTools %v", tools)
	}
	// rho's mtimeSecs is the file's modification time, not its last message's.
	mtime := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	sessions := call("listSessions", nil)["sessions"].([]any)
	if len(sessions) != 1 || sessions[0].(map[string]any)["path"] != path || sessions[0].(map[string]any)["mtimeSecs"] != float64(mtime.Unix()) {
		t.Errorf("listSessions %v, want mtimeSecs %d", sessions, mtime.Unix())
	}
	ns := call("newSession", nil)
	if ns["path"] == path || ns["sessionId"] == "" {
		t.Errorf("newSession %v", ns)
	}
	if r := call("resumeSession", map[string]any{"path": path}); r["path"] != path || r["model"] != "other" {
		t.Errorf("resumeSession %v", r)
	}
	page := filepath.Join(cfg.Cwd, "colours.html") // in the project: a path outside it is refused
	if r := call("exportHtml", map[string]any{"outputPath": page}); r["path"] != page {
		t.Errorf("exportHtml %v", r)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "the answer is blue") {
		t.Errorf("the exported page lacks the conversation: %v", err)
	}
	e := errorOf(t, first(c.call("exportHtml", map[string]any{"outputPath": page})), -32603)
	if !strings.Contains(fmt.Sprint(e["message"]), "exists") {
		t.Errorf("exportHtml over an existing file: %v", e)
	}
	if r := call("fsck", nil); r["ok"] != true || r["path"] != path || r["entries"].(float64) < 5 {
		t.Errorf("fsck %v", r)
	}
	errorOf(t, first(c.call("rm", map[string]any{"path": path})), -32602) // the session being served
	fake.Add(agenttest.Reply{Text: "ok"})
	call("newSession", nil)
	call("prompt", map[string]any{"message": "a session to remove"})
	doomed := call("getState", nil)["sessionFile"].(string)
	call("resumeSession", map[string]any{"path": path})
	if r := call("rm", map[string]any{"path": doomed}); r["path"] != doomed || r["id"] == "" {
		t.Errorf("rm %v", r)
	}
	if _, err := os.Stat(doomed); !os.IsNotExist(err) {
		t.Errorf("rm left %s: %v", doomed, err)
	}
	errorOf(t, first(c.call("fsck", map[string]any{"path": doomed})), -32602)
	if r := call("restore", map[string]any{"path": doomed}); r["path"] != doomed {
		t.Errorf("restore %v", r)
	}
	if _, err := os.Stat(doomed); err != nil {
		t.Errorf("restore: %v", err)
	}
	call("abort", nil)
	var missing []string
	for m := range (&server{e: &Engine{}}).methods() {
		if !called[m] {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("methods not tested: %v", missing)
	}
}

// TestServeBadParamsEveryMethod sends every method parameters of the wrong
// shape: each answers -32602 and the server goes on.
func TestServeBadParamsEveryMethod(t *testing.T) {
	c := startServe(t, testConfig(t, agenttest.New(t, "openai"), t.TempDir()))
	var names []string
	for m := range (&server{e: &Engine{}}).methods() {
		names = append(names, m)
	}
	slices.Sort(names)
	for _, m := range names {
		e := errorOf(t, first(c.call(m, []any{1, 2, 3})), -32602)
		if e["message"] == "" {
			t.Errorf("%s: %v", m, e)
		}
	}
	result(t, first(c.call("getState", nil)))
}
