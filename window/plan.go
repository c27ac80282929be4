package window

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// item is one message of the context while the planner works on it. A
// context may hold a million: what few items need is in ext.
type item struct {
	base    *session.ContextMessage // as in the log (for a synthetic item, as made): what outlines are made from
	data    *facts                  // of base, when decoded
	tokens  int
	pos     int32 // index in the unfitted context
	turn    int32 // index of its turn
	keep    bool  // never downgraded: pinned, a system message, first or last request, last turn
	omitted bool
	synth   bool
	decoded bool     // data is set
	lv      level    // as stamped by the cursor, then as the planner leaves it
	ext     *itemExt // set once the item is rendered otherwise than as logged
}

// request reports whether the item is a user's request: a user message as
// logged, not a note the planner made nor a stray tool result it turned into
// user text (orphan). The first and last requests are never touched.
func (it *item) request() bool {
	return it.base.Role == session.RoleUser && !it.synth && !it.orphan()
}

// orphan reports whether the item is a tool result without its call, which
// the planner turned into user text.
func (it *item) orphan() bool {
	return !it.synth && it.base.Role == session.RoleUser && it.base.Entry != nil && it.base.Entry.Role() == session.RoleToolResult
}

// level is a session.Level in one byte, as the million items of a context hold it.
type level uint8

// levels are the session levels, indexed by level.
var levels = [...]session.Level{session.Full, session.Outlined, session.Summarized, session.Pinned, session.Compacted, session.Attached}

// levelByte is l as a level; l is valid.
func levelByte(l session.Level) level { return level(max(0, slices.Index(levels[:], l))) }

// level is the item's level.
func (it *item) level() session.Level { return levels[it.lv] }

// setLevel sets the item's level.
func (it *item) setLevel(l session.Level) { it.lv = levelByte(l) }

// itemExt is what an item needs once it is rendered otherwise than as logged.
// It is made before the item's level or tokens first change.
type itemExt struct {
	stamped session.Level           // the level the cursor stamped
	initial int                     // tokens at that level, before any cut or downgrade
	msg     *session.ContextMessage // as rendered now, when not base
	text    string                  // the cursor's own outline or summary
	cut     *cutOutput              // set when bound cut its output
	byLevel map[session.Level]rendered
	members []member // base split
}

// extra returns the item's ext, made on first use.
func (it *item) extra() *itemExt {
	if it.ext == nil {
		it.ext = &itemExt{stamped: it.level(), initial: it.tokens}
	}
	return it.ext
}

// stamped is the level the cursor stamped.
func (it *item) stamped() session.Level {
	if it.ext != nil {
		return it.ext.stamped
	}
	return it.level()
}

// initial is the item's tokens at the cursor's level, before any cut or downgrade.
func (it *item) initial() int {
	if it.ext != nil {
		return it.ext.initial
	}
	return it.tokens
}

// msg is the message as the item is rendered now.
func (it *item) msg() session.ContextMessage {
	if it.ext != nil && it.ext.msg != nil {
		return *it.ext.msg
	}
	return *it.base
}

// setMsg renders the item as m from now on.
func (it *item) setMsg(m session.ContextMessage) { it.extra().msg = &m }

// orig is the message as in the log.
func (it *item) orig() session.ContextMessage { return *it.base }

// text is the cursor's own outline or summary of the item, if any.
func (it *item) text() string {
	if it.ext == nil {
		return ""
	}
	return it.ext.text
}

// cut is the output bound cut, or nil.
func (it *item) cut() *cutOutput {
	if it.ext == nil {
		return nil
	}
	return it.ext.cut
}

// cutOutput is a tool output bound cut, with the whole of it.
type cutOutput struct {
	*Cut
	full string
}

// rendered returns the item's rendering at lv, if it was made.
func (it *item) rendered(lv session.Level) (rendered, bool) {
	if it.ext == nil {
		return rendered{}, false
	}
	r, ok := it.ext.byLevel[lv]
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
	first, last int32 // item indexes, inclusive
	keep        bool
	pinned      bool
}

type planner struct {
	est          *Estimator
	o            Options
	stamps       map[string]session.Resolution // the cursor's resolutions
	calls        callIndex
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
	if r, ok := p.stamps[e.ID]; ok && r.Level.Valid() {
		return r.Level, r.Text
	}
	return session.DefaultLevel(e), ""
}

// itemChunk is how many items load allocates at once. (A variable for tests.)
var itemChunk = 1 << 14

