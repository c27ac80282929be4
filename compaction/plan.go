package compaction

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/arborlog/arbor/internal/js"
	"maps"
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
// 1.6.0's prepareCompaction, plus the guarantee that no kept tool result loses
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

	// Path is what the plan was made on: the entries of the branch's projection
	// (session.ProjectPath: the latest compaction first, then what it kept, then
	// what came after it), and Projected those entries with their messages.
	// The indexes below are into both.
	Path           []*session.Entry
	Projected      []session.Projected
	BoundaryStart  int // first entry after the previous compaction
	FirstKeptIndex int
	TurnStartIndex int // -1 unless IsSplitTurn

	proj session.Projection // whose Entries are Projected
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

// Prepare plans the compaction of a branch (root first, as Log.PathTo returns
// it) the way pi 1.6.0's prepareCompaction does, over the branch's projection
// (context edits applied, system messages left out of what is summarized):
//
//   - the part already summarized is skipped: planning starts after the
//     previous compaction, whose kept part the projection puts right after it
//     (so what it kept is summarized now);
//   - walking back from the leaf, the messages of each entry are kept until
//     their estimates reach s.KeepRecentTokens; the cut lands on the next entry
//     a context may start with (never a tool result), or on the last one when
//     only trailing tool results follow, and moves back over entries that
//     contribute no message; a closed run of omitted assistant attempts after
//     it (recovery omissions) is stepped over;
//   - a cut inside a turn is a split turn: the turn's start is summarized apart;
//   - files read and modified come from the summarized tool calls, the nested
//     calls recorded on tool results and the previous compaction's details
//     (unless an extension wrote it).
//
// Where the context would still hold a tool result without its call (a
// previous compaction that kept from a tool result, as older pi versions and
// extensions wrote), planning starts again from the assistant message holding
// the call, or the cut moves back to it, and MovedFrom records where pi would
// have kept from. Such a plan is made even with nothing to summarize, since
// appending it repairs the context.
//
// Prepare fails with ErrNothingToCompact on an empty branch, one whose last
// entry is a compaction, and one with nothing to summarize (pi makes no plan).
func Prepare(path []*session.Entry, s Settings) (*Plan, error) {
	if len(path) == 0 || path[len(path)-1].Type == session.TypeCompaction {
		return nil, ErrNothingToCompact
	}
	p, err := prepare(path, s, "")
	kept := len(path) // where the context pi leaves would start: the plan's cut, or the previous compaction's kept part
	var piKept string
	if err == nil {
		kept, piKept = p.FirstKeptIndex, p.FirstKeptEntryID
	} else if q, _ := start(path, ""); q.PreviousSummary != nil {
		kept, piKept = q.BoundaryStart, compactionOf(q.Path[0]).FirstKeptEntryID
		p = q
	}
	if p != nil && kept < len(p.Path) {
		if keep := strayResults(path, p.Projected, kept); keep != "" {
			q, err := prepare(path, s, keep)
			if err != nil {
				return nil, err
			}
			if q.MovedFrom == "" {
				q.MovedFrom = piKept
			}
			return q, nil
		}
	}
	return p, err
}

// prepare is Prepare on the projection with the latest compaction keeping from
// keepFrom ("" for its own first kept entry). A plan that repairs (keepFrom set)
// is made even with nothing to summarize.
func prepare(path []*session.Entry, s Settings, keepFrom string) (*Plan, error) {
	p, prev := start(path, keepFrom)
	cut := findCutPoint(p.Projected, p.BoundaryStart, len(p.Path), s.KeepRecentTokens)
	if cut.firstKept >= len(p.Path) || p.Path[cut.firstKept].ID == "" {
		return nil, ErrNothingToCompact
	}
	if safe := keepToolPairs(len(p.Projected), projectedMessages(p.Projected), cut.firstKept); safe != cut.firstKept {
		p.MovedFrom = p.Path[cut.firstKept].ID
		cut = cutAt(p.Projected, min(p.BoundaryStart, safe), safe)
	}
	if err := p.fill(cut, prev); err != nil {
		return nil, err
	}
	if len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0 && p.MovedFrom == "" && keepFrom == "" {
		return nil, ErrNothingToCompact
	}
	return p, nil
}

