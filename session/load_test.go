package session_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/arborlog/arbor/session"
)

const v1Header = `{"type":"session","id":"sess-v1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"m","thinkingLevel":"off"}`

func TestMigrateV1(t *testing.T) {
	// Line indexes as pi counts them: the header is 0; the blank and the bad
	// line are not counted, the non-object JSON line is.
	file := strings.Join([]string{
		v1Header, // 0
		`{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q1","timestamp":1}}`, // 1
		``,
		`{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"r1"}],"provider":"anthropic","model":"m","timestamp":2}}`, // 2
		`not json`,
		`{"type":"message","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"q2","timestamp":3}}`,                                                                  // 3
		`{"type":"message","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"r2"}],"provider":"anthropic","model":"m","timestamp":4}}`, // 4
		`{"type":"compaction","timestamp":"2025-01-01T00:00:05.000Z","summary":"S","firstKeptEntryIndex":3,"tokensBefore":50}`,                                                              // 5
		`{"type":"message","timestamp":"2025-01-01T00:00:06.000Z","message":{"role":"user","content":"q3","timestamp":6}}`,                                                                  // 6
	}, "\n") + "\n"

	l := session.Load([]byte(file))
	es := l.Entries()
	if len(es) != 6 {
		t.Fatalf("%d entries, want 6", len(es))
	}
	// A linear chain of 8-hex ids, the same on every load.
	again := session.Load([]byte(file)).Entries()
	prev := ""
	for i, e := range es {
		if len(e.ID) != 8 || strings.Trim(e.ID, "0123456789abcdef") != "" {
			t.Errorf("entry %d id %q is not 8 lower-case hex characters", i, e.ID)
		}
		if e.ParentID != prev {
			t.Errorf("entry %d parent %q, want %q", i, e.ParentID, prev)
		}
		if again[i].ID != e.ID {
			t.Errorf("entry %d: id %s on one load, %s on another", i, e.ID, again[i].ID)
		}
		if !strings.HasPrefix(string(e.Raw()), `{"type":"`+e.Type+`","id":"`+e.ID+`","parentId":`) {
			t.Errorf("migrated entry %d does not start with its envelope: %s", i, e.Raw())
		}
		prev = e.ID
	}
	// firstKeptEntryIndex 3 is q2, the third entry.
	var c struct {
		FirstKeptEntryID    string `json:"firstKeptEntryId"`
		FirstKeptEntryIndex *int   `json:"firstKeptEntryIndex"`
	}
	check(t, es[4].Decode(&c))
	if c.FirstKeptEntryID != es[2].ID || c.FirstKeptEntryIndex != nil {
		t.Errorf("compaction keeps %q (index %v), want %s (q2) and no index", c.FirstKeptEntryID, c.FirstKeptEntryIndex, es[2].ID)
	}
	if diff := cmp.Diff([]string{"compactionSummary:S", "user:q2", "assistant:r2", "user:q3"}, texts(t, l.Context())); diff != "" {
		t.Errorf("context: %s", diff)
	}
	if rep := l.Report(); !rep.Migrated || rep.Version != 1 || !slices.Equal(rep.BadLines, []int{5}) {
		t.Errorf("report %+v", rep)
	}
	// Another session id gives other ids.
	other := session.Load([]byte(strings.Replace(file, "sess-v1", "sess-other", 1))).Entries()
	if other[0].ID == es[0].ID {
		t.Errorf("two sessions derived the same id %s", es[0].ID)
	}
}

