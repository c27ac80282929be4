package compaction

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/google/go-cmp/cmp"
)

// piPlan is what pi's peer prints for `pi.mjs prepare FILE KEEP`.
type piPlan struct {
	FirstKeptEntryID    string   `json:"firstKeptEntryId"`
	IsSplitTurn         bool     `json:"isSplitTurn"`
	TokensBefore        int      `json:"tokensBefore"`
	MessagesToSummarize int      `json:"messagesToSummarize"`
	TurnPrefixMessages  int      `json:"turnPrefixMessages"`
	PreviousSummary     *string  `json:"previousSummary"`
	ReadFiles           []string `json:"readFiles"`
	ModifiedFiles       []string `json:"modifiedFiles"`
	MovedFrom           string   `json:"movedFrom,omitempty"`
}

func loadFile(t testing.TB, path string) *session.Log {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return session.Load(data)
}

// planCase is one expected plan written by pi: the session file, the keep
// setting and pi's output ("null" when pi made no plan).
type planCase struct {
	name, session string
	keep          int
	want          []byte
}

var keepRE = regexp.MustCompile(`^(.*)\.prepare(?:-(\d+))?\.json$`)

func planCases(t *testing.T, dir string) []planCase {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "expected", "*.prepare*.json"))
	var cases []planCase
	for _, f := range files {
		m := keepRE.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			continue
		}
		keep := DefaultSettings.KeepRecentTokens
		if m[2] != "" {
			keep = atoi(t, m[2])
		}
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, planCase{name: filepath.Base(f), session: filepath.Join(dir, "sessions", m[1]+".jsonl"), keep: keep, want: want})
	}
	return cases
}

func atoi(t *testing.T, s string) int {
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// divergent lists the corpus files on which arbor deliberately differs from pi
// before any planning starts (SPEC §8).
var divergent = map[string]string{
	"dmg-no-header": "pi replaces a file whose first line is not a header with a fresh header (SPEC §8): its plan is of an empty session",
}

// TestPlanEqualsPi compares Prepare with pi 0.73.1's prepareCompaction on
// sessions pi wrote: the interop corpus (testdata/pi) and this package's own
// long and compacted sessions (testdata/pi here).
func TestPlanEqualsPi(t *testing.T) {
	var cases []planCase
	cases = append(cases, planCases(t, filepath.Join("..", "testdata", "pi"))...)
	own := planCases(t, filepath.Join("testdata", "pi"))
	if len(own) == 0 {
		t.Fatal("no expected plans under testdata/pi/expected")
	}
	cases = append(cases, own...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.session); err != nil {
				t.Skipf("no session file %s", c.session)
			}
			if why, ok := divergent[strings.TrimSuffix(filepath.Base(c.session), ".jsonl")]; ok {
				t.Skip(why)
			}
			l := loadFile(t, c.session)
			p, err := Prepare(l.Branch(""), Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: c.keep})
			if strings.TrimSpace(string(c.want)) == "null" {
				if err == nil {
					t.Fatalf("pi makes no plan; arbor planned %+v", planOf(t, p))
				}
				return
			}
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			var want piPlan
			if err := json.Unmarshal(c.want, &want); err != nil {
				t.Fatal(err)
			}
			got := planOf(t, p)
			if strings.HasPrefix(filepath.Base(c.session), "orphan-") && got.MovedFrom == "" {
				t.Fatalf("pi keeps %s, a tool result without its call; arbor must move the cut", want.FirstKeptEntryID)
			}
			if got.MovedFrom != "" {
				// arbor moved pi's cut to keep a tool result with its call; the
				// rest of the plan follows from the new cut.
				if got.MovedFrom != want.FirstKeptEntryID {
					t.Errorf("movedFrom %s, pi kept from %s", got.MovedFrom, want.FirstKeptEntryID)
				}
				assertNoOrphans(t, p)
				return
			}
			if l.Report().Migrated {
				// Migration gives old entries new random ids, in pi as in arbor.
				want.FirstKeptEntryID, got.FirstKeptEntryID = "", ""
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan differs from pi's (-pi +arbor):\n%s", diff)
			}
		})
	}
}

func planOf(t *testing.T, p *Plan) piPlan {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var v piPlan
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// assertNoOrphans checks that every tool result kept by the plan has its call kept too.
func assertNoOrphans(t *testing.T, p *Plan) {
	t.Helper()
	calls := map[string]bool{}
	for _, e := range p.Path[p.FirstKeptIndex:] {
		m, ok := e.AsMessage()
		if !ok || e.Type != session.TypeMessage {
			continue
		}
		f := decode(m.Raw)
		for _, b := range f.Content.Blocks {
			if b.Type == "toolCall" {
				calls[b.ID] = true
			}
		}
		if f.Role == session.RoleToolResult && !calls[f.ToolCallID] && callOnPath(p.Path, f.ToolCallID) {
			t.Errorf("tool result %s kept without its call %s", e.ID, f.ToolCallID)
		}
	}
}

func callOnPath(path []*session.Entry, id string) bool {
	for _, e := range path {
		if e.Role() != session.RoleAssistant {
			continue
		}
		m, _ := e.AsMessage()
		for _, b := range decode(m.Raw).Content.Blocks {
			if b.Type == "toolCall" && b.ID == id {
				return true
			}
		}
	}
	return false
}
