package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/google/go-cmp/cmp"
)

// chainSession is a long session written and compacted by pi itself.
var chainSession = filepath.Join("..", "..", "compaction", "testdata", "pi", "sessions", "chain-1.jsonl")

func TestCompactDryRunEqualsPi(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "compaction", "testdata", "pi", "expected16", "chain-1.prepare-4000.json"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(chainSession)
	r := runArbor(t, "", "compact", chainSession, "--dry-run", "--json", "--keep-recent-tokens", "4000")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if r.out != string(want) {
		t.Errorf("plan differs from pi's:\n%s", cmp.Diff(string(want), r.out))
	}
	if after, _ := os.ReadFile(chainSession); string(after) != string(before) {
		t.Error("--dry-run wrote to the session")
	}
	r = runArbor(t, "", "compact", chainSession, "--dry-run", "--keep-recent-tokens", "4000")
	if r.code != 0 || !strings.Contains(r.out, "keep from       ") || !strings.Contains(r.out, "updates         the previous compaction's summary") {
		t.Errorf("human plan: exit %d\n%s", r.code, r.out)
	}
}

func TestCompactAndUndo(t *testing.T) {
	f := copyFile(t, chainSession, t.TempDir())
	before := contextJSON(t, f)
	r := runArbor(t, "", "compact", f, "--keep-recent-tokens", "2000", "--summarizer", "mechanical")
	id := strings.TrimSpace(r.out)
	if r.code != 0 || len(id) != 8 {
		t.Fatalf("exit %d, out %q: %s", r.code, r.out, r.err)
	}
	if leafOf(t, f) != id {
		t.Errorf("leaf %s, want the compaction %s", leafOf(t, f), id)
	}
	var ctx struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal([]byte(contextJSON(t, f)), &ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Messages[0]["role"] != "compactionSummary" || !strings.HasPrefix(ctx.Messages[0]["summary"].(string), "## ") {
		t.Errorf("context starts with %v", ctx.Messages[0]["role"])
	}

	r = runArbor(t, "", "show", f, id)
	if r.code != 0 || !strings.Contains(r.out, "rolls forward compaction ") || !strings.Contains(r.out, "\nsummary:\n## ") || !strings.Contains(r.out, "replaced ") {
		t.Errorf("show: exit %d\n%s%s", r.code, r.out, r.err)
	}
	var shown showResult
	r = runArbor(t, "", "show", f, id, "--json")
	if err := json.Unmarshal([]byte(r.out), &shown); err != nil || len(shown.Replaced) == 0 || len(shown.Kept) == 0 || shown.Previous == nil {
		t.Errorf("show --json: %v %+v", err, shown)
	}

	r = runArbor(t, "", "compact", f, "--undo", "--json")
	var u undoResult
	if err := json.Unmarshal([]byte(r.out), &u); err != nil || r.code != 0 || u.Compaction != id || u.From != id {
		t.Fatalf("undo: exit %d %s %+v", r.code, r.err, u)
	}
	if got := contextJSON(t, f); got != before {
		t.Error("undo did not restore the context")
	}
	r = runArbor(t, "", "compact", f, "--undo")
	if r.code != 0 {
		t.Fatalf("undoing pi's own last compaction: exit %d %s", r.code, r.err)
	}
	for range 5 {
		r = runArbor(t, "", "compact", f, "--undo")
	}
	if r.code != 1 || !strings.Contains(r.err, "nothing to undo in "+f) {
		t.Errorf("undo with no compaction left: exit %d %q", r.code, r.err)
	}
}

func TestCompactErrors(t *testing.T) {
	dir := t.TempDir()
	f := copyFile(t, chainSession, dir)
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"unknown summarizer", []string{"compact", f, "--summarizer", "magic"}, 2, "--summarizer must be mechanical or model"},
		{"undo with plan flags", []string{"compact", f, "--undo", "--dry-run"}, 2, "--undo takes no other compaction flags"},
		{"negative keep", []string{"compact", f, "--keep-recent-tokens", "-1"}, 2, "--keep-recent-tokens must be a number of tokens of at least 0, not -1"},
		{"missing file", []string{"compact", filepath.Join(dir, "nope.jsonl")}, 1, "no such session file"},
		{"model not configured", []string{"compact", f, "--summarizer", "model"}, 1, "no model configured"},
		{"everything fits", []string{"compact", f, "--keep-recent-tokens", "100000000"}, 1, "nothing to summarize in " + f},
		{"show unknown entry", []string{"show", f, "zzzzzzzz"}, 1, `no entry "zzzzzzzz"`},
	}
	t.Setenv("ARBOR_MODEL_BASE_URL", "")
	t.Setenv("ARBOR_MODEL", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(f)
			r := runArbor(t, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.err, tt.err) {
				t.Errorf("exit %d %q, want %d and %q", r.code, r.err, tt.code, tt.err)
			}
			if after, _ := os.ReadFile(f); string(after) != string(before) {
				t.Error("the session changed")
			}
		})
	}
}

