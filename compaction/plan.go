package compaction

import (
	"errors"
	"fmt"
	"slices"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Errors a plan can fail with.
var (
	// ErrNothingToCompact: the branch is empty or already ends in a compaction.
	ErrNothingToCompact = errors.New("compaction: nothing to compact")
	// ErrNoIDs: the entry to keep from has no id (pi asks for a migration here;
	// arbor migrates on load, so only a damaged file gets this).
	ErrNoIDs = errors.New("compaction: the first kept entry has no id")
	// ErrNotOnBranch: a firstKeptEntryId that is not on the branch being compacted.
	ErrNotOnBranch = errors.New("compaction: first kept entry is not on the branch")
)

// Plan is what to summarize and what to keep when compacting a branch: pi
// 0.73.1's prepareCompaction, plus the guarantee that no kept tool result loses
// its call.
type Plan struct {
	// FirstKeptEntryID is where the kept part of the branch starts.
	FirstKeptEntryID string
	// IsSplitTurn: the cut falls inside a turn; the turn's start (the prefix,
	// TurnPrefixMessages) is summarized separately.
	IsSplitTurn bool
	// TokensBefore is pi's estimate of the context before compacting.
	TokensBefore int
	// MessagesToSummarize run from the previous compaction's kept part (or the
	// root) to the cut, or to the turn's start for a split turn.
	MessagesToSummarize []session.ContextMessage
	TurnPrefixMessages  []session.ContextMessage
	// PreviousSummary is the summary of the last compaction on the branch, if any.
	PreviousSummary *string
	// ReadFiles were read and not modified; ModifiedFiles were written or edited.
	// Both are sorted and include the previous compaction's lists.
	ReadFiles, ModifiedFiles []string
	// MovedFrom is the entry pi would have kept from when arbor moved the cut
	// earlier to keep a tool result with its call; "" when pi's cut was safe.
	MovedFrom string

	// Path is the branch the plan was made on, root first, and the indexes into it.
	Path           []*session.Entry
	BoundaryStart  int // first entry after the previous compaction's summary
	FirstKeptIndex int
	TurnStartIndex int // -1 unless IsSplitTurn
}

// planJSON is the shape of SPEC §10 (`arbor compact --dry-run --json`), which
// is what pi's peer prints for prepareCompaction.
type planJSON struct {
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

// MarshalJSON writes the plan as SPEC §10 defines it: the two message fields
// are counts. movedFrom appears only when arbor moved pi's cut.
func (p *Plan) MarshalJSON() ([]byte, error) {
	return json.Marshal(planJSON{p.FirstKeptEntryID, p.IsSplitTurn, p.TokensBefore, len(p.MessagesToSummarize),
		len(p.TurnPrefixMessages), p.PreviousSummary, nonNil(p.ReadFiles), nonNil(p.ModifiedFiles), p.MovedFrom})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// compactionFields are the parts of a compaction entry the planner reads.
type compactionFields struct {
	Summary          string         `json:"summary"`
	FirstKeptEntryID string         `json:"firstKeptEntryId"`
	Details          jsontext.Value `json:"details"`
	FromHook         jsontext.Value `json:"fromHook"`
}

func compactionOf(e *session.Entry) compactionFields {
	var c compactionFields
	_ = json.Unmarshal(e.Raw(), &c, decodeOptions)
	return c
}

// Prepare plans the compaction of a branch (root first, as Log.Branch returns
// it) the way pi 0.73.1's prepareCompaction does:
//
//   - the part already summarized is skipped: planning starts at the previous
//     compaction's first kept entry (so what it kept is summarized now), or just
//     after it when that entry is not on the branch;
//   - walking back from the leaf, messages are kept until their estimates reach
//     s.KeepRecentTokens; the cut lands on the next entry a context may start
//     with (never a tool result), moved back over settings and other entries
//     that are not messages;
//   - a cut inside a turn is a split turn: the turn's start is summarized apart;
//   - files read and modified come from the summarized tool calls and from the
//     previous compaction's details (unless an extension wrote it).
//
// Where pi's cut would still leave a kept tool result without its call (a
// previous compaction that kept from a tool result, as older pi versions and
// extensions wrote), the cut moves back to the assistant message holding the
// call and MovedFrom records pi's choice.
//
// Prepare fails with ErrNothingToCompact on an empty branch or one whose last
// entry is a compaction.
func Prepare(path []*session.Entry, s Settings) (*Plan, error) {
	if len(path) == 0 || path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrNothingToCompact
	}
	p, prev := start(path)
	cut := findCutPoint(path, p.BoundaryStart, len(path), s.KeepRecentTokens)
	if cut.firstKept >= len(path) {
		return nil, ErrNothingToCompact
	}
	if safe := keepToolPairs(path, cut.firstKept); safe != cut.firstKept {
		p.MovedFrom = path[cut.firstKept].ID
		cut = cutAt(path, min(p.BoundaryStart, safe), safe)
	}
	if err := p.fill(cut, prev); err != nil {
		return nil, err
	}
	return p, nil
}

// fill sets the plan's messages and file lists for a cut.
func (p *Plan) fill(cut cutPoint, prev int) error {
	path := p.Path
	if path[cut.firstKept].ID == "" {
		return ErrNoIDs
	}
	p.FirstKeptEntryID = path[cut.firstKept].ID
	p.FirstKeptIndex = cut.firstKept
	p.IsSplitTurn = cut.splitTurn
	historyEnd := cut.firstKept
	if cut.splitTurn {
		p.TurnStartIndex = cut.turnStart
		historyEnd = cut.turnStart
	}
	p.MessagesToSummarize = messagesOf(path, p.BoundaryStart, historyEnd)
	if cut.splitTurn {
		p.TurnPrefixMessages = messagesOf(path, cut.turnStart, cut.firstKept)
	}
	ops := newFileOps()
	if prev >= 0 {
		ops.addDetails(compactionOf(path[prev]))
	}
	for _, m := range p.MessagesToSummarize {
		ops.addMessage(m)
	}
	for _, m := range p.TurnPrefixMessages {
		ops.addMessage(m)
	}
	p.ReadFiles, p.ModifiedFiles = ops.lists()
	return nil
}

func lastCompaction(path []*session.Entry) int {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == session.TypeCompaction {
			return i
		}
	}
	return -1
}

func indexOf(path []*session.Entry, id string) int {
	return slices.IndexFunc(path, func(e *session.Entry) bool { return e.ID == id })
}

// messagesOf returns the messages of path[from:to] as a summarizer reads them;
// compactions are left out (their summary arrives as PreviousSummary).
func messagesOf(path []*session.Entry, from, to int) []session.ContextMessage {
	var out []session.ContextMessage
	for i := from; i < to; i++ {
		if path[i].Type == session.TypeCompaction {
			continue
		}
		if m, ok := path[i].AsMessage(); ok {
			out = append(out, m)
		}
	}
	return out
}

// contextOf is buildSessionContext(path).messages: what the model sees from the
// branch's leaf (SPEC §6.4).
func contextOf(path []*session.Entry) []session.ContextMessage {
	var out []session.ContextMessage
	emit := func(e *session.Entry) {
		if e.Type == session.TypeCompaction {
			return
		}
		m, ok := e.AsMessage()
		if !ok {
			return
		}
		if e.Type == session.TypeBranchSummary {
			var v struct {
				Summary jsontext.Value `json:"summary"`
			}
			_ = json.Unmarshal(e.Raw(), &v, decodeOptions)
			if !jsTruthy(v.Summary) {
				return
			}
		}
		out = append(out, m)
	}
	c := lastCompaction(path)
	if c < 0 {
		for _, e := range path {
			emit(e)
		}
		return out
	}
	m, _ := path[c].AsMessage()
	out = append(out, m)
	first := compactionOf(path[c]).FirstKeptEntryID
	if k := indexOf(path[:c], first); k >= 0 {
		for _, e := range path[k:c] {
			emit(e)
		}
	}
	for _, e := range path[c+1:] {
		emit(e)
	}
	return out
}

// jsTruthy is JavaScript's truthiness for a JSON value.
func jsTruthy(v jsontext.Value) bool {
	switch string(v) {
	case "", "null", "false", "0", `""`, "-0":
		return false
	}
	return true
}

// cutPoint is pi's CutPointResult.
type cutPoint struct {
	firstKept int
	turnStart int
	splitTurn bool
}

// isCutPoint reports whether a context may start at this entry: user,
// assistant, bash, custom and summary messages, branch summaries and custom
// messages. Never a tool result, which must follow its call.
func isCutPoint(e *session.Entry) bool {
	switch e.Type {
	case session.TypeMessage:
		switch e.Role() {
		case session.RoleBashExecution, session.RoleCustom, session.RoleBranchSummary, session.RoleCompactionSummary,
			session.RoleUser, session.RoleAssistant:
			return true
		}
	case session.TypeBranchSummary, session.TypeCustomMessage:
		return true
	}
	return false
}

// findTurnStart is pi's findTurnStartIndex: the user message, bash execution,
// branch summary or custom message that starts the turn holding entry i, or -1.
func findTurnStart(path []*session.Entry, i, start int) int {
	for ; i >= start; i-- {
		e := path[i]
		if e.Type == session.TypeBranchSummary || e.Type == session.TypeCustomMessage {
			return i
		}
		if e.Type == session.TypeMessage && (e.Role() == session.RoleUser || e.Role() == session.RoleBashExecution) {
			return i
		}
	}
	return -1
}

// findCutPoint is pi's findCutPoint over path[start:end].
func findCutPoint(path []*session.Entry, start, end, keepRecentTokens int) cutPoint {
	var cuts []int
	for i := start; i < end; i++ {
		if isCutPoint(path[i]) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return cutPoint{firstKept: start, turnStart: -1}
	}
	cut := cuts[0]
	acc := 0
	for i := end - 1; i >= start; i-- {
		if path[i].Type != session.TypeMessage {
			continue
		}
		m, ok := path[i].AsMessage()
		if ok {
			acc += EstimateTokens(m)
		}
		if acc >= keepRecentTokens {
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	for cut > start {
		prev := path[cut-1]
		if prev.Type == session.TypeCompaction || prev.Type == session.TypeMessage {
			break
		}
		cut--
	}
	return cutAt(path, start, cut)
}

// cutAt decides whether a cut at path[cut] splits a turn that starts at or after start.
func cutAt(path []*session.Entry, start, cut int) cutPoint {
	e := path[cut]
	if e.Type == session.TypeMessage && e.Role() == session.RoleUser {
		return cutPoint{firstKept: cut, turnStart: -1}
	}
	ts := findTurnStart(path, cut, start)
	return cutPoint{firstKept: cut, turnStart: ts, splitTurn: ts != -1}
}

// keepToolPairs returns the earliest index at or before cut from which every
// kept tool result (in path[cut:]) also keeps the assistant message that called
// it: the cut moves back to that message until no kept result points before it.
// Results whose call is nowhere before them on the path cannot be helped and
// are ignored. Only the kept part, and what the cut moves over, is decoded.
func keepToolPairs(path []*session.Entry, cut int) int {
	if cut >= len(path) {
		return cut
	}
	called := map[string]bool{} // tool call ids in path[cut:]
	var pending []string        // kept results' call ids not (yet) seen among the kept calls
	scan := func(from, to int) {
		for _, e := range path[from:to] {
			if e.Type != session.TypeMessage {
				continue
			}
			switch e.Role() {
			case session.RoleAssistant:
				for _, id := range callIDs(e) {
					called[id] = true
				}
			case session.RoleToolResult:
				if id := resultCallID(e); id != "" {
					pending = append(pending, id)
				}
			}
		}
	}
	scan(cut, len(path))
	for {
		var missing []string
		for _, id := range pending {
			if !called[id] {
				missing = append(missing, id)
			}
		}
		pending = missing
		if len(pending) == 0 {
			return cut
		}
		// Move back to the nearest earlier assistant message that made one of
		// the missing calls, taking in everything on the way.
		want := map[string]bool{}
		for _, id := range pending {
			want[id] = true
		}
		to := cut
		for cut--; cut >= 0; cut-- {
			if e := path[cut]; e.Type == session.TypeMessage && e.Role() == session.RoleAssistant && slices.ContainsFunc(callIDs(e), func(id string) bool { return want[id] }) {
				break
			}
		}
		if cut < 0 { // the calls are not on the path: nothing to keep them with
			return to
		}
		scan(cut, to)
		if !slices.ContainsFunc(pending, func(id string) bool { return !called[id] && callBefore(path, cut, id) }) {
			return cut
		}
	}
}

// callBefore reports whether an assistant message before index i made call id.
func callBefore(path []*session.Entry, i int, id string) bool {
	for _, e := range path[:i] {
		if e.Type == session.TypeMessage && e.Role() == session.RoleAssistant && slices.Contains(callIDs(e), id) {
			return true
		}
	}
	return false
}

// callIDs returns the ids of an assistant message's tool calls.
func callIDs(e *session.Entry) []string {
	m, _ := e.AsMessage()
	var v struct {
		Content jsontext.Value `json:"content"`
	}
	if json.Unmarshal(m.Raw, &v, decodeOptions) != nil || v.Content.Kind() != '[' {
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	_ = json.Unmarshal(v.Content, &blocks, decodeOptions)
	var ids []string
	for _, b := range blocks {
		if b.Type == "toolCall" && b.ID != "" {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// resultCallID returns the call id a tool result answers.
func resultCallID(e *session.Entry) string {
	m, _ := e.AsMessage()
	var r struct {
		ToolCallID string `json:"toolCallId"`
	}
	_ = json.Unmarshal(m.Raw, &r, decodeOptions)
	return r.ToolCallID
}

// SafeFirstKept checks a firstKeptEntryId chosen by a caller (an extension, a
// model, an older program) against the branch the compaction will be appended
// to, and moves it back when keeping from there would leave a tool result
// without its call. It returns the id to use, and ErrNotOnBranch for an id that
// is not on the branch.
func SafeFirstKept(path []*session.Entry, firstKeptID string) (string, error) {
	i := indexOf(path, firstKeptID)
	if i < 0 {
		return "", fmt.Errorf("%w: %s", ErrNotOnBranch, firstKeptID)
	}
	return path[keepToolPairs(path, i)].ID, nil
}

// fileOps collects pi's file operations: read, written and edited paths.
type fileOps struct {
	read, modified map[string]bool
}

func newFileOps() *fileOps { return &fileOps{read: map[string]bool{}, modified: map[string]bool{}} }

// addMessage records the files an assistant message's tool calls touched: read
// reads, write and edit modify (pi's extractFileOpsFromMessage).
func (o *fileOps) addMessage(m session.ContextMessage) {
	if m.Role != session.RoleAssistant {
		return
	}
	for _, b := range decode(m.Raw).Content.Blocks {
		if b.Type != "toolCall" || len(b.Arguments) == 0 {
			continue
		}
		var args struct {
			Path jsontext.Value `json:"path"`
		}
		if json.Unmarshal(b.Arguments, &args, decodeOptions) != nil || args.Path.Kind() != '"' {
			continue
		}
		var p string
		if json.Unmarshal(args.Path, &p, decodeOptions) != nil || p == "" {
			continue
		}
		switch b.Name {
		case "read":
			o.read[p] = true
		case "write", "edit":
			o.modified[p] = true
		}
	}
}

// addDetails adds a previous summary's file lists, unless an extension made it
// (fromHook), whose details need not be file lists.
func (o *fileOps) addDetails(c compactionFields) {
	if jsTruthy(c.FromHook) || len(c.Details) == 0 {
		return
	}
	var d struct {
		ReadFiles     []jsontext.Value `json:"readFiles"`
		ModifiedFiles []jsontext.Value `json:"modifiedFiles"`
	}
	if json.Unmarshal(c.Details, &d, decodeOptions) != nil {
		return
	}
	add := func(set map[string]bool, vs []jsontext.Value) {
		for _, v := range vs {
			var s string
			if v.Kind() == '"' && json.Unmarshal(v, &s, decodeOptions) == nil {
				set[s] = true
			}
		}
	}
	add(o.read, d.ReadFiles)
	add(o.modified, d.ModifiedFiles)
}

// lists returns the files only read and the files modified, each sorted as
// JavaScript sorts strings.
func (o *fileOps) lists() (read, modified []string) {
	read, modified = []string{}, []string{}
	for f := range o.read {
		if !o.modified[f] {
			read = append(read, f)
		}
	}
	for f := range o.modified {
		modified = append(modified, f)
	}
	slices.SortFunc(read, jsLess)
	slices.SortFunc(modified, jsLess)
	return read, modified
}

// FormatFiles is pi's formatFileOperations: the file lists appended to a summary.
func FormatFiles(read, modified []string) string {
	var s string
	if len(read) > 0 {
		s += "\n\n<read-files>\n" + joinLines(read) + "\n</read-files>"
	}
	if len(modified) > 0 {
		s += "\n\n<modified-files>\n" + joinLines(modified) + "\n</modified-files>"
	}
	return s
}

func joinLines(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += "\n"
		}
		out += s
	}
	return out
}