func TestMigrateV1FirstKeptIndex(t *testing.T) {
	for _, tc := range []struct {
		name, member string
		want         string // "" none; else the index of the kept entry, or a member kept as is
	}{
		{"index of the header keeps nothing", `"firstKeptEntryIndex":0`, ""},
		{"index past the end keeps nothing", `"firstKeptEntryIndex":99`, ""},
		{"fractional index keeps nothing", `"firstKeptEntryIndex":1.5`, ""},
		{"first entry", `"firstKeptEntryIndex":1`, "0"},
		{"a non-number index is left alone", `"firstKeptEntryIndex":"1"`, `"firstKeptEntryIndex":"1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := v1Header + "\n" +
				`{"type":"message","timestamp":"t","message":{"role":"user","content":"q","timestamp":1}}` + "\n" +
				`{"type":"compaction","timestamp":"t","summary":"S",` + tc.member + `,"tokensBefore":5}` + "\n"
			es := session.Load([]byte(file)).Entries()
			raw := string(es[1].Raw())
			switch {
			case tc.want == "":
				if strings.Contains(raw, "firstKeptEntry") {
					t.Errorf("compaction %s keeps something", raw)
				}
			case tc.want == "0":
				if !strings.HasSuffix(raw, `,"firstKeptEntryId":"`+es[0].ID+`"}`) || strings.Contains(raw, "Index") {
					t.Errorf("compaction %s does not keep %s", raw, es[0].ID)
				}
			default:
				if !strings.Contains(raw, tc.want) || strings.Contains(raw, "firstKeptEntryId") {
					t.Errorf("compaction %s, want %s kept as it was", raw, tc.want)
				}
			}
		})
	}
}

func TestMigrateV2HookMessage(t *testing.T) {
	file := `{"type":"session","version":2,"id":"s2","timestamp":"2025-06-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-06-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"hook","content":"from a hook","display":true,"timestamp":1},"zz":1}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-06-01T00:00:02.000Z","message":{"role":"user","content":"q","timestamp":2}}
`
	l := session.Load([]byte(file))
	es := l.Entries()
	if es[0].Role() != session.RoleCustom {
		t.Errorf("role %q, want custom", es[0].Role())
	}
	want := `{"type":"message","id":"a1","parentId":null,"timestamp":"2025-06-01T00:00:01.000Z","message":{"role":"custom","customType":"hook","content":"from a hook","display":true,"timestamp":1},"zz":1}`
	if got := string(es[0].Raw()); got != want {
		t.Errorf("migrated raw\n got %s\nwant %s", got, want)
	}
	if got := string(es[1].Raw()); got != strings.Split(file, "\n")[2] {
		t.Errorf("an unmigrated entry changed: %s", got)
	}
	if diff := cmp.Diff([]string{"custom:from a hook", "user:q"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
	if rep := l.Report(); !rep.Migrated || rep.Version != 2 {
		t.Errorf("report %+v", rep)
	}
}

func TestCyclesCutAtFirstInFile(t *testing.T) {
	// c → a → b → c; c comes first in the file, so c's parent link is cut.
	l := session.Load(fileOf(
		msgLine("x", "", "user", "root"),
		msgLine("c", "b", "user", "C"),
		msgLine("a", "c", "assistant", "A"),
		msgLine("b", "a", "user", "B"),
		msgLine("self", "self", "user", "S"),
	))
	rep := l.Report()
	if diff := cmp.Diff([]string{"c", "self"}, rep.Cycles); diff != "" {
		t.Errorf("Cycles: %s", diff)
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, ids(l.PathTo("b"))); diff != "" {
		t.Errorf("Branch(b) after the cut: %s", diff)
	}
	var roots []string
	for _, n := range l.Tree() {
		roots = append(roots, n.Entry.ID)
	}
	if diff := cmp.Diff([]string{"x", "c", "self"}, roots); diff != "" {
		t.Errorf("roots: %s", diff)
	}
	if rep.Clean() {
		t.Error("a file with loops reports clean")
	}
}

func TestOrphansAreRoots(t *testing.T) {
	l := session.Load(fileOf(msgLine("a", "", "user", "A"), msgLine("o2", "gone", "user", "O2"), msgLine("o1", "lost", "user", "O1"), msgLine("k", "o1", "assistant", "K")))
	if diff := cmp.Diff([]string{"o2", "o1"}, l.Report().Orphans); diff != "" {
		t.Errorf("Orphans: %s", diff)
	}
	if diff := cmp.Diff([]string{"a", "o2", "o1"}, ids(l.Children(""))); diff != "" {
		t.Errorf("roots: %s", diff)
	}
	if diff := cmp.Diff([]string{"user:O1", "assistant:K"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
}

func TestExtraHeaders(t *testing.T) {
	h2 := `{"type":"session","version":3,"id":"second","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/q"}`
	l := session.Load(fileOf(msgLine("a", "", "user", "A"), h2, msgLine("b", "a", "assistant", "B")))
	if got := l.Report().ExtraHeaders; !slices.Equal(got, []int{3}) {
		t.Errorf("ExtraHeaders = %v, want [3]", got)
	}
	if l.Header().ID != "s1" || l.Len() != 2 {
		t.Errorf("header %s, %d entries", l.Header().ID, l.Len())
	}
}

// TestNoHeaderOtherObjects: without a header, only objects shaped like
// session entries make a file a session; other objects with a "type" are
// unreadable lines of a file that is not one.
func TestNoHeaderOtherObjects(t *testing.T) {
	log := `{"type":"http","time":"2026-01-01T00:00:00Z","status":200}` + "\n" + `{"type":"message","msg":"x","timestamp":"2026-01-01T00:00:00Z"}` + "\n"
	l := session.Load([]byte(log))
	if rep := l.Report(); !rep.NoHeader || l.Len() != 0 || !slices.Equal(rep.BadLines, []int{1, 2}) {
		t.Errorf("a log of other objects: report %+v, %d entries; want no entries, lines 1 and 2 unreadable", rep, l.Len())
	}
	// A version 1 entry (no id) and an entry of an unknown type with pi's envelope still count.
	v1 := `{"type":"message","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}` + "\n"
	ext := `{"type":"ext_thing","id":"0123abcd","parentId":null,"timestamp":"2026-01-01T00:00:00Z"}` + "\n"
	for _, data := range []string{v1, ext, log + v1} {
		if l := session.Load([]byte(data)); l.Len() == 0 {
			t.Errorf("%q: no entries, want a header-less session", data)
		}
	}
}

func TestNoHeaderKeepsEntries(t *testing.T) {
	// SPEC §8 "first line not a header but entries parse": pi loses them; arbor keeps them under a new header.
	l := session.Load([]byte(msgLine("a", "", "user", "A") + "\n" + msgLine("b", "a", "assistant", "B") + "\n"))
	rep := l.Report()
	if !rep.NoHeader || l.Len() != 2 || l.Header().ID == "" {
		t.Errorf("report %+v, %d entries, header id %q", rep, l.Len(), l.Header().ID)
	}
	if diff := cmp.Diff([]string{"user:A", "assistant:B"}, texts(t, l.Context())); diff != "" {
		t.Error(diff)
	}
}

func TestTornTailAndMissingNewline(t *testing.T) {
	full := string(fileOf(msgLine("a", "", "user", "A")))
	for _, tc := range []struct {
		name          string
		data          string
		torn, missing bool
		bad           []int
		entries       int
	}{
		{"clean", full, false, false, nil, 1},
		{"complete last line without its newline", strings.TrimSuffix(full, "\n"), false, true, nil, 1},
		{"partial last line", full + `{"type":"message","id":"b","par`, true, false, nil, 1},
		{"complete JSON that is not an entry, without newline", full + `{"no":"type"}`, false, true, []int{3}, 1},
		{"partial line in the middle is a bad line", full + `{"type":"mess` + "\n" + msgLine("c", "a", "user", "C") + "\n", false, false, []int{3}, 2},
		{"trailing blank without newline", full + "  ", false, true, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := session.Load([]byte(tc.data)).Report()
			if rep.TornTail != tc.torn || rep.MissingNewline != tc.missing || !slices.Equal(rep.BadLines, tc.bad) || rep.Entries != tc.entries {
				t.Errorf("report torn %v missing %v bad %v entries %d; want %v %v %v %d", rep.TornTail, rep.MissingNewline, rep.BadLines, rep.Entries, tc.torn, tc.missing, tc.bad, tc.entries)
			}
		})
	}
}

func TestUnknownSurviveByteForByte(t *testing.T) {
	lines := []string{
		`{"type":"future_thing","id":"f1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","payload":{"nested":[1,2,{"é":"\u00e9"}]},"n":1.50}`,
		`{"type":"message","id":"m1","parentId":"f1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"hi","timestamp":1,"newField":{"x":null}},"entryExtra":"kept"}`,
		`{"parentId":"m1","type":"model_change","id":"mc","timestamp":"2026-01-01T00:00:03.000Z","provider":"p","modelId":"m","why":"reordered"}`,
		`{"type":"message","id":"m2","parentId":"mc","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"newBlock","data":"?"}],"provider":"p","model":"m2","timestamp":2}}`,
	}
	file := fileOf(lines...)
	l := session.Load(file)
	if !l.Report().Clean() {
		t.Fatalf("report %+v", l.Report())
	}
	for i, e := range l.Entries() {
		if string(e.Raw()) != lines[i] {
			t.Errorf("entry %d\n got %s\nwant %s", i, e.Raw(), lines[i])
		}
	}
	if got := string(serialize(l)); got != string(file) {
		t.Errorf("serialized file differs:\n%s", got)
	}
	// Unknown types are in the tree, not in the context; unknown fields reach the context as stored.
	if l.Tree()[0].Entry.Type != "future_thing" {
		t.Errorf("unknown type missing from the tree")
	}
	ctx := l.Context()
	if len(ctx.Messages) != 2 || !strings.Contains(string(ctx.Messages[0].Raw), `"newField":{"x":null}`) {
		t.Errorf("context %s", contextJSON(t, ctx))
	}
	if got := contextJSON(t, ctx); !strings.Contains(got, `"model":{"provider":"p","modelId":"m2"}`) {
		t.Errorf("model from the reordered entries: %s", got)
	}
	// Copy and Branched keep them too.
	if got := string(l.Copy("/elsewhere").Entries()[0].Raw()); got != lines[0] {
		t.Errorf("Copy changed an unknown entry: %s", got)
	}
	nb, err := l.Branched("m2")
	check(t, err)
	for i, e := range nb.Entries() {
		if string(e.Raw()) != lines[i] {
			t.Errorf("Branched entry %d\n got %s\nwant %s", i, e.Raw(), lines[i])
		}
	}
}

func TestBranchedLabelsAndCursors(t *testing.T) {
	l := session.New("/p", session.WithClock(fixedClock()))
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	b := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "b")))
	// Labels set in the order b, a, then b again (a Map keeps b first), then a cleared and set again (moves a last).
	must[*session.Entry](t)(l.SetLabel(b.ID, "B1"))
	must[*session.Entry](t)(l.SetLabel(a.ID, "A1"))
	lb := must[*session.Entry](t)(l.SetLabel(b.ID, "B2"))
	must[*session.Entry](t)(l.SetLabel(a.ID, ""))
	la := must[*session.Entry](t)(l.SetLabel(a.ID, "A2"))
	wC, err := l.NewCursor("work")
	check(t, err)
	w := wC.ID()
	c := must[*session.Entry](t)(l.Cursor(w).AppendMessage(userMsg(t, "on the cursor")))
	if c.Cursor != w {
		t.Fatalf("cursor entry has cursor %q", c.Cursor)
	}

	nb, err := l.Branched(c.ID)
	check(t, err)
	var got []string
	for _, e := range nb.Entries() {
		if e.Cursor != "" || strings.Contains(string(e.Raw()), `"cursor"`) {
			t.Errorf("entry %s keeps its cursor: %s", e.ID, e.Raw())
		}
		if e.Type == session.TypeLabel {
			var v struct {
				TargetID string `json:"targetId"`
				Label    string `json:"label"`
			}
			check(t, e.Decode(&v))
			got = append(got, v.TargetID+"="+v.Label+"@"+e.Timestamp)
		} else {
			got = append(got, e.ID)
		}
	}
	want := []string{a.ID, b.ID, c.ID, b.ID + "=B2@" + lb.Timestamp, a.ID + "=A2@" + la.Timestamp}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("branched entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]session.CursorInfo{{ID: session.MainCursor, Leaf: nb.Entries()[4].ID, Active: true}}, nb.Cursors()); diff != "" {
		t.Errorf("branched cursors: %s", diff)
	}
	if _, err := l.Branched(l.Entries()[len(l.Entries())-2].ID); err == nil {
		t.Error("Branched from a marker succeeded")
	}
}

