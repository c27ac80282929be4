package window

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// Options says how to build a context.
type Options struct {
	// Budget is the prompt budget in tokens (see Budget.Prompt); 0 applies
	// the resolutions without fitting.
	Budget int
	// Resolutions are the cursor's stamps by entry id (session.Cursor.Resolutions).
	Resolutions map[string]session.Resolution
	// Estimator counts tokens; nil means DefaultEstimator.
	Estimator *Estimator
	// ResultShare is the largest share of the budget one tool result may take
	// before it is cut (default 0.25).
	ResultShare float64
	// Blobs, when set, receives the full text of every cut tool result, so the
	// note in its place can say how to read it back.
	Blobs BlobWriter
}

// BlobWriter keeps a full tool output outside the log; Put returns its reference.
type BlobWriter interface {
	Put(data []byte) (string, error)
}

// Budget is a model's window and what is taken from it before the conversation.
type Budget struct {
	Window  int // the model's context window
	Reserve int // kept free for the reply
	System  int // the system prompt
	Tools   int // the tool schemas
}

// Prompt is what is left for the conversation: window − reserve − system − tools.
func (b Budget) Prompt() int { return max(0, b.Window-b.Reserve-b.System-b.Tools) }

// Message is one message of a built context.
type Message struct {
	session.ContextMessage
	Level  session.Level // the level it is rendered at
	Tokens int           // estimated, once converted for a model
	// Synthetic messages are not in the log: the note about left-out turns and
	// the error results that close unanswered tool calls.
	Synthetic bool
	cut       bool
	orig      *facts // what Measure reads of the message as logged (nil for synthetic ones)
}

// facts is what the planner and Measure read of a decoded message besides its
// texts, so a context of a million messages is not held decoded: a text is
// decoded again only to render an outline or summary of it.
type facts struct {
	role       string
	toolCallID string
	stopReason string
	usage      *session.Usage
	hasText    bool        // Content.Text("") != ""
	calls      []toolBlock // the toolCall blocks, in order
}

// toolBlock is one toolCall block of an assistant message.
type toolBlock struct {
	id, name  string
	arguments jsontext.Value
}

// noFacts are the facts of a message that could not be decoded.
var noFacts facts

// factsOf reads the facts of a decoded message. Most messages have no more
// facts than their role and whether they have text: those share one value.
func factsOf(d session.MessageData) *facts {
	f := facts{role: intern(d.Role), toolCallID: d.ToolCallID, stopReason: intern(d.StopReason), usage: d.Usage, hasText: d.Content.Text("") != ""}
	for _, b := range d.Content.Blocks {
		if b.Type == "toolCall" {
			f.calls = append(f.calls, toolBlock{b.ID, b.Name, b.Arguments})
		}
	}
	if f.toolCallID == "" && f.stopReason == "" && f.usage == nil && f.calls == nil {
		for i := range plainFacts {
			if p := &plainFacts[i]; p.role == f.role && p.hasText == f.hasText {
				return p
			}
		}
	}
	return &f
}

// plainFacts are the facts of messages that have only a role and text or none.
var plainFacts = []facts{
	{role: session.RoleUser, hasText: true}, {role: session.RoleUser},
	{role: session.RoleAssistant, hasText: true}, {role: session.RoleAssistant},
	{role: session.RoleToolResult, hasText: true}, {role: session.RoleToolResult},
}

// intern returns the usual roles and stop reasons as constants, so facts do not
// keep a copy of each.
func intern(s string) string {
	for _, c := range [...]string{session.RoleUser, session.RoleAssistant, session.RoleToolResult, "stop", "toolUse", "error", "aborted", "length"} {
		if c == s {
			return c
		}
	}
	return s
}

// Result is a built context and what was done to make it.
type Result struct {
	Messages      []Message
	ThinkingLevel jsontext.Value
	Model         *session.Model
	Budget        int // 0 when built without one
	Tokens        int // estimated total of Messages
	Protected     int // estimated tokens of what the planner may not touch

	Changes []Change // downgrades the planner made, in message order
	LeftOut LeftOut  // turns left out
	Cuts    []Cut    // tool results cut to their share of the budget
	Closed  []string // tool call ids closed with an error result
	Orphans []string // entry ids of tool results whose call is not in the context, sent as user text

	calls Calls
}

