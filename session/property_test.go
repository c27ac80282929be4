package session_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/arborlog/arbor/session"
)

// model is what a user of the library expects a session to hold after a
// sequence of operations; the state machine checks the Log against it and
// against the Log read back from its own file after every step.
type model struct {
	leaf        map[string]string // cursor id → leaf id ("" before the first entry)
	cursorNames map[string]string
	order       []string // cursor ids, main first
	active      string
	name        string
	labels      map[string]string
	res         map[string]map[string]session.Resolution
}

func newModel() *model {
	return &model{
		leaf:        map[string]string{session.MainCursor: ""},
		cursorNames: map[string]string{},
		order:       []string{session.MainCursor},
		active:      session.MainCursor,
		labels:      map[string]string{},
		res:         map[string]map[string]session.Resolution{},
	}
}

type machine struct {
	l *session.Log
	m *model
}

var (
	names  = []string{"", "alpha", "beta", " gamma ", "main"}
	levels = []string{"off", "minimal", "low", "medium", "high", "xhigh"}
)

// pick draws the id of an entry (markers too when markers is set), or "" when there is none.
func (s *machine) pick(t *rapid.T, label string, markers bool) string {
	var ids []string
	for _, e := range s.l.Entries() {
		if markers || !e.IsMarker() {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return rapid.SampledFrom(ids).Draw(t, label)
}

// pickCursor draws a cursor: "" for the active one, else an id or a name.
func (s *machine) pickCursor(t *rapid.T) (handle, id string) {
	i := rapid.IntRange(-1, len(s.m.order)-1).Draw(t, "cursor")
	if i < 0 {
		return "", s.m.active
	}
	id = s.m.order[i]
	if n := s.m.cursorNames[id]; n != "" && rapid.Bool().Draw(t, "by name") {
		return n, id
	}
	return id, id
}

// appended records a successful append through cursor id.
func (s *machine) appended(t *rapid.T, id string, e *session.Entry, err error, wantParent string) {
	if err != nil {
		t.Fatalf("append through %s: %v", id, err)
	}
	if e.ParentID != wantParent {
		t.Fatalf("%s entry %s has parent %q, want the cursor's leaf %q", e.Type, e.ID, e.ParentID, wantParent)
	}
	wantCursor := id
	if id == session.MainCursor {
		wantCursor = ""
	}
	if e.Cursor != wantCursor {
		t.Fatalf("entry %s carries cursor %q, want %q", e.ID, e.Cursor, wantCursor)
	}
	s.m.leaf[id] = e.ID
	s.m.active = id
}

func (s *machine) message(t *rapid.T) session.Message {
	text := rapid.StringMatching(`[a-z "\\\n\x{2028}é]{0,12}`).Draw(t, "text")
	var raw string
	switch rapid.IntRange(0, 4).Draw(t, "role") {
	case 0:
		raw = fmt.Sprintf(`{"role":"user","content":%s,"timestamp":1}`, jsonQuote(text))
	case 1:
		raw = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/a"}}],"provider":"p","model":%s,"stopReason":"toolUse","timestamp":2,"unknownField":[1]}`,
			jsonQuote(text), jsonQuote(rapid.SampledFrom([]string{"m1", "m2"}).Draw(t, "model")))
	case 2:
		raw = fmt.Sprintf(`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":%s}],"isError":false,"timestamp":3}`, jsonQuote(text))
	case 3:
		raw = fmt.Sprintf(`{"role":"bashExecution","command":"ls","output":%s,"exitCode":1,"cancelled":false,"truncated":false,"timestamp":4}`, jsonQuote(text))
	default:
		raw = fmt.Sprintf(`{"role":"custom","customType":"x","content":%s,"display":true,"timestamp":5}`, jsonQuote(text))
	}
	return mustMessage(t, raw)
}

func (s *machine) Init(t *rapid.T) {
	s.l = session.New("/project", session.WithID("prop-session"), session.WithClock(fixedClock()))
	s.m = newModel()
}

func (s *machine) appendAction(t *rapid.T, f func(c *session.Cursor) (*session.Entry, error)) {
	h, id := s.pickCursor(t)
	parent := s.m.leaf[id]
	e, err := f(s.l.Cursor(h))
	s.appended(t, id, e, err, parent)
}

func (s *machine) AppendMessage(t *rapid.T) {
	m := s.message(t)
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) { return c.AppendMessage(m) })
}

func (s *machine) AppendThinkingLevel(t *rapid.T) {
	lv := rapid.SampledFrom(levels).Draw(t, "level")
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) { return c.AppendThinkingLevelChange(lv) })
}