// pi keeps a tool result without its call after an extension's compaction;
// compacting again repairs the context even with nothing new to summarize.
func TestCompactRepairsOrphan(t *testing.T) {
	f := copyFile(t, filepath.Join("..", "..", "compaction", "testdata", "pi", "sessions", "orphan-1.jsonl"), t.TempDir())
	r := runArbor(t, "", "compact", f, "--dry-run", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"movedFrom":"`) {
		t.Fatalf("plan: exit %d %s %s", r.code, r.out, r.err)
	}
	if r = runArbor(t, "", "compact", f); r.code != 0 {
		t.Fatalf("compact: exit %d %s", r.code, r.err)
	}
	var ctx struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"toolCallId"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(contextJSON(t, f)), &ctx); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range ctx.Messages {
		roles = append(roles, m.Role)
	}
	if want := "compactionSummary assistant toolResult toolResult"; strings.Join(roles, " ") != want {
		t.Errorf("context %v, want %s", roles, want)
	}
}

func TestCompactWithModel(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"rate limited"}}`, status)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "## Goal\nfrom the model"}}}})
	}))
	defer srv.Close()
	f := copyFile(t, chainSession, t.TempDir())
	t.Setenv("ARBOR_MODEL_BASE_URL", srv.URL)
	t.Setenv("ARBOR_MODEL", "fake")

	status = http.StatusTooManyRequests
	before, _ := os.ReadFile(f)
	r := runArbor(t, "", "compact", f, "--keep-recent-tokens", "2000")
	if r.code != 1 || !strings.Contains(r.err, "rate limited") || !strings.Contains(r.err, "nothing was appended") {
		t.Errorf("failing model: exit %d %q", r.code, r.err)
	}
	if after, _ := os.ReadFile(f); string(after) != string(before) {
		t.Error("a failed summary changed the file")
	}

	status = http.StatusOK
	r = runArbor(t, "", "compact", f, "--keep-recent-tokens", "2000", "--json")
	var res compactResult
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Summarizer != "model fake" {
		t.Fatalf("exit %d %s %+v", r.code, r.err, res)
	}
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var c session.CompactionData
	_ = l.Entry(res.ID).Decode(&c)
	if !strings.HasPrefix(c.Summary, "## Goal\nfrom the model") {
		t.Errorf("summary %q", c.Summary)
	}
}

func TestBranchSummarize(t *testing.T) {
	f := copyFile(t, chainSession, t.TempDir())
	l, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	path := l.PathTo("")
	target := path[len(path)/2].ID
	left := l.Leaf().ID
	r := runArbor(t, "", "branch", f, target, "--summarize", "--summarizer", "mechanical", "--json")
	var res branchResult
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Summary == nil {
		t.Fatalf("exit %d %s %s", r.code, r.err, r.out)
	}
	if leafOf(t, f) != *res.Summary || *res.Leaf != *res.Summary {
		t.Errorf("leaf %s, want the summary %s", leafOf(t, f), *res.Summary)
	}
	l, _ = jsonl.Read(f)
	e := l.Entry(*res.Summary)
	var bs session.BranchSummaryData
	_ = e.Decode(&bs)
	if e.ParentID != target || bs.FromID != left || !strings.HasPrefix(bs.Summary, "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n") {
		t.Errorf("branch summary %s: parent %s fromId %s summary %.80q", e.ID, e.ParentID, bs.FromID, bs.Summary)
	}
}

func TestCompactWindowAndOlderThan(t *testing.T) {
	f := copyFile(t, chainSession, t.TempDir())
	before, _ := os.ReadFile(f)
	r := runArbor(t, "", "compact", f, "--window", "200000", "--json")
	if r.code != 0 || r.out != `{"compacted":false,"tokens":40080,"window":200000,"reserve":16384}`+"\n" {
		t.Errorf("under the window: exit %d %q %s", r.code, r.out, r.err)
	}
	if after, _ := os.ReadFile(f); string(after) != string(before) {
		t.Error("a compaction that was not needed changed the file")
	}
	r = runArbor(t, "", "compact", f, "--older-than", "3000", "--keep-recent-tokens", "5")
	if r.code != 2 {
		t.Errorf("--older-than with --keep-recent-tokens: exit %d", r.code)
	}
	r = runArbor(t, "", "compact", f, "--older-than", "100000000")
	if r.code != 1 || !strings.Contains(r.err, "less than --older-than 100000000 tokens") {
		t.Errorf("threshold too high: exit %d %q", r.code, r.err)
	}
	r = runArbor(t, "", "compact", f, "--older-than", "3000", "--window", "50000", "--json")
	var res compactResult
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Summarized == 0 {
		t.Fatalf("over the window: exit %d %s %s", r.code, r.out, r.err)
	}
}