// Change is one downgrade made by the planner.
type Change struct {
	EntryID  string        `json:"entryId"`
	Role     string        `json:"role"`
	From     session.Level `json:"from"`
	To       session.Level `json:"to"`
	Before   int           `json:"tokensBefore"`
	After    int           `json:"tokensAfter"`
	Position int           `json:"position"` // index in the unfitted context
}

// LeftOut counts the turns the planner left out.
type LeftOut struct {
	Turns    int      `json:"turns"`
	Messages int      `json:"messages"`
	Tokens   int      `json:"tokens"`
	Entries  []string `json:"entryIds,omitempty"`
}

// Cut is a tool result cut to its share of the budget.
type Cut struct {
	EntryID string `json:"entryId"`
	Bytes   int    `json:"bytes"` // the full output
	Kept    int    `json:"keptBytes"`
	Blob    string `json:"blob,omitempty"`
}

// BudgetError is returned when even the protected part of a context does not fit.
type BudgetError struct {
	Budget    int
	Protected int // tokens of everything below, and what their turns need
	First     int // tokens of the first user request
	Last      int // tokens of the last user request, when it is not the first
	LastTurn  int // tokens of the last turn
	Pinned    int // tokens of pinned entries
	NPinned   int // how many pinned entries
	System    int // tokens of the system messages (the prompt and tools)
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("window: the context cannot fit in %d tokens: what must stay needs %d (system prompt %d, first request %d, last request %d, last turn %d, %d pinned entries %d); raise the budget or unpin entries",
		e.Budget, e.Protected, e.System, e.First, e.Last, e.LastTurn, e.NPinned, e.Pinned)
}

// ErrBudget is matched by every *BudgetError.
var ErrBudget = errors.New("window: context does not fit the budget")

func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Build renders ctx at the cursor's resolutions and, with a budget, fits it
// (see the package comment). The log is never changed.
func Build(ctx session.Context, o Options) (*Result, error) { return build(ctx, o, true) }

// build is Build; early false turns off the shortcut of leaveOutEarly, so
// tests can check that it changes nothing.
func build(ctx session.Context, o Options, early bool) (*Result, error) {
	est := o.Estimator
	if est == nil {
		est = &DefaultEstimator
	}
	if o.ResultShare <= 0 {
		o.ResultShare = 0.25
	}
	p := &planner{est: est, o: o, calls: Calls{}}
	p.load(ctx.Messages)
	p.pair()
	p.group()
	res := &Result{ThinkingLevel: ctx.ThinkingLevel, Model: ctx.Model, Budget: o.Budget, calls: p.calls}
	if o.Budget > 0 {
		p.bound()
		if err := p.fit(res, early); err != nil {
			return nil, err
		}
		if err := p.keepCut(res); err != nil {
			return nil, err
		}
	}
	p.emit(res)
	return res, nil
}

// item is one message of the context while the planner works on it.
type item struct {
	msg     session.ContextMessage
	orig    session.ContextMessage // as in the log: what outlines are made from
	data    *facts                 // of orig, when decoded
	level   session.Level          // as stamped by the cursor, then as the planner leaves it
	stamped session.Level
	text    string // the cursor's own outline or summary
	tokens  int
	initial int  // tokens at the cursor's level, before any cut or downgrade
	pos     int  // index in the unfitted context
	turn    int  // index of its turn
	keep    bool // never downgraded: pinned, a system message, first or last request, last turn
	omitted bool
	synth   bool
	decoded bool       // data is set
	cut     *cutOutput // set when bound cut its output
	renders *renders   // set once it is rendered at a lower level
}

// cutOutput is a tool output bound cut, with the whole of it.
type cutOutput struct {
	*Cut
	full string
}

// renders are an item's renderings at lower levels.
type renders struct {
	byLevel map[session.Level]rendered
	members []member // orig split
}