func TestBranchedRelinksAfterDroppedLabel(t *testing.T) {
	// A label in the middle of the path: pi drops it and leaves the next entry
	// pointing at nothing; arbor re-links it, so the context is the same.
	l := session.New("/p")
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	lbl := must[*session.Entry](t)(l.SetLabel(a.ID, "x"))
	must[*session.Entry](t)(l.AppendCompaction(session.CompactionData{Summary: "S", FirstKeptEntryID: lbl.ID}))
	b := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "b")))
	nb, err := l.Branched(b.ID)
	check(t, err)
	if diff := cmp.Diff(texts(t, l.Context()), texts(t, nb.Context())); diff != "" {
		t.Errorf("context differs: %s", diff)
	}
	if rep := reopen(nb).Report(); !rep.Clean() {
		t.Errorf("branched file is damaged: %+v", rep)
	}
}

func TestCopy(t *testing.T) {
	l := session.New("/p")
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "b")))
	check(t, l.BranchTo(a.ID))
	must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "c")))
	must[*session.Entry](t)(l.SetSessionName("named"))
	wC, err := l.NewCursor("w")
	check(t, err)
	w := wC.ID()
	cp := l.Copy("/other", session.WithParent("/src.jsonl"))
	h := cp.Header()
	if h.Cwd != "/other" || h.ParentSession != "/src.jsonl" || h.ID == l.Header().ID || h.Version != session.CurrentVersion {
		t.Errorf("copy header %s", h.Raw())
	}
	if diff := cmp.Diff(ids(l.Entries()), ids(cp.Entries())); diff != "" {
		t.Errorf("copy entries: %s", diff)
	}
	if cp.SessionName() != "named" || contextJSON(t, cp.Context()) != contextJSON(t, l.Context()) {
		t.Errorf("copy name %q, context %s", cp.SessionName(), contextJSON(t, cp.Context()))
	}
	if diff := cmp.Diff(l.Cursors(), cp.Cursors()); diff != "" {
		t.Errorf("copy cursors: %s", diff)
	}
	if contextJSON(t, cp.Cursor(w).Context()) != contextJSON(t, l.Cursor(w).Context()) {
		t.Error("copy's cursor context differs")
	}
}