func (s *machine) AppendModelChange(t *rapid.T) {
	m := rapid.SampledFrom([]string{"a", "b"}).Draw(t, "model")
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) { return c.AppendModelChange("prov", m) })
}

func (s *machine) AppendCompaction(t *rapid.T) {
	kept := ""
	if rapid.Bool().Draw(t, "keep some") {
		kept = s.pick(t, "first kept", false)
	}
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) {
		return c.AppendCompaction(session.CompactionData{Summary: "compacted", FirstKeptEntryID: kept, TokensBefore: 100})
	})
}

func (s *machine) AppendCustom(t *rapid.T) {
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) {
		return c.AppendCustom("ext.state", map[string]int{"n": 1})
	})
}

func (s *machine) AppendCustomMessage(t *rapid.T) {
	blocks := rapid.Bool().Draw(t, "blocks")
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) {
		content := session.TextContent("note")
		if blocks {
			content = session.Content{Blocks: []session.Block{{Type: "text", Text: "note"}}}
		}
		return c.AppendCustomMessage("ext.note", content, true, nil)
	})
}

func (s *machine) SetSessionName(t *rapid.T) {
	n := rapid.SampledFrom(names).Draw(t, "name")
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) { return c.SetSessionName(n) })
	s.m.name = strings.TrimSpace(n)
}

func (s *machine) SetLabel(t *rapid.T) {
	target := s.pick(t, "target", true)
	if target == "" {
		if _, err := s.l.SetLabel("nope", "x"); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("SetLabel on an empty session: %v", err)
		}
		return
	}
	label := rapid.SampledFrom([]string{"", "keep", "todo"}).Draw(t, "label")
	s.appendAction(t, func(c *session.Cursor) (*session.Entry, error) { return c.SetLabel(target, label) })
	if label == "" {
		delete(s.m.labels, target)
	} else {
		s.m.labels[target] = label
	}
}