// load decodes and counts msgs, indexes their tool calls and renders what the
// cursor stamped.
func (p *planner) load(msgs []session.ContextMessage) {
	// Items are made a chunk at a time, so that the chunks emit has handed
	// over can be freed while it hands over the rest.
	items := make([]*item, 0, len(msgs))
	for off := 0; off < len(msgs); off += itemChunk {
		part := msgs[off:min(off+itemChunk, len(msgs))]
		items = append(items, p.decode(part, off, make([]item, len(part)))...)
	}
	ncalls := 0
	for _, it := range items {
		if it.decoded && it.data.assistant {
			ncalls += len(it.data.calls)
		}
	}
	p.items = items
	p.calls = make(callIndex, ncalls) // sized once: a million calls are not rehashed as they come
	for _, it := range items {
		p.index(it)
	}
	// Entries the cursor stamped are rendered once every call is known.
	for _, it := range items {
		p.stamp(it)
	}
	p.note, p.firstOmitted = -1, -1
}

// decode decodes and counts msgs, the messages of the context from position
// off, into slab (one item each), and returns the items the cursor keeps, in
// order. Decoding and counting dominate; messages are independent, so they
// are spread over the cores. The order of items does not depend on the split.
func (p *planner) decode(msgs []session.ContextMessage, off int, slab []item) []*item {
	items := make([]*item, len(msgs))
	workers := min(runtime.GOMAXPROCS(0), 1+len(msgs)/256)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var sc session.MessageScanner
			for i := w; i < len(msgs); i += workers {
				if p.item(&slab[i], off+i, &msgs[i], &sc) {
					items[i] = &slab[i]
				}
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(items, func(it *item) bool { return it == nil })
}

// index adds the tool calls of an item to the call index; it reports whether
// one of their ids was there already.
func (p *planner) index(it *item) bool {
	if !it.decoded || !it.data.assistant {
		return false
	}
	return p.calls.addBlocks(it.data.calls)
}

// stamp renders an item the cursor outlined or summarized, with the calls
// indexed so far.
func (p *planner) stamp(it *item) {
	if lv := it.level(); it.decoded && (lv == session.Outlined || lv == session.Summarized) {
		d, _ := data(it.base.Raw)
		m := render(*it.base, d, nil, it.level(), it.text(), p.calls)
		it.setMsg(m)
		it.tokens = p.est.Message(m)
	}
	if it.ext != nil {
		it.ext.initial = it.tokens // the count at the cursor's level, now made
	}
}

// item decodes (with sc) and counts the i'th message m into it; false if
// the cursor leaves it out (compacted, attached).
func (p *planner) item(it *item, i int, m *session.ContextMessage, sc *session.MessageScanner) bool {
	if !p.start(it, i, m) {
		return false
	}
	d, ok := dataWith(sc, *m)
	if it.decoded = ok; ok {
		it.data = factsOf(d)
		it.tokens = p.est.data(d, m.Raw)
	} else {
		it.tokens = p.est.Message(*m)
	}
	return true
}

// start makes it the i'th message m at the cursor's level, not yet decoded;
// false if the cursor leaves it out (compacted, attached).
func (p *planner) start(it *item, i int, m *session.ContextMessage) bool {
	lv, text := p.level(m.Entry)
	if m.Entry == nil || m.Entry.Type != session.TypeMessage && m.Entry.Type != session.TypeCustomMessage && m.Entry.Type != session.TypeBranchSummary && m.Entry.Type != session.TypeCompaction {
		lv = session.Full // only entries that reach the model carry a level
	}
	if lv == session.Compacted || lv == session.Attached {
		return false
	}
	*it = item{base: m, lv: levelByte(lv), pos: int32(i)}
	if text != "" {
		it.extra().text = text
	}
	return true
}

// pair makes every tool result follow the assistant message that called it:
// a result whose call is not right before it becomes user text, and a call
// that was never answered gets an error result (SPEC §6.3).
func (p *planner) pair() {
	out := make([]*item, 0, len(p.items))
	emit := func(it *item) { out = append(out, it) }
	s := pairing{p: p}
	for _, it := range p.items {
		s.next(it, emit)
	}
	s.end(emit)
	p.items = out
}

// pairing is pair's state from one item to the next, so that the items of a
// context can be paired as they are made.
type pairing struct {
	p    *planner
	open []toolBlock    // calls of the current assistant not yet answered, as it made them
	ts   jsontext.Value // its timestamp
}

// opened is the index in s.open of the call with id, or -1.
func (s *pairing) opened(id string) int {
	return slices.IndexFunc(s.open, func(b toolBlock) bool { return b.id == id })
}

// next pairs it: emit gets the error results that close what it leaves
// unanswered, then it.
func (s *pairing) next(it *item, emit func(*item)) {
	switch it.base.Role {
	case session.RoleToolResult:
		if i := s.opened(it.facts().toolCallID); i >= 0 {
			s.open = slices.Delete(s.open, i, i+1)
			emit(it)
			return
		}
		s.end(emit)
		s.p.orphan(it)
	case session.RoleAssistant:
		s.end(emit)
		// The timestamp is the closing results': it is not read for the
		// many replies without calls.
		calls := it.facts().calls
		if len(calls) > 0 {
			s.ts = timestampOf(it.orig().Raw)
		}
		for _, b := range calls {
			switch i := s.opened(b.id); {
			case b.id == "":
			case i >= 0:
				s.open[i] = b // a call its message repeats is answered once, named as the later one
			default:
				s.open = append(s.open, b)
			}
		}
	default:
		s.end(emit)
	}
	emit(it)
}

// end closes the calls left open with error results.
func (s *pairing) end(emit func(*item)) {
	for _, c := range s.open {
		emit(s.p.closing(c, s.ts))
	}
	s.open = s.open[:0]
}

// NoResultText is the text of the error result that closes a tool call the log never answered.
const NoResultText = "No result was recorded for this tool call: the session stopped before the tool finished."

// closing is the error result that closes call c, which its assistant
// message made (as pi's transformMessages names it).
func (p *planner) closing(c toolBlock, ts jsontext.Value) *item {
	raw := object([]member{
		{"role", marshal(session.RoleToolResult)}, {"toolCallId", marshal(c.id)}, {"toolName", marshal(c.name)},
		{"content", textContent(NoResultText)}, {"isError", marshal(true)}, {"timestamp", ts},
	})
	m := session.ContextMessage{Role: session.RoleToolResult, Raw: raw}
	n := p.est.Message(m)
	return &item{base: &m, lv: levelByte(session.Full), synth: true, tokens: n, pos: -1}
}

// orphan turns a tool result whose call is not right before it into user text,
// which every provider accepts.
func (p *planner) orphan(it *item) {
	d, _ := data(it.base.Raw)
	text := fmt.Sprintf("[Result of a %s tool call that is not in this context]\n%s", cmp.Or(d.ToolName, "tool"), d.Content.Text("\n"))
	// The user text stands for the result from now on, as logged too.
	m := it.msg()
	m = session.ContextMessage{Role: session.RoleUser, Entry: m.Entry, Raw: object([]member{
		{"role", marshal(session.RoleUser)}, {"content", textContent(text)}, {"timestamp", timestampOf(m.Raw)},
	})}
	it.base, it.ext = &m, nil
	d, ok := data(m.Raw)
	it.data, it.decoded = nil, ok
	if ok {
		it.data = factsOf(d)
	}
	it.tokens = p.est.Message(m)
}

func timestampOf(raw []byte) jsontext.Value {
	// Read where it lies when the object's names are plain and it has one
	// timestamp: what the decoder would keep then.
	var ts jsontext.Value
	n := 0
	if jsonscan.Members(raw, func(name, v []byte) bool {
		if string(name) == "timestamp" {
			ts, n = v[:len(v):len(v)], n+1
		}
		return true
	}) && n <= 1 {
		return ts
	}
	var v struct {
		Timestamp jsontext.Value `json:"timestamp"`
	}
	_ = unmarshal(raw, &v)
	return v.Timestamp
}

// turns groups the items: an assistant message with its tool results, or one
// other message; and marks what the planner may not touch.
func (p *planner) group() {
	n := 0
	for i, it := range p.items {
		if it.base.Role != session.RoleToolResult || i == 0 {
			n++
		}
	}
	p.turns = make([]turn, 0, n) // counted first: a million turns are one allocation
	firstUser, lastUser := -1, -1
	for i, it := range p.items {
		switch {
		case it.base.Role == session.RoleToolResult && i > 0:
			p.items[i].turn = int32(len(p.turns) - 1)
			p.turns[len(p.turns)-1].last = int32(i)
			continue
		case it.request():
			if firstUser < 0 {
				firstUser = i
			}
			lastUser = i
		}
		it.turn = int32(len(p.turns))
		p.turns = append(p.turns, turn{first: int32(i), last: int32(i)})
	}
	for i := range p.turns {
		t := &p.turns[i]
		for _, it := range p.items[t.first : t.last+1] {
			if it.level() == session.Pinned {
				t.pinned = true
				it.keep = true
			}
		}
		// The system prompt and tools (pi 1.6.0's system messages) are never
		// downgraded or left out, as the first and last requests.
		if i == len(p.turns)-1 || int(t.first) == firstUser || int(t.first) == lastUser || p.items[t.first].base.Role == session.RoleSystem {
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
	x := it.extra()
	if r, ok := x.byLevel[lv]; ok {
		return r
	}
	if x.byLevel == nil {
		x.byLevel = map[session.Level]rendered{}
	}
	m := *it.base
	if it.decoded {
		if x.members == nil {
			x.members, _ = members(m.Raw)
		}
		d, _ := data(m.Raw)
		m = render(m, d, x.members, lv, "", p.calls)
	}
	r := rendered{m, p.est.Message(m)}
	x.byLevel[lv] = r
	return r
}
