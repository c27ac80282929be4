package cli

import (
	goldenfile "github.com/arborlog/arbor/internal/golden"
	"github.com/arborlog/arbor/internal/pitest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// Sessions arbor writes, with cursors and markers, that pi must read the way
// arbor does: pi ignores arbor's markers and continues from the last line, and
// that must give the active cursor's context (SPEC §6.2). The files and the
// context arbor computes are committed under testdata/arbor-written/; the test
// runs pi on them when Node and the pi peer are installed, and skips that part
// otherwise. go test -update writes the sessions afresh.
const arborWritten = "testdata/arbor-written"

type writtenCase struct {
	name  string
	build func(t *testing.T, s *jsonl.Session)
}

func msg(t *testing.T, d session.MessageData) session.Message {
	t.Helper()
	m, err := session.NewMessage(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// turn appends a user message and the assistant's answer on cursor c.
func turn(t *testing.T, c *session.Cursor, ts float64, question, answer string) (user, reply *session.Entry) {
	t.Helper()
	u, err := c.AppendMessage(msg(t, session.MessageData{Role: session.RoleUser, Content: session.TextContent(question), Timestamp: ts}))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.AppendMessage(msg(t, session.MessageData{
		Role: session.RoleAssistant, Content: session.Content{Blocks: []session.Block{{Type: "text", Text: answer}}},
		API: "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-4-5",
		Usage: &session.Usage{Input: 12, Output: 30, TotalTokens: 42}, StopReason: "stop", Timestamp: ts + 2000,
	}))
	if err != nil {
		t.Fatal(err)
	}
	return u, a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var writtenCases = []writtenCase{
	{"cursors", func(t *testing.T, s *jsonl.Session) {
		main := s.Cursor("")
		must(t, ignore(main.AppendModelChange("anthropic", "claude-sonnet-4-5")))
		must(t, ignore(main.AppendThinkingLevelChange("medium")))
		q1, _ := turn(t, main, 1795166000000, "Why does go vet flag store.go?", "Store is copied with its mutex.")
		turn(t, main, 1795166010000, "Fix it.", "Changed Get to a pointer receiver.")
		idC, err := s.NewCursor("review")
		must(t, err)
		id := idC.ID()
		review := s.Cursor(id)
		must(t, review.BranchTo(q1.ID))
		turn(t, review, 1795166020000, "Before fixing: which callers copy Store?", "Only cache.go line 40.")
		must(t, s.Switch("main"))
		turn(t, main, 1795166030000, "Run the tests.", "All pass.")
	}},
	// Naming a cursor that is not active writes under that cursor's leaf;
	// `arbor cursor rename` must still leave pi on the active cursor's branch
	// (the last line must be back on it).
	{"rename-other-cursor", func(t *testing.T, s *jsonl.Session) {
		main := s.Cursor("")
		q1, _ := turn(t, main, 1795169000000, "List the flags of arbor tree.", "--filter, --cursor and --json.")
		turn(t, main, 1795169010000, "And of arbor branch?", "--root and --cursor.")
		idC, err := s.NewCursor("")
		must(t, err)
		id := idC.ID()
		side := s.Cursor(id)
		must(t, side.BranchTo(q1.ID))
		turn(t, side, 1795169020000, "What does --filter all show?", "Every entry, markers included.")
		must(t, s.Switch("main"))
		must(t, s.Close())
		if r := runArbor(t, "", "cursor", "rename", s.Path(), id, "side"); r.code != 0 {
			t.Fatalf("cursor rename: exit %d: %s", r.code, r.err)
		}
	}},
	{"branches-labels-name", func(t *testing.T, s *jsonl.Session) {
		c := s.Cursor("")
		_, a1 := turn(t, c, 1795167000000, "Add a --json flag to ls.", "Added it.")
		turn(t, c, 1795167010000, "Now print dates in UTC.", "Done, with time.UTC.")
		must(t, ignore(s.SetLabel(a1.ID, "json flag")))
		must(t, s.BranchTo(a1.ID))
		turn(t, c, 1795167020000, "Instead, print dates as ISO-8601.", "Done, with RFC 3339 milliseconds.")
		must(t, ignore(s.SetSessionName("ls output")))
		must(t, s.BranchTo(a1.ID))
		must(t, ignore(s.BranchWithSummary(a1.ID, "Tried ISO-8601 dates; the user prefers local time.", nil, false)))
		turn(t, c, 1795167030000, "Use local time after all.", "Switched to time.Local.")
	}},
	{"reset-compaction-resolution", func(t *testing.T, s *jsonl.Session) {
		c := s.Cursor("")
		turn(t, c, 1795168000000, "Summarize the README.", "It describes arbor.")
		must(t, s.ResetLeaf())
		q, _ := turn(t, c, 1795168010000, "A new topic: the lock file.", "It records pid, host and start time.")
		turn(t, c, 1795168020000, "Where is it?", "Next to the session, as <file>.lock.")
		must(t, ignore(s.AppendCompaction(session.CompactionData{Summary: "Discussed the lock file.", FirstKeptEntryID: q.ID, TokensBefore: 1200})))
		_, a := turn(t, c, 1795168030000, "And a second writer?", "It is refused at once.")
		must(t, c.SetResolution(a.ID, session.Resolution{Level: session.Pinned}))
	}},
}

func ignore(_ *session.Entry, err error) error { return err }

func TestArborWrittenPiReads(t *testing.T) {
	if *goldenfile.Update {
		for _, tc := range writtenCases {
			writeArborSession(t, tc)
		}
	}
	for _, tc := range writtenCases {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(arborWritten, tc.name+".jsonl")
			ctx := contextJSON(t, f)
			golden(t, filepath.Join("arbor-written", tc.name+".context.json"), ctx)
			llm := runArbor(t, "", "context", f, "--format", "llm").out
			tree := runArbor(t, "", "tree", f, "--json").out
			script := piPeer(t)
			sameBytes(t, runPi(t, script, "context", f), []byte(ctx))
			sameBytes(t, runPi(t, script, "llm", f), []byte(llm))
			sameTree(t, runPi(t, script, "tree", f), []byte(tree))
		})
	}
}

// writeArborSession writes one session with arbor's store, as a program
// using the library would, then drops the lock file the store leaves.
func writeArborSession(t *testing.T, tc writtenCase) {
	t.Helper()
	f := filepath.Join(arborWritten, tc.name+".jsonl")
	must(t, os.MkdirAll(arborWritten, 0o755))
	if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tick := session.WithClock(func() time.Time { clock = clock.Add(1500 * time.Millisecond); return clock })
	s, err := jsonl.Open(f, jsonl.WithCwd("/home/dev/arbor-written"), jsonl.Immediate(), jsonl.WithLog(tick))
	must(t, err)
	tc.build(t, s)
	_ = s.Close() // a case may have closed it to run a command on the file
	_ = os.Remove(f + ".lock")
}

func piPeer(t *testing.T) string { return pitest.Script(t, pitest.V073) }

func runPi(t *testing.T, script string, args ...string) []byte { return pitest.Run(t, script, args...) }