func (s *machine) BranchTo(t *rapid.T) {
	target := s.l.Entry(s.pick(t, "target", true))
	if target == nil {
		return
	}
	h, id := s.pickCursor(t)
	err := s.l.Cursor(h).BranchTo(target.ID)
	if target.IsMarker() {
		if !errors.Is(err, session.ErrIsMarker) {
			t.Fatalf("BranchTo(marker %s) = %v, want ErrIsMarker", target.ID, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("BranchTo(%s): %v", target.ID, err)
	}
	s.m.leaf[id] = target.ID
	s.m.active = id
}

func (s *machine) BranchWithSummary(t *rapid.T) {
	target := ""
	if rapid.Bool().Draw(t, "from an entry") {
		target = s.pick(t, "target", false)
	}
	h, id := s.pickCursor(t)
	e, err := s.l.Cursor(h).BranchWithSummary(target, "left behind", nil, false)
	s.appended(t, id, e, err, target)
}

func (s *machine) NewCursor(t *rapid.T) {
	name := rapid.SampledFrom(names).Draw(t, "name")
	c, err := s.l.NewCursor(name)
	taken := false
	for _, c := range s.m.order {
		taken = taken || (strings.TrimSpace(name) != "" && (s.m.cursorNames[c] == strings.TrimSpace(name) || c == strings.TrimSpace(name)))
	}
	if taken {
		if err == nil {
			t.Fatalf("NewCursor(%q) succeeded with the name taken", name)
		}
		return
	}
	if err != nil {
		t.Fatalf("NewCursor(%q): %v", name, err)
	}
	id := c.ID()
	if len(id) != 8 || slices.Contains(s.m.order, id) {
		t.Fatalf("NewCursor returned id %q", id)
	}
	s.m.order = append(s.m.order, id)
	s.m.leaf[id] = s.m.leaf[s.m.active]
	if n := strings.TrimSpace(name); n != "" {
		s.m.cursorNames[id] = n
	}
}

func (s *machine) Switch(t *rapid.T) {
	h, id := s.pickCursor(t)
	if h == "" {
		h = id
	}
	check(t, s.l.Switch(h))
	s.m.active = id
}

func (s *machine) Rename(t *rapid.T) {
	h, id := s.pickCursor(t)
	name := strings.TrimSpace(rapid.SampledFrom(names).Draw(t, "name"))
	err := s.l.Cursor(h).Rename(name)
	for _, c := range s.m.order {
		if c != id && name != "" && (s.m.cursorNames[c] == name || c == name) {
			if err == nil {
				t.Fatalf("Name(%q) succeeded though cursor %s holds it", name, c)
			}
			return
		}
	}
	check(t, err)
	if name == "" {
		delete(s.m.cursorNames, id)
	} else {
		s.m.cursorNames[id] = name
	}
}

func (s *machine) ResetLeaf(t *rapid.T) {
	h, id := s.pickCursor(t)
	if h == "" && rapid.Bool().Draw(t, "ResetLeaf") {
		check(t, s.l.ResetLeaf())
	} else {
		check(t, s.l.Cursor(h).ResetLeaf())
	}
	s.m.leaf[id] = ""
	s.m.active = id
}

func (s *machine) SetResolution(t *rapid.T) {
	target := s.pick(t, "target", false)
	if target == "" {
		return
	}
	r := session.Resolution{Level: rapid.SampledFrom([]session.Level{session.Outlined, session.Pinned, session.Full}).Draw(t, "level")}
	h, id := s.pickCursor(t)
	check(t, s.l.Cursor(h).SetResolution(target, r))
	if s.m.res[id] == nil {
		s.m.res[id] = map[string]session.Resolution{}
	}
	s.m.res[id][target] = r // the cursor's leaf stays, and the active cursor too
}

func (s *machine) Reopen(t *rapid.T) {
	s.l = session.Load(serialize(s.l), session.WithClock(fixedClock()))
}

// Branched continues with a branched session from a random entry's path, as
// after `arbor fork`.
func (s *machine) Branched(t *rapid.T) {
	leaf := s.l.Entry(s.pick(t, "leaf", false))
	if leaf == nil {
		return
	}
	nb, err := s.l.Branched(leaf.ID, session.WithParent("/old.jsonl"), session.WithClock(fixedClock()))
	check(t, err)
	want := texts(t, s.l.ContextAt(&leaf.ID))
	if diff := cmp.Diff(want, texts(t, nb.Context())); diff != "" {
		t.Fatalf("branched session's context differs from the leaf's (-want +got):\n%s", diff)
	}
	path := map[string]bool{}
	for _, e := range s.l.PathTo(leaf.ID) {
		if e.Type != session.TypeLabel {
			path[e.ID] = true
		}
	}
	m := newModel()
	for _, e := range nb.Entries() {
		if e.Cursor != "" {
			t.Fatalf("branched entry %s keeps cursor %q", e.ID, e.Cursor)
		}
		if e.Type != session.TypeLabel && !path[e.ID] {
			t.Fatalf("branched entry %s is not on the path to %s", e.ID, leaf.ID)
		}
	}
	for id := range path {
		if lb := s.l.Label(id); lb != "" {
			m.labels[id] = lb
		}
	}
	if nb.Leaf() != nil {
		m.leaf[session.MainCursor] = nb.Leaf().ID
	}
	for _, e := range s.l.PathTo(leaf.ID) {
		if e.Type == session.TypeSessionInfo {
			var v struct {
				Name string `json:"name"`
			}
			check(t, e.Decode(&v))
			m.name = v.Name
		}
	}
	s.l, s.m = nb, m
}

// Check runs after every step.
func (s *machine) Check(t *rapid.T) {
	checkInvariants(t, s.l, s.m)
	r := reopen(s.l)
	if !r.Report().Clean() {
		t.Fatalf("reopened file is not clean: %+v", r.Report())
	}
	checkInvariants(t, r, s.m)
	if diff := cmp.Diff(s.l.Cursors(), r.Cursors()); diff != "" {
		t.Fatalf("cursors changed on reopen (-before +after):\n%s", diff)
	}
	for _, c := range s.m.order {
		before, after := contextJSON(t, s.l.Cursor(c).Context()), contextJSON(t, r.Cursor(c).Context())
		if before != after {
			t.Fatalf("cursor %s: context changed on reopen:\nbefore %s\nafter  %s", c, before, after)
		}
		if diff := cmp.Diff(s.l.Cursor(c).Resolutions(), r.Cursor(c).Resolutions()); diff != "" {
			t.Fatalf("cursor %s: resolutions changed on reopen: %s", c, diff)
		}
	}
	if diff := cmp.Diff(treeShape(s.l.Tree()), treeShape(r.Tree())); diff != "" {
		t.Fatalf("tree changed on reopen: %s", diff)
	}
}

func treeShape(ns []*session.TreeNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Entry.ID+"["+strings.Join(treeShape(n.Children), ",")+"]"+n.Label)
	}
	return out
}