// rendered returns the item's rendering at lv, if it was made.
func (it *item) rendered(lv session.Level) (rendered, bool) {
	if it.renders == nil {
		return rendered{}, false
	}
	r, ok := it.renders.byLevel[lv]
	return r, ok
}

// facts returns the item's facts, empty when it could not be decoded.
func (it *item) facts() *facts {
	if it.data == nil {
		return &noFacts
	}
	return it.data
}

type rendered struct {
	msg    session.ContextMessage
	tokens int
}

type turn struct {
	first, last int // item indexes, inclusive
	keep        bool
	pinned      bool
}

type planner struct {
	est          *Estimator
	o            Options
	calls        Calls
	items        []*item
	turns        []turn
	note         int // item index of the left-out note, or -1
	noteMsg      rendered
	firstOmitted int // turn index, or -1
}

func (p *planner) level(e *session.Entry) (session.Level, string) {
	if e == nil {
		return session.Full, ""
	}
	if r, ok := p.o.Resolutions[e.ID]; ok && r.Level.Valid() {
		return r.Level, r.Text
	}
	return session.DefaultLevel(e), ""
}

func (p *planner) load(msgs []session.ContextMessage) {
	items := make([]*item, len(msgs))
	// Decoding and counting dominate; messages are independent, so spread
	// them over the cores. The order of items does not depend on the split.
	workers := min(runtime.GOMAXPROCS(0), 1+len(msgs)/256)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(msgs); i += workers {
				items[i] = p.item(i, msgs[i])
			}
		})
	}
	wg.Wait()
	for _, it := range items {
		if it != nil {
			p.items = append(p.items, it)
			if it.decoded && it.data.role == session.RoleAssistant {
				p.calls.addBlocks(it.data.calls)
			}
		}
	}
	// Entries the cursor stamped are rendered once every call is known.
	for _, it := range p.items {
		if it.decoded && (it.level == session.Outlined || it.level == session.Summarized) {
			d, _ := data(it.orig.Raw)
			it.msg = render(it.orig, d, nil, it.level, it.text, p.calls)
			it.tokens = p.est.Message(it.msg)
		}
		it.initial = it.tokens
	}
	p.note, p.firstOmitted = -1, -1
}

// item decodes and counts one message; nil if the cursor leaves it out
// (compacted, attached).
func (p *planner) item(i int, m session.ContextMessage) *item {
	lv, text := p.level(m.Entry)
	if m.Entry == nil || m.Entry.Type != session.TypeMessage && m.Entry.Type != session.TypeCustomMessage && m.Entry.Type != session.TypeBranchSummary && m.Entry.Type != session.TypeCompaction {
		lv = session.Full // only entries that reach the model carry a level
	}
	if lv == session.Compacted || lv == session.Attached {
		return nil
	}
	it := &item{msg: m, orig: m, level: lv, stamped: lv, text: text, pos: i}
	d, ok := dataOf(m)
	if it.decoded = ok; ok {
		it.data = factsOf(d)
		it.tokens = p.est.data(d, m.Raw)
	} else {
		it.tokens = p.est.Message(m)
	}
	return it
}

// pair makes every tool result follow the assistant message that called it:
// a result whose call is not right before it becomes user text, and a call
// that was never answered gets an error result (SPEC §6.3).
func (p *planner) pair() {
	out := make([]*item, 0, len(p.items))
	var open []string        // calls of the current assistant not yet answered
	var head map[string]bool // calls of the current assistant
	var ts jsontext.Value    // its timestamp
	closeOpen := func() {
		for _, id := range open {
			out = append(out, p.closing(id, ts))
		}
		open, head = nil, nil
	}
	for _, it := range p.items {
		switch it.msg.Role {
		case session.RoleToolResult:
			id := it.facts().toolCallID
			if head[id] {
				open = slices.DeleteFunc(open, func(o string) bool { return o == id })
				delete(head, id)
				out = append(out, it)
				continue
			}
			closeOpen()
			p.orphan(it)
			out = append(out, it)
			continue
		case session.RoleAssistant:
			closeOpen()
			// The timestamp is the closing results' and the set holds the
			// calls: neither is made for the many replies without calls.
			if calls := it.facts().calls; len(calls) > 0 {
				head = make(map[string]bool, len(calls))
				ts = timestampOf(it.orig.Raw)
			}
			for _, b := range it.facts().calls {
				if b.id != "" && !head[b.id] {
					head[b.id] = true
					open = append(open, b.id)
				}
			}
		default:
			closeOpen()
		}
		out = append(out, it)
	}
	closeOpen()
	p.items = out
}