func TestCursorsPersisted(t *testing.T) {
	l := session.New("/p", session.WithClock(fixedClock()))
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	b := must[*session.Entry](t)(l.AppendMessage(assistantMsg(t, "b")))

	wC, err := l.NewCursor("work")
	check(t, err)
	w := wC.ID()
	if l.Active() != session.MainCursor {
		t.Errorf("NewCursor changed the active cursor to %s", l.Active())
	}
	if _, err := l.NewCursor("work"); err == nil {
		t.Error("a second cursor named work was created")
	}
	c := must[*session.Entry](t)(l.Cursor("work").AppendMessage(userMsg(t, "c")))
	if c.ParentID != b.ID || c.Cursor != w {
		t.Errorf("cursor append parent %s cursor %s", c.ParentID, c.Cursor)
	}
	check(t, l.Switch(session.MainCursor))
	check(t, l.BranchTo(a.ID))
	xC, err := l.NewCursor("")
	check(t, err)
	x := xC.ID()
	check(t, l.Cursor(x).Rename("scratch"))
	check(t, l.Cursor(x).ResetLeaf())
	check(t, l.Switch("work"))

	want := []session.CursorInfo{
		{ID: session.MainCursor, Leaf: a.ID},
		{ID: w, Name: "work", Leaf: c.ID, Active: true},
		{ID: x, Name: "scratch", Leaf: ""},
	}
	if diff := cmp.Diff(want, l.Cursors()); diff != "" {
		t.Errorf("cursors (-want +got):\n%s", diff)
	}
	r := reopen(l)
	if diff := cmp.Diff(want, r.Cursors()); diff != "" {
		t.Errorf("cursors after reopen (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user:a", "assistant:b", "user:c"}, texts(t, r.Context())); diff != "" {
		t.Errorf("active context after reopen: %s", diff)
	}
	if got := contextJSON(t, r.Cursor("scratch").Context()); got != `{"messages":[],"thinkingLevel":"off","model":null}` {
		t.Errorf("cleared cursor's context %s", got)
	}
	// pi continues from the last line: the switch marker sits under work's leaf.
	last := r.Entries()[r.Len()-1]
	if !last.IsMarker() || last.ParentID != c.ID {
		t.Errorf("last line %s does not continue work's branch", last.Raw())
	}
	if err := r.Switch("nope"); err == nil {
		t.Error("Switch to an unknown cursor succeeded")
	}
	if _, err := r.Cursor("nope").AppendMessage(userMsg(t, "x")); err == nil {
		t.Error("append through an unknown cursor succeeded")
	}
}

