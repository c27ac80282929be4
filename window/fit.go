package window

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// fit downgrades, then leaves out turns, until the context fits the budget.
func (p *planner) fit(res *Result, early bool) error {
	budget := p.o.Budget
	total := p.total()
	order := p.order()
	if early && total > budget && p.mustLeaveOut() {
		total = p.leaveOutEarly(res)
	} else {
		total = p.downgrade(order, total)
		if total > budget {
			total = p.leaveOut(res, total)
		}
	}
	for _, it := range p.items {
		if it.level() != it.stamped() && !it.omitted {
			res.Changes = append(res.Changes, Change{EntryID: it.base.Entry.ID, Role: it.msg().Role, From: it.stamped(), To: it.level(), Before: it.initial(), After: it.tokens, Position: int(it.pos)})
		}
	}
	if total > budget {
		return p.budgetError()
	}
	return nil
}

// downgrade outlines candidates in order until the context fits, then
// summarizes them in the same order.
func (p *planner) downgrade(order []*item, total int) int {
	budget := p.o.Budget
	for _, to := range []session.Level{session.Outlined, session.Summarized} {
		for j, it := range order {
			if total <= budget {
				return total
			}
			if !downgradable(it.level(), to) {
				continue
			}
			if _, ok := it.rendered(to); !ok {
				p.prefetch(order[j:min(len(order), j+prefetchBatch)], to)
			}
			if r := p.at(it, to); r.tokens < it.tokens {
				total -= it.tokens - r.tokens
				it.setMsg(r.msg)
				it.tokens = r.tokens
				it.setLevel(to)
			}
		}
	}
	return total
}

// downgradable reports whether a candidate at lv is one to render at to: a
// full message is outlined, and an outlined one summarized; a full one whose
// outline was no smaller is summarized too, so the summary's savings are not
// lost to an outline that saved nothing.
func downgradable(lv, to session.Level) bool {
	return lv == session.Full || lv == session.Outlined && to == session.Summarized
}

// lowest is what downgrade leaves a candidate at once it has run to the end:
// outlined if that is smaller, then summarized if that is smaller still.
func (p *planner) lowest(it *item) {
	for _, to := range []session.Level{session.Outlined, session.Summarized} {
		if !downgradable(it.level(), to) {
			continue
		}
		if r := p.at(it, to); r.tokens < it.tokens {
			it.setMsg(r.msg)
			it.tokens = r.tokens
			it.setLevel(to)
		}
	}
}

// mustLeaveOut reports whether downgrading every candidate (the items order
// holds) cannot be enough, judged without rendering anything: every message
// costs at least its framing.
func (p *planner) mustLeaveOut() bool {
	floor := 0
	for _, it := range p.items {
		if candidate(it) {
			floor += min(it.tokens, p.est.MessageTokens)
		} else {
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
	n := 0
	for _, ti := range omittable[:len(omittable)-kept] {
		n += int(p.turns[ti].last-p.turns[ti].first) + 1
	}
	// Counted first: the ids of a million messages left out are one allocation.
	res.LeftOut.Entries = slices.Grow(res.LeftOut.Entries, n)
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
		if candidate(it) {
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
func (p *planner) prefetch(batch []*item, lv session.Level) {
	workers := min(runtime.GOMAXPROCS(0), 1+len(batch)/32)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(batch); i += workers {
				if it := batch[i]; downgradable(it.level(), lv) && !it.synth {
					p.at(it, lv)
				}
			}
		})
	}
	wg.Wait()
}

// candidate reports whether the planner may downgrade it: not protected,
// pinned or added by the planner.
func candidate(it *item) bool { return !it.keep && !it.synth }

// order is the planner's order of candidates: oldest turn first, largest
// first within a turn, then position.
func (p *planner) order() []*item {
	var out []*item
	for _, it := range p.items {
		if candidate(it) {
			out = append(out, it)
		}
	}
	slices.SortStableFunc(out, func(a, b *item) int {
		return cmp.Or(int(a.turn-b.turn), b.tokens-a.tokens, int(a.pos-b.pos))
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
		res.LeftOut.Tokens += it.initial()
		if it.base.Entry != nil && !it.synth {
			res.LeftOut.Entries = append(res.LeftOut.Entries, it.base.Entry.ID)
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
	m := noteMessage(res.LeftOut.Turns, res.LeftOut.Messages, timestampOf(p.items[first].orig().Raw))
	n := p.est.Message(m)
	if total+n > p.o.Budget && total <= p.o.Budget {
		// Without the note the rest fits: a fitting context beats an explained one.
		return total
	}
	p.note = int(first)
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
		if it.request() {
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
		e.Protected += it.tokens
		switch {
		case it.base.Role == session.RoleSystem:
			e.System += it.tokens
		case i == firstUser:
			e.First += it.tokens
		case i == lastUser:
			e.Last += it.tokens
		case int(it.turn) == lastTurn:
			e.LastTurn += it.tokens
		case it.level() == session.Pinned:
			e.NPinned++
			e.Pinned += it.tokens
		default:
			e.Paired += it.tokens
		}
	}
	return e
}

// emit hands the built messages to add, in order, and totals them in res.
// Each item is dropped once handed over, so that what add keeps of a
// context of a million messages is not held beside all of the planner's.
func (p *planner) emit(res *Result, add func(Message)) {
	for i, it := range p.items {
		if i == p.note {
			r := p.noteMsg
			add(Message{ContextMessage: r.msg, Level: session.Full, Tokens: r.tokens, Synthetic: true})
			res.Tokens += r.tokens
		}
		if it.keep {
			res.Protected += it.tokens
		}
		p.items[i] = nil // the planner's copy can go while the rest is emitted
		if it.omitted {
			continue
		}
		add(it.message())
		res.Tokens += it.tokens
		if it.synth && it.base.Role == session.RoleToolResult {
			d, _ := data(it.base.Raw)
			res.Closed = append(res.Closed, d.ToolCallID)
		}
		if it.orphan() {
			res.Orphans = append(res.Orphans, it.base.Entry.ID)
		}
	}
}

// emitted is how many messages emit will hand over.
func (p *planner) emitted() int {
	n := 1 // the note
	for _, it := range p.items {
		if !it.omitted {
			n++
		}
	}
	return n
}

// message is the item as a built message.
func (it *item) message() Message {
	return Message{ContextMessage: it.msg(), Level: it.level(), Tokens: it.tokens, Synthetic: it.synth, cut: it.cut() != nil && it.level() == session.Full, orig: it.data}
}