// NoResultText is the text of the error result that closes a tool call the log never answered.
const NoResultText = "No result was recorded for this tool call: the session stopped before the tool finished."

func (p *planner) closing(id string, ts jsontext.Value) *item {
	c := p.calls[id]
	raw := object([]member{
		{"role", marshal(session.RoleToolResult)}, {"toolCallId", marshal(id)}, {"toolName", marshal(c.name)},
		{"content", textContent(NoResultText)}, {"isError", marshal(true)}, {"timestamp", ts},
	})
	m := session.ContextMessage{Role: session.RoleToolResult, Raw: raw}
	n := p.est.Message(m)
	return &item{msg: m, level: session.Full, stamped: session.Full, synth: true, tokens: n, initial: n, pos: -1}
}

// orphan turns a tool result whose call is not right before it into user text,
// which every provider accepts.
func (p *planner) orphan(it *item) {
	d, _ := data(it.orig.Raw)
	text := fmt.Sprintf("[Result of a %s tool call that is not in this context]\n%s", cmp.Or(d.ToolName, "tool"), d.Content.Text("\n"))
	it.msg = session.ContextMessage{Role: session.RoleUser, Entry: it.msg.Entry, Raw: object([]member{
		{"role", marshal(session.RoleUser)}, {"content", textContent(text)}, {"timestamp", timestampOf(it.msg.Raw)},
	})}
	it.orig = it.msg
	d, ok := data(it.msg.Raw)
	it.data, it.decoded = nil, ok
	if ok {
		it.data = factsOf(d)
	}
	it.tokens = p.est.Message(it.msg)
	it.initial = it.tokens
	it.renders = nil
}

func timestampOf(raw []byte) jsontext.Value {
	var v struct {
		Timestamp jsontext.Value `json:"timestamp"`
	}
	_ = unmarshal(raw, &v)
	return v.Timestamp
}

// turns groups the items: an assistant message with its tool results, or one
// other message; and marks what the planner may not touch.
func (p *planner) group() {
	firstUser, lastUser := -1, -1
	for i, it := range p.items {
		switch {
		case it.msg.Role == session.RoleToolResult && i > 0:
			p.items[i].turn = len(p.turns) - 1
			p.turns[len(p.turns)-1].last = i
			continue
		case it.msg.Role == session.RoleUser:
			if firstUser < 0 {
				firstUser = i
			}
			lastUser = i
		}
		it.turn = len(p.turns)
		p.turns = append(p.turns, turn{first: i, last: i})
	}
	for i := range p.turns {
		t := &p.turns[i]
		for _, it := range p.items[t.first : t.last+1] {
			if it.level == session.Pinned {
				t.pinned = true
				it.keep = true
			}
		}
		// The system prompt and tools (pi 1.6.0's system messages) are never
		// downgraded or left out, as the first and last requests.
		if i == len(p.turns)-1 || t.first == firstUser || t.first == lastUser || p.items[t.first].msg.Role == session.RoleSystem {
			t.keep = true
			for _, it := range p.items[t.first : t.last+1] {
				it.keep = true
			}
		}
	}
}

func (p *planner) total() int {
	n := 0
	for _, it := range p.items {
		if !it.omitted {
			n += it.tokens
		}
	}
	return n
}

