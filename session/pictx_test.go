package session_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/arborlog/arbor/internal/pitest"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

var update = flag.Bool("update", false, "rewrite testdata/pictx with new sessions and pi's contexts (needs Node and the pi peer)")

// randomSession writes a session the way a program using every part of the
// API would: messages of every role, settings, compactions, labels, names,
// branches, summaries, cursors forked, named, cleared, switched and used,
// resolutions. It returns the file.
func randomSession(t *testing.T, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	l := session.New("/project", session.WithID(fmt.Sprintf("pictx-%d", seed)), session.WithTimestamp("2026-01-01T00:00:00.000Z"), session.WithClock(fixedClock()))
	pickEntry := func(markers bool) string {
		var ids []string
		for _, e := range l.Entries() {
			if markers || !e.IsMarker() {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) == 0 {
			return ""
		}
		return ids[r.IntN(len(ids))]
	}
	cursor := func() *session.Cursor {
		cs := l.Cursors()
		if r.IntN(3) == 0 {
			return l.Cursor("")
		}
		return l.Cursor(cs[r.IntN(len(cs))].ID)
	}
	msgs := []string{
		`{"role":"user","content":"question %d","timestamp":1767225600000}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"answer %d"}],"api":"anthropic-messages","provider":"anthropic","model":"m%d","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1767225600001}`,
		`{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"file"}],"isError":false,"timestamp":1767225600002}`,
		`{"role":"bashExecution","command":"make %d","output":"ok","exitCode":2,"cancelled":false,"truncated":false,"timestamp":1767225600003}`,
	}
	for i := range 60 {
		var err error
		switch r.IntN(16) {
		case 0, 1, 2, 3, 4:
			raw := msgs[r.IntN(len(msgs))]
			raw = strings.ReplaceAll(raw, "%d", fmt.Sprint(i))
			_, err = cursor().AppendMessage(mustMessage(t, raw))
		case 5:
			_, err = cursor().AppendThinkingLevelChange([]string{"low", "high", "off"}[r.IntN(3)])
		case 6:
			_, err = cursor().AppendModelChange("openai", fmt.Sprintf("gpt-%d", i))
		case 7:
			if id := pickEntry(false); id != "" {
				_, err = cursor().AppendCompaction(session.CompactionData{Summary: fmt.Sprintf("summary %d", i), FirstKeptEntryID: id, TokensBefore: i})
			}
		case 8:
			_, err = cursor().AppendCustomMessage("note", session.TextContent(fmt.Sprintf("note %d", i)), true, map[string]int{"i": i})
		case 9:
			if id := pickEntry(true); id != "" {
				_, err = cursor().SetLabel(id, fmt.Sprintf("label %d", i))
			}
		case 10:
			_, err = cursor().SetSessionName(fmt.Sprintf("name %d", i))
		case 11:
			if id := pickEntry(false); id != "" {
				err = cursor().BranchTo(id)
			}
		case 12:
			_, err = cursor().BranchWithSummary(pickEntry(false), fmt.Sprintf("left %d", i), nil, false)
		case 13:
			_, err = l.NewCursor(fmt.Sprintf("c%d", i))
		case 14:
			cs := l.Cursors()
			err = l.Switch(cs[r.IntN(len(cs))].ID)
		case 15:
			switch r.IntN(3) {
			case 0:
				err = cursor().ResetLeaf()
			case 1:
				err = cursor().Rename(fmt.Sprintf("n%d", i))
			default:
				if id := pickEntry(false); id != "" {
					err = cursor().SetResolution(id, session.Resolution{Level: session.Outlined})
				}
			}
		}
		check(t, err)
	}
	return serialize(l)
}

// piContexts runs pi's buildSessionContext on files.
func piContexts(t *testing.T, files []string) []string {
	t.Helper()
	piRoot := pitest.Dir(t, pitest.V073)
	out, err := exec.Command("node", append([]string{filepath.Join("testdata", "pictx", "context.mjs"), piRoot}, files...)...).Output()
	check(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(files) {
		t.Fatalf("pi printed %d contexts for %d files", len(lines), len(files))
	}
	return lines
}

func sameJSON(t *testing.T, name, want, got string) {
	t.Helper()
	var w, g any
	check(t, json.Unmarshal([]byte(want), &w))
	check(t, json.Unmarshal([]byte(got), &g))
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s: arbor's context differs from pi's (-pi +arbor):\n%s", name, diff)
	}
}

// TestArborFilesGivePiTheSameContext: pi, which knows nothing of cursors and
// markers, reads files arbor wrote with all of them and builds the context
// arbor says is the active one (SPEC §6.2). The committed sessions and pi's
// contexts for them are checked without Node; with Node, fresh random sessions
// are checked against pi itself as well. `go test -run ThisTest -update`
// rewrites the committed ones.
func TestArborFilesGivePiTheSameContext(t *testing.T) {
	dir := filepath.Join("testdata", "pictx")
	if *update {
		var files []string
		for seed := range uint64(8) {
			f := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", seed))
			check(t, os.WriteFile(f, randomSession(t, seed), 0o644))
			files = append(files, f)
		}
		for i, c := range piContexts(t, files) {
			check(t, os.WriteFile(strings.TrimSuffix(files[i], ".jsonl")+".pi.json", []byte(c+"\n"), 0o644))
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	check(t, err)
	if len(files) == 0 {
		t.Fatal("no committed sessions")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		check(t, err)
		want, err := os.ReadFile(strings.TrimSuffix(f, ".jsonl") + ".pi.json")
		check(t, err)
		l := session.Load(data)
		if !l.Report().Clean() || len(l.Cursors()) < 2 {
			t.Errorf("%s: report %+v, %d cursors", f, l.Report(), len(l.Cursors()))
		}
		sameJSON(t, f, string(bytes.TrimSpace(want)), contextJSON(t, l.Context()))
	}

	t.Run("fresh sessions against pi", func(t *testing.T) {
		tmp := t.TempDir()
		var files []string
		var ours []string
		for seed := range uint64(12) {
			data := randomSession(t, 1000+seed)
			f := filepath.Join(tmp, fmt.Sprintf("r%d.jsonl", seed))
			check(t, os.WriteFile(f, data, 0o600))
			files = append(files, f)
			ours = append(ours, contextJSON(t, session.Load(data).Context()))
		}
		for i, c := range piContexts(t, files) {
			sameJSON(t, files[i], c, ours[i])
		}
	})
}