func TestMarkersNeverInContext(t *testing.T) {
	l := session.New("/p")
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	check(t, l.BranchTo(a.ID))
	_, err := l.NewCursor("f")
	check(t, err)
	check(t, l.Cursor("").SetResolution(a.ID, session.Resolution{Level: session.Outlined}))
	for _, leaf := range l.Entries() {
		id := leaf.ID
		for _, m := range l.ContextAt(&id).Messages {
			if m.Entry.IsMarker() {
				t.Errorf("context at %s holds marker %s", id, m.Entry.ID)
			}
		}
	}
	if _, err := l.AppendCustom("arbor.leaf", nil); err == nil {
		t.Error("AppendCustom accepted a reserved arbor. type")
	}
}

func TestMessageAccessors(t *testing.T) {
	l := session.Load(fileOf(msgLine("a", "", "assistant", "hello")))
	m, err := l.Entry("a").Message()
	check(t, err)
	d, err := m.Data()
	check(t, err)
	if m.Role != session.RoleAssistant || d.Content.Text(" ") != "hello" || d.Model != "claude-test" {
		t.Errorf("message %+v", d)
	}
	var v map[string]any
	check(t, json.Unmarshal(m.Raw(), &v))
	// A field of an unexpected type does not hide the others.
	odd := mustMessage(t, `{"role":"user","timestamp":"yesterday","content":[{"type":"text","text":"still read","id":5}]}`)
	if d, err := odd.Data(); err != nil || d.Content.Text("") != "still read" {
		t.Errorf("Data() = %+v, %v", d, err)
	}
	if _, err := session.ParseMessage([]byte(`{"content":"no role"}`)); err == nil {
		t.Error("ParseMessage accepted a message without a role")
	}
}