// at renders an item at a lower level, once.
func (p *planner) at(it *item, lv session.Level) rendered {
	if it.renders != nil {
		if r, ok := it.renders.byLevel[lv]; ok {
			return r
		}
	} else {
		it.renders = &renders{byLevel: map[session.Level]rendered{}}
	}
	m := it.orig
	if it.decoded {
		if it.renders.members == nil {
			it.renders.members, _ = members(it.orig.Raw)
		}
		d, _ := data(it.orig.Raw)
		m = render(it.orig, d, it.renders.members, lv, "", p.calls)
	}
	r := rendered{m, p.est.Message(m)}
	it.renders.byLevel[lv] = r
	return r
}

// fit downgrades, then leaves out turns, until the context fits the budget.
func (p *planner) fit(res *Result, early bool) error {
	budget := p.o.Budget
	total := p.total()
	order := p.order()
	if early && total > budget && p.mustLeaveOut(order) {
		total = p.leaveOutEarly(res)
	} else {
		total = p.downgrade(order, total)
		if total > budget {
			total = p.leaveOut(res, total)
		}
	}
	for _, it := range p.items {
		if it.level != it.stamped && !it.omitted {
			res.Changes = append(res.Changes, Change{EntryID: it.msg.Entry.ID, Role: it.msg.Role, From: it.stamped, To: it.level, Before: it.initial, After: it.tokens, Position: it.pos})
		}
	}
	if total > budget {
		return p.budgetError()
	}
	return nil
}

// downgrade outlines candidates in order until the context fits, then
// summarizes the outlined ones in the same order.
func (p *planner) downgrade(order []*item, total int) int {
	budget := p.o.Budget
	for _, step := range []struct{ from, to session.Level }{{session.Full, session.Outlined}, {session.Outlined, session.Summarized}} {
		for j, it := range order {
			if total <= budget {
				return total
			}
			if it.level != step.from {
				continue
			}
			if _, ok := it.rendered(step.to); !ok {
				p.prefetch(order[j:min(len(order), j+prefetchBatch)], step.from, step.to)
			}
			if r := p.at(it, step.to); r.tokens < it.tokens {
				total -= it.tokens - r.tokens
				it.msg, it.tokens, it.level = r.msg, r.tokens, step.to
			}
		}
	}
	return total
}

// lowest is what downgrade leaves a candidate at once it has run to the end:
// outlined if that is smaller, then summarized if that is smaller still.
func (p *planner) lowest(it *item) {
	for _, step := range []struct{ from, to session.Level }{{session.Full, session.Outlined}, {session.Outlined, session.Summarized}} {
		if it.level != step.from {
			continue
		}
		if r := p.at(it, step.to); r.tokens < it.tokens {
			it.msg, it.tokens, it.level = r.msg, r.tokens, step.to
		}
	}
}

// mustLeaveOut reports whether downgrading every candidate cannot be enough,
// judged without rendering anything: every message costs at least its framing.
func (p *planner) mustLeaveOut(order []*item) bool {
	floor := 0
	candidate := make(map[*item]bool, len(order))
	for _, it := range order {
		candidate[it] = true
		floor += min(it.tokens, p.est.MessageTokens)
	}
	for _, it := range p.items {
		if !candidate[it] {
			floor += it.tokens
		}
	}
	return floor > p.o.Budget
}

// leaveOutEarly gives the same result as downgrade followed by leaveOut when
// turns must be left out anyway, without rendering the turns it leaves out:
// the turns kept are the longest run of the newest that fits, each at its
// lowest, which is exactly where leaving out oldest first would stop.
func (p *planner) leaveOutEarly(res *Result) int {
	budget := p.o.Budget
	base := 0
	var omittable []int
	for ti, t := range p.turns {
		if !t.keep && !t.pinned {
			omittable = append(omittable, ti)
			continue
		}
		base += p.lowestTurn(t)
	}
	limit := budget - p.est.Message(noteMessage(len(p.turns), len(p.items), nil)) - base
	kept := 0 // of omittable, counted from the newest
	for k := len(omittable) - 1; k >= 0; k-- {
		n := p.lowestTurn(p.turns[omittable[k]])
		if n > limit {
			break
		}
		limit -= n
		kept++
	}
	for _, ti := range omittable[:len(omittable)-kept] {
		p.omit(res, ti)
	}
	return p.placeNote(res)
}