func checkInvariants(t *rapid.T, l *session.Log, m *model) {
	// Every entry reachable from exactly one root exactly once; parents valid.
	seen := map[string]int{}
	var walk func(ns []*session.TreeNode, parent string)
	walk = func(ns []*session.TreeNode, parent string) {
		for _, n := range ns {
			seen[n.Entry.ID]++
			if n.Entry.ParentID != parent {
				t.Fatalf("entry %s (parent %q) is under %q", n.Entry.ID, n.Entry.ParentID, parent)
			}
			if n.Label != m.labels[n.Entry.ID] {
				t.Fatalf("tree label of %s = %q, want %q", n.Entry.ID, n.Label, m.labels[n.Entry.ID])
			}
			walk(n.Children, n.Entry.ID)
		}
	}
	walk(l.Tree(), "")
	if len(seen) != l.Len() {
		t.Fatalf("%d entries in the tree, %d in the log", len(seen), l.Len())
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("entry %s appears %d times in the tree", id, k)
		}
	}
	for _, e := range l.Entries() {
		if seen[e.ID] != 1 {
			t.Fatalf("entry %s is not in the tree", e.ID)
		}
		if got, want := l.Label(e.ID), m.labels[e.ID]; got != want {
			t.Fatalf("Label(%s) = %q, want %q", e.ID, got, want)
		}
	}

	if got := l.Active(); got != m.active {
		t.Fatalf("active cursor %s, want %s", got, m.active)
	}
	if got := l.SessionName(); got != m.name {
		t.Fatalf("Name() = %q, want %q", got, m.name)
	}
	var gotCursors []string
	for _, ci := range l.Cursors() {
		gotCursors = append(gotCursors, ci.ID)
		if ci.Leaf != m.leaf[ci.ID] {
			t.Fatalf("cursor %s leaf %q, want %q", ci.ID, ci.Leaf, m.leaf[ci.ID])
		}
		if ci.Name != m.cursorNames[ci.ID] {
			t.Fatalf("cursor %s name %q, want %q", ci.ID, ci.Name, m.cursorNames[ci.ID])
		}
		if ci.Active != (ci.ID == m.active) {
			t.Fatalf("cursor %s active %v", ci.ID, ci.Active)
		}
		if !maps.Equal(l.Cursor(ci.ID).Resolutions(), m.res[ci.ID]) {
			t.Fatalf("cursor %s resolutions %v, want %v", ci.ID, l.Cursor(ci.ID).Resolutions(), m.res[ci.ID])
		}
		// The branch to the leaf runs from a root to the leaf.
		if ci.Leaf != "" {
			b := l.PathTo(ci.Leaf)
			if len(b) == 0 || b[0].ParentID != "" || b[len(b)-1].ID != ci.Leaf {
				t.Fatalf("Branch(%s) = %v", ci.Leaf, ids(b))
			}
		}
		// Markers never reach a context.
		for _, cm := range l.Cursor(ci.ID).Context().Messages {
			if cm.Entry.IsMarker() {
				t.Fatalf("marker %s in cursor %s's context", cm.Entry.ID, ci.ID)
			}
		}
	}
	if diff := cmp.Diff(m.order, gotCursors); diff != "" {
		t.Fatalf("cursor roster (-want +got):\n%s", diff)
	}
	// pi, which ignores cursors, continues from the file's last line: that is
	// the active cursor's context.
	if es := l.Entries(); len(es) > 0 {
		last := es[len(es)-1].ID
		if pi, active := contextJSON(t, l.ContextAt(&last)), contextJSON(t, l.Context()); pi != active {
			t.Fatalf("context from the last line %s:\n%s\nactive cursor %s:\n%s", last, pi, l.Active(), active)
		}
	}
	if leaf := l.Leaf(); (leaf == nil) != (m.leaf[m.active] == "") || (leaf != nil && leaf.ID != m.leaf[m.active]) {
		t.Fatalf("Leaf() = %v, want %q", leaf, m.leaf[m.active])
	}
}

func TestPropertySessionStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := &machine{}
		s.Init(t)
		t.Repeat(map[string]func(*rapid.T){
			"AppendMessage":       s.AppendMessage,
			"AppendThinkingLevel": s.AppendThinkingLevel,
			"AppendModelChange":   s.AppendModelChange,
			"AppendCompaction":    s.AppendCompaction,
			"AppendCustom":        s.AppendCustom,
			"AppendCustomMessage": s.AppendCustomMessage,
			"SetSessionName":      s.SetSessionName,
			"SetLabel":            s.SetLabel,
			"BranchTo":            s.BranchTo,
			"BranchWithSummary":   s.BranchWithSummary,
			"NewCursor":           s.NewCursor,
			"Switch":              s.Switch,
			"Rename":              s.Rename,
			"ResetLeaf":           s.ResetLeaf,
			"SetResolution":       s.SetResolution,
			"Reopen":              s.Reopen,
			"Branched":            s.Branched,
			"":                    s.Check,
		})
	})
}