// fill sets the plan's messages and file lists for a cut.
func (p *Plan) fill(cut cutPoint, prev int) error {
	if p.Path[cut.firstKept].ID == "" {
		return ErrNoIDs
	}
	p.FirstKeptEntryID = p.Path[cut.firstKept].ID
	p.FirstKeptIndex = cut.firstKept
	p.IsSplitTurn = cut.splitTurn
	historyEnd := cut.firstKept
	if cut.splitTurn {
		p.TurnStartIndex = cut.turnStart
		historyEnd = cut.turnStart
	}
	p.MessagesToSummarize = p.messagesOf(p.BoundaryStart, historyEnd)
	if cut.splitTurn {
		p.TurnPrefixMessages = p.messagesOf(cut.turnStart, cut.firstKept)
	}
	ops := newFileOps()
	if prev >= 0 {
		ops.addDetails(compactionOf(p.Path[prev]))
	}
	ops.addMessages(p.MessagesToSummarize)
	ops.addMessages(p.TurnPrefixMessages)
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

// messagesOf returns the messages of Projected[from:to] as a summarizer reads
// them: compactions are left out (their summary arrives as PreviousSummary),
// and so are system messages (prompt state, which the compaction's checkpoint
// carries). When nothing is left out they are the projection's own (Span).
func (p *Plan) messagesOf(from, to int) []session.ContextMessage {
	es := p.Projected[from:to]
	keep := func(yield func(session.ContextMessage) bool) {
		for _, e := range es {
			if e.Entry.Type == session.TypeCompaction {
				continue
			}
			for _, m := range e.Messages {
				if m.Role != session.RoleSystem && !yield(m) {
					return
				}
			}
		}
	}
	n, all := 0, 0
	for range keep {
		n++
	}
	for _, e := range es {
		all += len(e.Messages)
	}
	if n == 0 {
		return nil
	}
	if n == all {
		return p.proj.Span(from, to)
	}
	// Counted first: a plan of a million messages is one allocation, not doublings.
	out := make([]session.ContextMessage, 0, n)
	for m := range keep {
		out = append(out, m)
	}
	return out
}

// contextOf is buildSessionContext(path).messages: what the model sees from the
// branch's leaf (SPEC §6.4).
func contextOf(path []*session.Entry) []session.ContextMessage {
	return session.ProjectPath(path).Context().Messages
}

// cutPoint is pi's CutPointResult.
type cutPoint struct {
	firstKept int
	turnStart int
	splitTurn bool
}

// isCutPointRole: a context may start at a user, assistant, bash, custom or
// summary message; never at a tool result, which must follow its call.
func isCutPointRole(role string) bool {
	switch role {
	case session.RoleUser, session.RoleAssistant, session.RoleBashExecution, session.RoleCustom,
		session.RoleBranchSummary, session.RoleCompactionSummary:
		return true
	}
	return false
}

// isTurnStartRole: a turn starts at any user-like message.
func isTurnStartRole(role string) bool {
	return role != session.RoleAssistant && isCutPointRole(role)
}

func anyRole(ms []session.ContextMessage, f func(string) bool) bool {
	return slices.ContainsFunc(ms, func(m session.ContextMessage) bool { return f(m.Role) })
}

// isCutPoint reports whether a context may start at this projected entry.
func isCutPoint(e session.Projected) bool {
	return e.Entry.Type != session.TypeCompaction && anyRole(e.Messages, isCutPointRole)
}

func isTurnStart(e session.Projected) bool {
	return e.Entry.Type != session.TypeCompaction && anyRole(e.Messages, isTurnStartRole)
}

// findTurnStart is pi's findProjectedTurnStartIndex: the entry at or before i
// (and not before start) that starts the turn holding entry i, or -1.
func findTurnStart(es []session.Projected, i, start int) int {
	for ; i >= start; i-- {
		if isTurnStart(es[i]) {
			return i
		}
	}
	return -1
}

// findCutPoint is pi 1.6.0's findProjectedCutPoint over es[start:end].
func findCutPoint(es []session.Projected, start, end, keepRecentTokens int) cutPoint {
	var cuts []int
	for i := start; i < end; i++ {
		if isCutPoint(es[i]) {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return cutPoint{firstKept: start, turnStart: -1}
	}
	cut := cuts[0]
	acc, exceeded := 0, false
	for i := end - 1; i >= start; i-- {
		tokens := 0
		for _, m := range es[i].Messages {
			tokens += EstimateTokens(m)
		}
		if tokens == 0 {
			continue
		}
		acc += tokens
		if acc >= keepRecentTokens {
			exceeded = true
			cut = cuts[len(cuts)-1]
			for _, c := range cuts {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	if exceeded && recoveryOmissionSuffix(es[cut+1:end]) {
		cut++
	}
	for cut > start {
		prev := es[cut-1]
		if prev.Entry.Type == session.TypeCompaction || len(prev.Messages) > 0 {
			break
		}
		cut--
	}
	return cutAt(es, start, cut)
}

// recoveryOmissionSuffix reports whether everything after the cut is a failed
// attempt the agent omitted from the context (pi 1.6.0: an omitted assistant
// message, with nothing visible, no compaction and no replacement of anything
// else after it), which the cut then steps over.
func recoveryOmissionSuffix(suffix []session.Projected) bool {
	visible := func(e session.Projected) bool {
		return e.Entry.Type != session.TypeContextEdit && len(e.Entry.ContextMessages()) > 0
	}
	omitted := func(e session.Projected) bool { return visible(e) && len(e.Messages) == 0 }
	omittedIDs := map[string]bool{}
	for _, e := range suffix {
		if omitted(e) {
			omittedIDs[e.Entry.ID] = true
		}
	}
	assistant := false
	for _, e := range suffix {
		if e.Entry.Type == session.TypeContextEdit {
			var v struct {
				TargetID    jsontext.Value `json:"targetId"`
				Replacement jsontext.Value `json:"replacement"`
			}
			_ = json.Unmarshal(e.Entry.Raw(), &v, decodeOptions)
			target, isString := jsString(v.TargetID)
			if v.Replacement.Kind() != 'n' && !(isString && omittedIDs[target]) {
				return false // a replacement of something else
			}
		}
		if e.Entry.Type == session.TypeCompaction || (visible(e) && !omitted(e)) {
			return false
		}
		if e.Entry.Type == session.TypeMessage && e.Entry.Role() == session.RoleAssistant && omitted(e) {
			assistant = true
		}
	}
	return assistant
}

func jsString(v jsontext.Value) (string, bool) {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s, decodeOptions) != nil {
		return "", false
	}
	return s, true
}

// cutAt decides whether a cut at es[cut] splits a turn that starts at or after start.
func cutAt(es []session.Projected, start, cut int) cutPoint {
	if cut >= len(es) || isTurnStart(es[cut]) {
		return cutPoint{firstKept: cut, turnStart: -1}
	}
	ts := findTurnStart(es, cut, start)
	return cutPoint{firstKept: cut, turnStart: ts, splitTurn: ts != -1}
}

// keepToolPairs returns the earliest index at or before cut from which every
// kept tool result (in es[cut:]) also keeps the assistant message that called
// it: the cut moves back to that message until no kept result points before it.
// Results whose call is nowhere before them cannot be helped and are ignored.
// Only the kept part, and what the cut moves over, is decoded. at gives the
// messages of the n entries of the branch.
func keepToolPairs(n int, at messagesAt, cut int) int {
	if cut >= n {
		return cut
	}
	called := map[string]bool{} // tool call ids in es[cut:]
	var pending []string        // kept results' call ids not (yet) seen among the kept calls
	scan := func(from, to int) {
		for i := from; i < to; i++ {
			for _, m := range at(i) {
				switch m.Role {
				case session.RoleAssistant:
					for _, id := range callIDs(m) {
						called[id] = true
					}
				case session.RoleToolResult:
					if id := resultCallID(m); id != "" {
						pending = append(pending, id)
					}
				}
			}
		}
	}
	scan(cut, n)
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
			if slices.ContainsFunc(at(cut), func(m session.ContextMessage) bool {
				return m.Role == session.RoleAssistant && slices.ContainsFunc(callIDs(m), func(id string) bool { return want[id] })
			}) {
				break
			}
		}
		if cut < 0 { // the calls are not there: nothing to keep them with
			return to
		}
		scan(cut, to)
		if !slices.ContainsFunc(pending, func(id string) bool { return !called[id] && callBefore(at, cut, id) }) {
			return cut
		}
	}
}

// callBefore reports whether an assistant message before index i made call id.
func callBefore(at messagesAt, i int, id string) bool {
	for j := range i {
		for _, m := range at(j) {
			if m.Role == session.RoleAssistant && slices.Contains(callIDs(m), id) {
				return true
			}
		}
	}
	return false
}

// callIDs returns the ids of an assistant message's tool calls.
func callIDs(m session.ContextMessage) []string {
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
func resultCallID(m session.ContextMessage) string {
	var r struct {
		ToolCallID string `json:"toolCallId"`
	}
	_ = json.Unmarshal(m.Raw, &r, decodeOptions)
	return r.ToolCallID
}

// messagesAt gives the messages of a branch's entries by index, so that only
// the entries read are read.
type messagesAt func(i int) []session.ContextMessage

// projectedMessages is a projection's messages.
func projectedMessages(es []session.Projected) messagesAt {
	return func(i int) []session.ContextMessage { return es[i].Messages }
}

// branchMessages is a branch as a context keeping all of it shows it: each
// entry with its own messages, compactions contributing none.
func branchMessages(path []*session.Entry) messagesAt {
	return func(i int) []session.ContextMessage {
		if path[i].Type == session.TypeCompaction {
			return nil
		}
		return path[i].ContextMessages()
	}
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
	// Only from the cut on, and what it moves back over, is read: a million
	// entries are not made messages to check the last few.
	return path[keepToolPairs(len(path), branchMessages(path), i)].ID, nil
}

// fileOps collects pi's file operations: read, written and edited paths.
type fileOps struct {
	read, modified map[string]bool
	sc             scanner // reads the messages one after another
}

func newFileOps() *fileOps { return &fileOps{read: map[string]bool{}, modified: map[string]bool{}} }

// addMessages adds the file operations of ms, on every core: the sets do not
// depend on the order the messages are read in.
func (o *fileOps) addMessages(ms []session.ContextMessage) {
	parts := make([]*fileOps, partsOf(len(ms)))
	spread(len(parts), len(ms), func(part, lo, hi int) {
		q := o
		if part > 0 {
			q = newFileOps()
			parts[part] = q
		}
		for _, m := range ms[lo:hi] {
			q.addMessage(m)
		}
	})
	for _, q := range parts[1:] {
		maps.Copy(o.read, q.read)
		maps.Copy(o.modified, q.modified)
	}
}

// addMessage records the files an assistant message's tool calls, or the
// calls nested in a tool result (code mode), touched: read reads, write and
// edit modify (pi 1.6.0's extractFileOpsFromMessage).
func (o *fileOps) addMessage(m session.ContextMessage) {
	switch m.Role {
	case session.RoleAssistant:
		if !mayHold(m.Raw, "toolCall") {
			return
		}
		for _, b := range o.sc.fields(m).Content.Blocks {
			if b.Type == "toolCall" {
				o.add(b.Name, jsontext.Value(b.Arguments))
			}
		}
	case session.RoleToolResult:
		if !mayHold(m.Raw, "nestedCalls") {
			return
		}
		var v struct {
			NestedCalls struct {
				Calls []struct {
					Name      string         `json:"name"`
					Arguments jsontext.Value `json:"arguments"`
				} `json:"calls"`
			} `json:"nestedCalls"`
		}
		if json.Unmarshal(m.Raw, &v, decodeOptions) != nil {
			return
		}
		for _, c := range v.NestedCalls.Calls {
			o.add(c.Name, c.Arguments)
		}
	}
}

// mayHold reports whether the JSON text raw may hold the string s (of ASCII
// letters) as a key or value: it is there as written, or raw has a \u escape
// that could spell it. A message without it is not decoded for its file
// operations, which most messages of a long session have none of.
func mayHold(raw []byte, s string) bool {
	return bytes.Contains(raw, []byte(s)) || bytes.Contains(raw, []byte(`\u`))
}

// add records one call's file operation.
func (o *fileOps) add(tool string, arguments jsontext.Value) {
	if tool != "read" && tool != "write" && tool != "edit" {
		return
	}
	p := argsPath(arguments)
	if p == "" {
		return
	}
	switch tool {
	case "read":
		o.read[p] = true
	case "write", "edit":
		o.modified[p] = true
	}
}

// argsPath is the path a call's arguments name, "" for none.
func argsPath(arguments jsontext.Value) string {
	if a, ok := scanToolArgs(arguments); ok {
		return a.Path
	}
	return decodeArgsPath(arguments)
}

func decodeArgsPath(arguments jsontext.Value) string {
	if arguments.Kind() != '{' {
		return ""
	}
	var args struct {
		Path jsontext.Value `json:"path"`
	}
	if json.Unmarshal(arguments, &args, decodeOptions) != nil {
		return ""
	}
	p, _ := jsString(args.Path)
	return p
}

// addDetails adds a previous summary's file lists, unless an extension made it
// (fromHook), whose details need not be file lists.
func (o *fileOps) addDetails(c compactionFields) {
	if js.Truthy(c.FromHook) || len(c.Details) == 0 {
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