func TestLabelValuesAsPiReplaysThem(t *testing.T) {
	label := func(id, target, value string) string {
		return `{"type":"label","id":"` + id + `","parentId":null,"timestamp":"2026-01-01T00:00:09.000Z","targetId":"` + target + `"` + value + `}`
	}
	for _, tc := range []struct {
		name, value, want string
	}{
		{"string", `,"label":"x"`, "x"},
		{"missing clears", ``, ""},
		{"empty clears", `,"label":""`, ""},
		{"null clears", `,"label":null`, ""},
		{"zero clears", `,"label":0`, ""},
		{"a number is kept", `,"label":5`, "5"},
	} {
		l := session.Load(fileOf(msgLine("a", "", "user", "A"), label("l1", "a", `,"label":"old"`), label("l2", "a", tc.value)))
		if got := l.Label("a"); got != tc.want {
			t.Errorf("%s: Label = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestMetadataOnAnotherCursorKeepsActive: naming another cursor or setting its
// resolutions does not switch to it, in memory, on reopen, or for pi (which
// continues from the file's last line).
func TestMetadataOnAnotherCursorKeepsActive(t *testing.T) {
	l := session.New("/p")
	a := must[*session.Entry](t)(l.AppendMessage(userMsg(t, "a")))
	wC, err := l.NewCursor("w")
	check(t, err)
	w := wC.ID()
	must[*session.Entry](t)(l.Cursor(w).AppendMessage(userMsg(t, "on w")))
	check(t, l.Switch(session.MainCursor))
	before := contextJSON(t, l.Context())
	check(t, l.Cursor(w).Rename("renamed"))
	check(t, l.Cursor(w).SetResolution(a.ID, session.Resolution{Level: session.Summarized, Text: "a."}))
	r := reopen(l)
	last := r.Entries()[r.Len()-1].ID
	for name, got := range map[string]string{
		"active":         l.Active(),
		"active, reopen": r.Active(),
	} {
		if got != session.MainCursor {
			t.Errorf("%s = %s, want main", name, got)
		}
	}
	if got := contextJSON(t, r.ContextAt(&last)); got != before {
		t.Errorf("pi's context from the last line %s, want main's %s", got, before)
	}
	if res, ok := r.Cursor("renamed").Resolution(a.ID); !ok || res.Level != session.Summarized {
		t.Errorf("resolution on w after reopen: %+v %v", res, ok)
	}
}

// TestNewerVersionIsReadOnly: SPEC §8 "version newer than 3": pi loads it as
// if it were 3; arbor reads it and refuses to append, saying why.
func TestNewerVersionIsReadOnly(t *testing.T) {
	l := session.Load([]byte(`{"type":"session","version":4,"id":"v4","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" + msgLine("a", "", "user", "A") + "\n"))
	if l.Len() != 1 || l.Report().Version != 4 {
		t.Fatalf("%d entries, version %d", l.Len(), l.Report().Version)
	}
	for name, err := range map[string]error{
		"append": func() error { _, err := l.AppendMessage(userMsg(t, "b")); return err }(),
		"branch": l.BranchTo("a"),
		"fork":   func() error { _, err := l.NewCursor("x"); return err }(),
	} {
		if !errors.Is(err, session.ErrReadOnly) || !strings.Contains(err.Error(), "version 4") {
			t.Errorf("%s: %v, want ErrReadOnly naming version 4", name, err)
		}
	}
	if l.Len() != 1 || len(l.Cursors()) != 1 {
		t.Errorf("a refused append changed the log: %d entries, %d cursors", l.Len(), len(l.Cursors()))
	}
}
