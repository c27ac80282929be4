package compaction

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json"
)

// More errors.
var (
	// ErrNoCompaction: Undo found no compaction on the branch.
	ErrNoCompaction = errors.New("compaction: no compaction on the current branch")
	// ErrBelowThreshold: CompactOlderThan found less than the threshold to compact.
	ErrBelowThreshold = errors.New("compaction: less than the threshold to compact")
)

// Options configure Compact and CompactOlderThan.
type Options struct {
	Settings     Settings   // the zero value means DefaultSettings
	Summarizer   Summarizer // nil means Mechanical
	Instructions string     // focus for the summary ("Additional focus: …")
}

func (o Options) settings() Settings {
	if o.Settings == (Settings{}) {
		return DefaultSettings
	}
	return o.Settings
}

func (o Options) summarizer() Summarizer {
	if o.Summarizer == nil {
		return Mechanical{}
	}
	return o.Summarizer
}

// Compact compacts a cursor's branch (log.Cursor("") for the active one): it
// plans as pi does (Prepare), summarizes, and appends the compaction through
// the cursor, which becomes its leaf. When the summarizer fails nothing is
// appended.
func Compact(ctx context.Context, c *session.Cursor, o Options) (*session.Entry, *Plan, error) {
	plan, err := Prepare(branch(c), o.settings())
	if err != nil {
		return nil, nil, err
	}
	e, err := summarizeAndAppend(ctx, c, plan, o)
	return e, plan, err
}

// CompactOlderThan compacts the oldest part of the branch (rho's
// compact_older_than): from the start of what is not yet summarized, messages
// are summarized until their estimates reach threshold tokens, and the context
// keeps everything from the next entry a context may start with. It fails with
// ErrBelowThreshold when the branch holds less than that beyond its leaf.
func CompactOlderThan(ctx context.Context, c *session.Cursor, threshold int, o Options) (*session.Entry, *Plan, error) {
	plan, err := PrepareOlderThan(branch(c), threshold)
	if err != nil {
		return nil, nil, err
	}
	e, err := summarizeAndAppend(ctx, c, plan, o)
	return e, plan, err
}

// branch is the path from the root to a cursor's leaf (empty before the first entry).
func branch(c *session.Cursor) []*session.Entry {
	if leaf := c.Leaf(); leaf != nil {
		return c.Log().PathTo(leaf.ID)
	}
	return nil
}

func summarizeAndAppend(ctx context.Context, c *session.Cursor, plan *Plan, o Options) (*session.Entry, error) {
	res, err := Summarize(ctx, plan, o.summarizer(), o.Instructions, o.settings().ReserveTokens)
	if err != nil {
		return nil, err
	}
	return Append(c, res)
}

// PrepareOlderThan plans a compaction of the oldest threshold tokens of a
// branch that are not yet summarized (see CompactOlderThan).
func PrepareOlderThan(path []*session.Entry, threshold int) (*Plan, error) {
	if len(path) == 0 || path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrNothingToCompact
	}
	p, prev := start(path, "")
	acc, cut := 0, -1
	for i := p.BoundaryStart; i < len(p.Path)-1 && cut < 0; i++ {
		if p.Path[i].Type == session.TypeCompaction {
			continue
		}
		for _, m := range p.Projected[i].Messages {
			if m.Role != session.RoleSystem {
				acc += EstimateTokens(m)
			}
		}
		if acc < threshold {
			continue
		}
		for j := i + 1; j < len(p.Path); j++ {
			if isCutPoint(p.Projected[j]) {
				cut = j
				break
			}
		}
		break
	}
	if cut < 0 {
		return nil, fmt.Errorf("%w: %d tokens before the leaf, threshold %d", ErrBelowThreshold, acc, threshold)
	}
	cut = keepToolPairs(len(p.Projected), projectedMessages(p.Projected), cut)
	if err := p.fill(cutAt(p.Projected, min(p.BoundaryStart, cut), cut), prev); err != nil {
		return nil, err
	}
	return p, nil
}

// Append appends a compaction result through a cursor. Its firstKeptEntryId
// must be on the cursor's branch; where keeping from it would leave a tool
// result without its call, it is moved back to the call (SafeFirstKept).
func Append(c *session.Cursor, r Result) (*session.Entry, error) {
	id, err := SafeFirstKept(branch(c), r.FirstKeptEntryID)
	if err != nil {
		return nil, err
	}
	details, err := json.Marshal(struct {
		ReadFiles     []string `json:"readFiles"`
		ModifiedFiles []string `json:"modifiedFiles"`
	}{nonNil(r.ReadFiles), nonNil(r.ModifiedFiles)})
	if err != nil {
		return nil, fmt.Errorf("compaction: encode details: %w", err)
	}
	d := session.CompactionData{Summary: r.Summary, FirstKeptEntryID: id, TokensBefore: r.TokensBefore, Details: details}
	if r.Usage != nil {
		if d.Usage, err = json.Marshal(r.Usage); err != nil {
			return nil, fmt.Errorf("compaction: encode usage: %w", err)
		}
	}
	return c.AppendCompaction(d)
}

// Undone describes what Undo did.
type Undone struct {
	Compaction *session.Entry // the compaction undone
	From       string         // the leaf before Undo
	To         string         // the leaf after: the compaction's parent ("" for none)
	// Left is how many entries after the compaction are no longer on the
	// branch; they stay in the tree under From.
	Left int
}

