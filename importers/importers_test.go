package importers

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/arborlog/arbor/internal/pitest"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/golden")

// fixtures lists every source file under testdata (the goldens excepted).
func fixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "golden" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d fixtures under testdata", len(files))
	}
	return files
}

// mustRead reads a fixture in the format its folder names (testdata/<format>/…):
// an empty file has nothing to detect.
func mustRead(t *testing.T, path string) *Session {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := map[string]Format{"claude": Claude, "codex": Codex, "rho": Rho}[strings.Split(filepath.ToSlash(path), "/")[1]]
	if len(data) > 0 {
		if d, err := Detect(path, data); err != nil || d != f {
			t.Errorf("%s: detected %q (%v), want %q", path, d, err, f)
		}
	}
	s, err := Read(f, Input{Path: path, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// describe is one entry in a golden: its type, role and text.
func describe(e *session.Entry) string {
	var v struct {
		Message struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"toolCallId"`
			Model      string          `json:"model"`
		} `json:"message"`
		CustomType string          `json:"customType"`
		Content    json.RawMessage `json:"content"`
		Summary    string          `json:"summary"`
		ModelID    string          `json:"modelId"`
		Name       string          `json:"name"`
		Origin     Origin          `json:"origin"`
	}
	_ = json.Unmarshal(e.Raw(), &v)
	text := func(c json.RawMessage) string {
		var s string
		if json.Unmarshal(c, &s) == nil {
			return s
		}
		var bs []map[string]any
		_ = json.Unmarshal(c, &bs)
		var parts []string
		for _, b := range bs {
			switch b["type"] {
			case "text":
				parts = append(parts, fmt.Sprint(b["text"]))
			case "thinking":
				parts = append(parts, "(thinking) "+fmt.Sprint(b["thinking"]))
			case "toolCall":
				args, _ := json.Marshal(b["arguments"])
				parts = append(parts, fmt.Sprintf("[call %v %v %s]", b["id"], b["name"], args))
			case "image":
				parts = append(parts, fmt.Sprintf("[image %v]", b["mimeType"]))
			}
		}
		return strings.Join(parts, " ")
	}
	d := e.Type
	switch e.Type {
	case "message":
		d += " " + v.Message.Role
		if v.Message.ToolCallID != "" {
			d += " " + v.Message.ToolCallID
		}
		d += ": " + text(v.Message.Content)
	case "custom", "custom_message":
		d += " " + v.CustomType
		if e.Type == "custom_message" {
			d += ": " + text(v.Content)
		}
	case "compaction", "branch_summary":
		d += ": " + v.Summary
	case "model_change":
		d += ": " + v.ModelID
	case "session_info":
		d += ": " + v.Name
	}
	return fmt.Sprintf("%s (line %d) %s", e.ID, v.Origin.Line, oneLine(d, 110))
}

// render is a golden: the header, the counts, the damage, the tree and the
// context at the leaf.
func render(t *testing.T, s *Session) string {
	t.Helper()
	var b strings.Builder
	abs, _ := filepath.Abs("testdata")
	rel := func(p string) string { return strings.Replace(p, abs, "testdata", 1) }
	h := s.Header
	fmt.Fprintf(&b, "session %s  cwd %s  time %s\n", h.ID, h.Cwd, h.Timestamp)
	fmt.Fprintf(&b, "from %s %s id=%s parent=%s toolCall=%s sidechain=%v\n", h.From.Format, rel(h.From.Path), h.From.ID, h.From.Parent, h.From.ToolCall, h.From.Sidechain)
	for _, o := range h.From.Overlays {
		fmt.Fprintf(&b, "overlay line %d entry %s cursor %q %s\n", o.Line, o.Entry, o.Cursor, o.Resolution)
	}
	if h.ParentSession != "" {
		fmt.Fprintf(&b, "parentSession %s\n", rel(h.ParentSession))
	}
	for _, c := range h.From.Cursors {
		fmt.Fprintf(&b, "cursor %s %q leaf %s\n", c.ID, c.Name, c.Leaf)
	}
	st, _ := json.Marshal(s.Stats)
	fmt.Fprintf(&b, "stats %s\n", st)
	for _, d := range s.Damage {
		fmt.Fprintf(&b, "damage %s\n", d)
	}
	l := s.Log()
	b.WriteString("\ntree:\n")
	var walk func(ns []*session.TreeNode, depth int)
	walk = func(ns []*session.TreeNode, depth int) {
		for _, n := range ns {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), describe(n.Entry))
			walk(n.Children, depth+1)
		}
	}
	walk(l.Tree(), 0)
	b.WriteString("\ncontext:\n")
	for _, m := range l.Context().Messages {
		if m.Entry != nil {
			fmt.Fprintf(&b, "%s\n", describe(m.Entry))
		} else {
			fmt.Fprintf(&b, "(%s)\n", m.Role)
		}
	}
	return b.String()
}

func goldenPath(src string) string {
	rel, _ := filepath.Rel("testdata", src)
	return filepath.Join("testdata", "golden", strings.TrimSuffix(rel, ".jsonl")+".txt")
}

// TestGolden: the imported tree and context of every fixture, as committed.
// go test ./importers -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f, func(t *testing.T) {
			got := render(t, mustRead(t, f))
			gp := goldenPath(f)
			if *update {
				if err := os.MkdirAll(filepath.Dir(gp), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(gp, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gp)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s: import differs from %s (-want +got):\n%s", f, gp, diff)
			}
		})
	}
}

// checkToolResults fails when a tool result does not follow the assistant
// message that made its call (only tool results may stand between them).
func checkToolResults(t *testing.T, name string, l *session.Log) {
	t.Helper()
	for _, e := range l.Entries() {
		if e.Type != "message" || e.Role() != "toolResult" {
			continue
		}
		m, err := e.Message()
		if err != nil {
			t.Fatalf("%s: entry %s: %v", name, e.ID, err)
		}
		d, _ := m.Data()
		found := false
		for p := l.Entry(e.ParentID); p != nil; p = l.Entry(p.ParentID) {
			if p.Type == "message" && p.Role() == "toolResult" {
				continue
			}
			if p.Type == "message" && p.Role() == "assistant" {
				pm, _ := p.Message()
				pd, _ := pm.Data()
				for _, b := range pd.Content.Blocks {
					if b.Type == "toolCall" && b.ID == d.ToolCallID {
						found = true
					}
				}
			}
			break
		}
		if !found {
			t.Errorf("%s: tool result %s (call %s) does not follow its call", name, e.ID, d.ToolCallID)
		}
	}
}

// Independent counts from the source files.

type sourceCounts struct{ prompts, compactions, branches int }

func countClaude(data []byte) (c sourceCounts) {
	type line struct {
		Type, UUID, Subtype string
		ParentUUID          *string `json:"parentUuid"`
		IsMeta              bool    `json:"isMeta"`
		IsCompactSummary    bool    `json:"isCompactSummary"`
		Message             *struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	parentOf := map[string]string{}
	isMsg := map[string]bool{}
	var prompts []line
	for _, raw := range bytes.Split(data, []byte("\n")) {
		var l line
		if json.Unmarshal(raw, &l) != nil {
			continue
		}
		if l.UUID != "" && l.ParentUUID != nil {
			parentOf[l.UUID] = *l.ParentUUID
		}
		if l.Type == "system" && l.Subtype == "compact_boundary" {
			c.compactions++
		}
		if (l.Type == "user" || l.Type == "assistant") && l.UUID != "" {
			isMsg[l.UUID] = true
		}
		if l.Type != "user" || l.Message == nil || l.IsMeta || l.IsCompactSummary {
			continue
		}
		text := ""
		var s string
		if json.Unmarshal(l.Message.Content, &s) == nil {
			text = s
		} else {
			var bs []struct{ Type, Text string }
			_ = json.Unmarshal(l.Message.Content, &bs)
			for _, b := range bs {
				if b.Type == "text" && text == "" {
					text = b.Text
				}
				if b.Type == "image" && text == "" {
					text = "[image]"
				}
			}
		}
		if text == "" || strings.HasPrefix(text, "<command-") || strings.HasPrefix(text, "<local-command-") {
			continue
		}
		c.prompts++
		prompts = append(prompts, l)
	}
	// A rewind: two prompts whose nearest message ancestor is the same.
	anchor := map[string]int{}
	for _, p := range prompts {
		u := ""
		if p.ParentUUID != nil {
			u = *p.ParentUUID
		}
		for i := 0; u != "" && !isMsg[u] && i < 1000; i++ {
			u = parentOf[u]
		}
		anchor[u]++
	}
	for _, n := range anchor {
		c.branches += n - 1
	}
	return c
}

func countCodex(data []byte) (c sourceCounts) {
	users := map[string]int{}
	var events []string
	for _, raw := range bytes.Split(data, []byte("\n")) {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type     string          `json:"type"`
				Role     string          `json:"role"`
				Content  json.RawMessage `json:"content"`
				Message  string          `json:"message"`
				NumTurns int             `json:"num_turns"`
			} `json:"payload"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &l) != nil {
			continue
		}
		role, content := l.Payload.Role, l.Payload.Content
		if l.Type == "message" { // bare items of the oldest rollouts
			role, content = l.Role, l.Content
		}
		switch {
		case (l.Type == "response_item" && l.Payload.Type == "message" || l.Type == "message") && role == "user":
			var bs []struct{ Text string }
			_ = json.Unmarshal(content, &bs)
			text := ""
			if len(bs) > 0 {
				text = bs[0].Text
			}
			t := strings.TrimSpace(text)
			if strings.HasPrefix(t, "<") || strings.HasPrefix(t, "# AGENTS.md") {
				continue
			}
			c.prompts++
			users[t]++
		case l.Type == "event_msg" && l.Payload.Type == "user_message":
			events = append(events, strings.TrimSpace(l.Payload.Message))
		case l.Type == "event_msg" && l.Payload.Type == "thread_rolled_back" && l.Payload.NumTurns > 0:
			c.branches++
		case l.Type == "compacted":
			c.compactions++
		}
	}
	for _, e := range events {
		if users[e] > 0 {
			users[e]--
			continue
		}
		c.prompts++
	}
	return c
}

func countRho(data []byte) (c sourceCounts) {
	parents := map[string]int{}
	seen := map[string]bool{}
	for _, raw := range bytes.Split(data, []byte("\n")) {
		var l struct {
			Type     string
			ID       string
			ParentID *string `json:"parent_id"`
			Payload  struct {
				Message    *struct{ Role string }
				Compaction *struct{}
			}
		}
		if json.Unmarshal(raw, &l) != nil || l.Type != "Entry" || seen[l.ID] {
			continue
		}
		seen[l.ID] = true
		if l.Payload.Message != nil && l.Payload.Message.Role == "user" {
			c.prompts++
		}
		if l.Payload.Compaction != nil {
			c.compactions++
		}
		if l.ParentID != nil {
			parents[*l.ParentID]++
		}
	}
	for _, n := range parents {
		c.branches += n - 1
	}
	return c
}

// importedCounts counts the same things in an imported session.
func importedCounts(l *session.Log) (c sourceCounts) {
	kids := map[string]int{}
	for _, e := range l.Entries() {
		switch {
		case e.Type == "message" && e.Role() == "user":
			c.prompts++
		case e.Type == "compaction":
			c.compactions++
		}
		if e.ParentID != "" {
			kids[e.ParentID]++
		}
	}
	for _, n := range kids {
		c.branches += n - 1
	}
	return c
}

// TestInvariants checks every fixture's import: it loads in arbor without
// damage; every tool result follows its call; no user prompt is lost and the
// compactions and branches are the source's, counted from the source apart
// from the reader; the leaf is the last line.
func TestInvariants(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f, func(t *testing.T) {
			s := mustRead(t, f)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			l := session.Load(s.Bytes())
			if r := l.Report(); !r.Clean() {
				t.Errorf("arbor reports damage in the import: %+v", r)
			}
			if l.Len() != len(s.Lines) {
				t.Errorf("arbor indexed %d of %d entries", l.Len(), len(s.Lines))
			}
			checkToolResults(t, f, l)
			var want sourceCounts
			switch s.Header.From.Format {
			case string(Claude):
				want = countClaude(data)
			case string(Codex):
				want = countCodex(data)
			case string(Rho):
				want = countRho(data)
			}
			got := importedCounts(l)
			if got != want {
				t.Errorf("prompts, compactions, branches: source %+v, imported %+v", want, got)
			}
			if got.prompts != s.Stats.Prompts || got.compactions != s.Stats.Compactions || got.branches != s.Stats.Branches {
				t.Errorf("the summary says %+v; the import has %+v", s.Stats, got)
			}
			if n := len(s.Lines); n > 0 {
				last, _ := session.ParseLine(s.Lines[n-1])
				if leaf := l.Leaf(); leaf == nil || last == nil || leaf.ID != last.ID {
					t.Errorf("the leaf is not the last line")
				}
			}
		})
	}
}