// lowestTurn brings a turn's candidates to their lowest and returns its tokens.
func (p *planner) lowestTurn(t turn) int {
	items := p.items[t.first : t.last+1]
	var wg sync.WaitGroup
	for _, it := range items {
		if !it.keep && !it.synth {
			wg.Go(func() { p.lowest(it) })
		}
	}
	wg.Wait()
	n := 0
	for _, it := range items {
		n += it.tokens
	}
	return n
}

// prefetchBatch is how many renderings are made ahead, in parallel; at most
// one batch is made and not used.
const prefetchBatch = 256

// prefetch renders a batch of candidates at lv on every core.
func (p *planner) prefetch(batch []*item, from, lv session.Level) {
	workers := min(runtime.GOMAXPROCS(0), 1+len(batch)/32)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(batch); i += workers {
				if it := batch[i]; it.level == from && !it.synth {
					p.at(it, lv)
				}
			}
		})
	}
	wg.Wait()
}

// order is the planner's order of candidates: oldest turn first, largest
// first within a turn, then position; protected and pinned items are left out.
func (p *planner) order() []*item {
	var out []*item
	for _, it := range p.items {
		if !it.keep && !it.synth {
			out = append(out, it)
		}
	}
	slices.SortStableFunc(out, func(a, b *item) int {
		return cmp.Or(a.turn-b.turn, b.tokens-a.tokens, a.pos-b.pos)
	})
	return out
}

// leaveOut drops whole turns, oldest first, and puts one note where the first was.
func (p *planner) leaveOut(res *Result, total int) int {
	budget := p.o.Budget
	noteTokens := p.est.Message(noteMessage(len(p.turns), len(p.items), nil))
	for ti, t := range p.turns {
		if total+noteTokens <= budget {
			break
		}
		if t.keep || t.pinned {
			continue
		}
		p.omit(res, ti)
		for _, it := range p.items[t.first : t.last+1] {
			total -= it.tokens
		}
	}
	return p.placeNote(res)
}

// omit leaves out one turn.
func (p *planner) omit(res *Result, ti int) {
	t := p.turns[ti]
	for _, it := range p.items[t.first : t.last+1] {
		it.omitted = true
		res.LeftOut.Messages++
		res.LeftOut.Tokens += it.initial
		if it.msg.Entry != nil && !it.synth {
			res.LeftOut.Entries = append(res.LeftOut.Entries, it.msg.Entry.ID)
		}
	}
	res.LeftOut.Turns++
	if p.firstOmitted < 0 {
		p.firstOmitted = ti
	}
}

// placeNote places the note about the turns left out, unless the rest fits only
// without it, and returns the total.
func (p *planner) placeNote(res *Result) int {
	total := p.total()
	if res.LeftOut.Turns == 0 {
		return total
	}
	first := p.turns[p.firstOmitted].first
	m := noteMessage(res.LeftOut.Turns, res.LeftOut.Messages, timestampOf(p.items[first].orig.Raw))
	n := p.est.Message(m)
	if total+n > p.o.Budget && total <= p.o.Budget {
		// Without the note the rest fits: a fitting context beats an explained one.
		return total
	}
	p.note = first
	p.noteMsg = rendered{m, n}
	return total + n
}

// noteMessage is the one message that stands for the turns left out.
func noteMessage(turns, msgs int, ts jsontext.Value) session.ContextMessage {
	text := fmt.Sprintf("[%s (%s) left out here to fit the context window. The session still holds them; ask if you need them.]",
		plural(turns, "earlier turn"), plural(msgs, "message"))
	return session.ContextMessage{Role: session.RoleUser, Raw: object([]member{{"role", marshal(session.RoleUser)}, {"content", textContent(text)}, {"timestamp", ts}})}
}