// Undo moves a cursor's leaf back to where it was when the last
// compaction on its branch was appended, the compaction's parent, so the
// context is again exactly what it was before that compaction. Nothing is
// deleted: the compaction and anything appended after it stay in the tree, and
// moving the leaf back to From restores them.
func Undo(c *session.Cursor) (Undone, error) {
	leaf := c.Leaf()
	if leaf == nil {
		return Undone{}, ErrNoCompaction
	}
	path := c.Log().PathTo(leaf.ID)
	i := lastCompaction(path)
	if i < 0 {
		return Undone{}, ErrNoCompaction
	}
	u := Undone{Compaction: path[i], From: leaf.ID, To: path[i].ParentID, Left: len(path) - i - 1}
	var err error
	if u.To == "" {
		err = c.ResetLeaf()
	} else {
		err = c.BranchTo(u.To)
	}
	if err != nil {
		return Undone{}, fmt.Errorf("compaction: undo %s: %w", path[i].ID, err)
	}
	return u, nil
}

// Coverage is what a compaction entry stands for in its branch.
type Coverage struct {
	// Replaced are the entries it summarized that no earlier compaction had:
	// from the previous compaction's first kept entry (or the root) to its own.
	Replaced []*session.Entry
	// Kept are the entries before it that the context still shows, from its
	// first kept entry on; empty when that entry is not on its branch.
	Kept []*session.Entry
	// Previous is the compaction it rolled forward, or nil.
	Previous *session.Entry
	// Summary, FirstKeptEntryID and TokensBefore are the entry's fields.
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int
}

// Covers reports what a compaction entry of l replaced and kept.
func Covers(l *session.Log, id string) (Coverage, error) {
	e := l.Entry(id)
	if e == nil {
		return Coverage{}, fmt.Errorf("%w: %s", session.ErrNotFound, id)
	}
	if e.Type != session.TypeCompaction {
		return Coverage{}, fmt.Errorf("compaction: entry %s is a %s, not a compaction", id, e.Type)
	}
	path := l.PathTo(id)
	path = path[:len(path)-1]
	c := compactionOf(e)
	var tokens struct {
		TokensBefore float64 `json:"tokensBefore"`
	}
	_ = json.Unmarshal(e.Raw(), &tokens, decodeOptions)
	cov := Coverage{Summary: c.Summary, FirstKeptEntryID: c.FirstKeptEntryID, TokensBefore: int(tokens.TokensBefore)}
	boundary := 0
	if prev := lastCompaction(path); prev >= 0 {
		cov.Previous = path[prev]
		boundary = prev + 1
		if i := indexOf(path, compactionOf(path[prev]).FirstKeptEntryID); i >= 0 {
			boundary = i
		}
	}
	end := indexOf(path, c.FirstKeptEntryID)
	if end < 0 {
		end = len(path)
	} else {
		cov.Kept = path[end:]
	}
	for _, x := range path[min(boundary, end):end] {
		if x.Type != session.TypeCompaction {
			cov.Replaced = append(cov.Replaced, x)
		}
	}
	return cov, nil
}

// start begins a plan for path on its projection: the previous compaction's
// summary, where summarizing starts again, and TokensBefore. It returns the
// previous compaction's index in the projection, or -1.
//
// keepFrom, when not "", overrides where the latest compaction keeps from
// (session.ProjectPathFrom).
func start(path []*session.Entry, keepFrom string) (*Plan, int) {
	proj := session.ProjectPathFrom(path, keepFrom)
	p := &Plan{Projected: proj.Entries, proj: proj, Path: make([]*session.Entry, len(proj.Entries)), TurnStartIndex: -1}
	prev := -1
	for i, e := range proj.Entries {
		p.Path[i] = e.Entry
		if prev < 0 && e.Entry.Type == session.TypeCompaction && len(e.Messages) > 0 {
			prev = i
		}
	}
	if prev >= 0 {
		c := compactionOf(p.Path[prev])
		p.PreviousSummary = &c.Summary
		p.BoundaryStart = prev + 1
	}
	p.TokensBefore = EstimateProjected(proj, path).Tokens
	return p, prev
}

// strayResults finds tool results in es[from:] whose call is nowhere in es:
// the latest compaction on the path kept them without their call (as pi before
// 0.60 and extensions could write it). It returns the earliest entry the
// compaction cut off that holds one of those calls, from which planning must
// start again; "" when nothing is stray. (A call hidden by a context edit is
// the editor's choice and stays hidden.)
func strayResults(path []*session.Entry, es []session.Projected, from int) string {
	c := lastCompaction(path)
	if c < 0 || from >= len(es) {
		return ""
	}
	called := map[string]bool{}
	for _, e := range es {
		for _, m := range e.Messages {
			if m.Role == session.RoleAssistant {
				for _, id := range callIDs(m) {
					called[id] = true
				}
			}
		}
	}
	want := map[string]bool{}
	for _, e := range es[max(from, 1):] {
		for _, m := range e.Messages {
			if m.Role == session.RoleToolResult {
				if id := resultCallID(m); id != "" && !called[id] {
					want[id] = true
				}
			}
		}
	}
	if len(want) == 0 {
		return ""
	}
	in := map[*session.Entry]bool{}
	for _, e := range es {
		in[e.Entry] = true
	}
	for _, e := range path[:c] {
		if in[e] || e.Type != session.TypeMessage || e.Role() != session.RoleAssistant {
			continue // only what the compaction cut off can be taken back
		}
		for _, m := range e.ContextMessages() {
			if slices.ContainsFunc(callIDs(m), func(id string) bool { return want[id] }) {
				return e.ID
			}
		}
	}
	return ""
}

// NeedsCompaction reports whether a context (Log.Context().Messages) should be
// compacted for a model with this window (pi's trigger, ShouldCompact), and the
// estimate it decided on.
func NeedsCompaction(msgs []session.ContextMessage, contextWindow int, s Settings) (bool, Estimate) {
	est := EstimateContext(msgs)
	return ShouldCompact(est.Tokens, contextWindow, s), est
}