// TestReadTwiceIsTheSame: ids come from the source, so two reads agree byte for byte.
func TestReadTwiceIsTheSame(t *testing.T) {
	for _, f := range fixtures(t) {
		a, b := mustRead(t, f).Bytes(), mustRead(t, f).Bytes()
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two reads differ", f)
		}
	}
}

// TestReadNeverWrites: reading leaves the source's bytes and time alone.
func TestReadNeverWrites(t *testing.T) {
	for _, f := range fixtures(t) {
		before, _ := os.ReadFile(f)
		fi1, _ := os.Stat(f)
		mustRead(t, f)
		after, _ := os.ReadFile(f)
		fi2, _ := os.Stat(f)
		if !bytes.Equal(before, after) || !fi1.ModTime().Equal(fi2.ModTime()) {
			t.Errorf("%s changed", f)
		}
	}
}

// TestPiReadsImports: pi 1.6.0 opens every import and builds the context
// arbor shows.
func TestPiReadsImports(t *testing.T) {
	script := pi16(t)
	dir := t.TempDir()
	for i, f := range fixtures(t) {
		s := mustRead(t, f)
		out := filepath.Join(dir, fmt.Sprintf("s%02d.jsonl", i))
		if err := os.WriteFile(out, s.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		// The leaf, and every other leaf of the tree (abandoned branches).
		l := s.Log()
		leaves := []string{""}
		for _, e := range l.Entries() {
			if len(l.Children(e.ID)) == 0 && (l.Leaf() == nil || e.ID != l.Leaf().ID) {
				leaves = append(leaves, e.ID)
			}
		}
		for _, leaf := range leaves {
			piSameContext(t, script, f, out, l, leaf)
		}
	}
}

func piSameContext(t *testing.T, script, f, out string, l *session.Log, leaf string) {
	t.Helper()
	args := []string{script, "context", out}
	ours := l.Context()
	if leaf != "" {
		args = append(args, leaf)
		ours = l.ContextAt(&leaf)
	}
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: pi context: %v: %s", f, err, stderr.Bytes())
	}
	var pi struct {
		Messages []any `json:"messages"`
	}
	if err := json.Unmarshal(got, &pi); err != nil {
		t.Fatalf("%s: pi printed %q: %v", f, got, err)
	}
	ctx, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	var mine struct {
		Messages []any `json:"messages"`
	}
	if err := json.Unmarshal(ctx, &mine); err != nil {
		t.Fatal(err)
	}
	if mine.Messages == nil {
		mine.Messages = []any{}
	}
	if pi.Messages == nil {
		pi.Messages = []any{}
	}
	if diff := cmp.Diff(pi.Messages, mine.Messages); diff != "" {
		t.Errorf("%s at leaf %q: pi 1.6.0's context differs from arbor's (-pi +arbor):\n%s", f, leaf, diff)
	}
}