func (p *planner) budgetError() error {
	e := &BudgetError{Budget: p.o.Budget}
	firstUser, lastUser := -1, -1
	for i, it := range p.items {
		if it.msg.Role == session.RoleUser && !it.synth {
			if firstUser < 0 {
				firstUser = i
			}
			lastUser = i
		}
	}
	lastTurn := -1
	if n := len(p.turns); n > 0 {
		lastTurn = n - 1
	}
	for i, it := range p.items {
		if it.omitted {
			continue
		}
		if it.keep || p.turns[it.turn].pinned {
			e.Protected += it.tokens
		}
		switch {
		case it.turn == lastTurn:
			e.LastTurn += it.tokens
		case i == firstUser:
			e.First += it.tokens
		case i == lastUser:
			e.Last += it.tokens
		case it.msg.Role == session.RoleSystem:
			e.System += it.tokens
		}
		if it.level == session.Pinned {
			e.NPinned++
			e.Pinned += it.tokens
		}
	}
	return e
}

func (p *planner) emit(res *Result) {
	n := 1 // the note
	for _, it := range p.items {
		if !it.omitted {
			n++
		}
	}
	res.Messages = make([]Message, 0, n)
	for i, it := range p.items {
		if i == p.note {
			r := p.noteMsg
			res.Messages = append(res.Messages, Message{ContextMessage: r.msg, Level: session.Full, Tokens: r.tokens, Synthetic: true})
			res.Tokens += r.tokens
		}
		if it.keep {
			res.Protected += it.tokens
		}
		p.items[i] = nil // the planner's copy can go while the rest is emitted
		if it.omitted {
			continue
		}
		res.Messages = append(res.Messages, Message{ContextMessage: it.msg, Level: it.level, Tokens: it.tokens, Synthetic: it.synth, cut: it.cut != nil && it.level == session.Full, orig: it.data})
		res.Tokens += it.tokens
		if it.synth && it.msg.Role == session.RoleToolResult {
			d, _ := data(it.msg.Raw)
			res.Closed = append(res.Closed, d.ToolCallID)
		}
		if !it.synth && it.msg.Role == session.RoleUser && it.msg.Entry != nil && it.msg.Entry.Role() == session.RoleToolResult {
			res.Orphans = append(res.Orphans, it.msg.Entry.ID)
		}
	}
}

// Context returns the built messages as a session.Context, for printing or ForModel.
func (r *Result) Context() session.Context {
	c := session.Context{ThinkingLevel: r.ThinkingLevel, Model: r.Model}
	for _, m := range r.Messages {
		c.Messages = append(c.Messages, m.ContextMessage)
	}
	return c
}

// ForModel converts the built messages for a model (pi's convertToLlm).
func (r *Result) ForModel() []jsontext.Value {
	return session.ForModel(r.Context().Messages)
}

// Explain writes, one line each, what was cut, downgraded and left out.
func (r *Result) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "budget %d tokens, used %d (%d may not be touched)\n", r.Budget, r.Tokens, r.Protected)
	byLevel := map[session.Level]int{}
	for _, c := range r.Changes {
		byLevel[c.To]++
	}
	fmt.Fprintf(&b, "%d cut, %d outlined, %d summarized, %s left out\n", len(r.Cuts), byLevel[session.Outlined], byLevel[session.Summarized], plural(r.LeftOut.Turns, "turn"))
	for _, c := range r.Cuts {
		where := "the session entry"
		if c.Blob != "" {
			where = c.Blob
		}
		fmt.Fprintf(&b, "cut        %s  tool result %s → %s, full output in %s\n", c.EntryID, size(c.Bytes), size(c.Kept), where)
	}
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "%-10s %s  %s %d → %d tokens\n", c.To, c.EntryID, c.Role, c.Before, c.After)
	}
	if r.LeftOut.Turns > 0 {
		fmt.Fprintf(&b, "left out   %s (%s, %d tokens), oldest first\n", plural(r.LeftOut.Turns, "turn"), plural(r.LeftOut.Messages, "message"), r.LeftOut.Tokens)
	}
	for _, id := range r.Closed {
		fmt.Fprintf(&b, "closed     tool call %s had no result; sent an error result\n", id)
	}
	for _, id := range r.Orphans {
		fmt.Fprintf(&b, "orphan     %s  tool result without its call, sent as user text\n", id)
	}
	return b.String()
}