// TestDetect: each format from its first line, pi sessions and other files
// left alone.
func TestDetect(t *testing.T) {
	for _, c := range []struct {
		path, line string
		want       Format
	}{
		{"/x/a.jsonl", `{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}`, ""},
		{"/x/a.jsonl", `{"type":"message","id":"a1b2c3d4","parentId":null,"message":{"role":"user","content":"{\"sessionId\":\"x\",\"parentUuid\":null}"}}`, ""},
		{"/x/a.jsonl", `{"type":"Header","id":"4b021d5d","version":2,"created_at_secs":1,"cwd":"/p","parent_session":null}`, Rho},
		{"/x/a.jsonl", `{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"x"}}`, Codex},
		{"/x/a.jsonl", `{"timestamp":"2026-01-01T00:00:00.000Z","type":"response_item","payload":{"type":"message"}}`, Codex},
		{"/x/a.jsonl", `{"parentUuid":null,"isSidechain":false,"type":"user","sessionId":"s"}`, Claude},
		{"/x/a.jsonl", `{"type":"summary","summary":"t","leafUuid":"u"}`, Claude},
		{"/x/a.jsonl", `{"type":"ai-title","aiTitle":"t"}`, Claude},
		{"/h/.codex/sessions/rollout-2025-05-01-x.jsonl", `{"id":"x","timestamp":"2025-05-01T00:00:00.000Z"}`, Codex},
		{"/h/.claude/projects/-p/s.jsonl", ``, Claude},
		{"/x/notes.jsonl", `{"hello":"world"}`, ""},
	} {
		got, err := Detect(c.path, []byte(c.line+"\n"))
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("Detect(%s, %.50s) = %q, %v; want %q", c.path, c.line, got, err, c.want)
		}
	}
}

func pi16(t *testing.T) string { return pitest.Script(t, pitest.V16) }
