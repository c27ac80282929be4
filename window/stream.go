package window

import (
	"errors"
	"slices"
	"sync"

	"github.com/arborlog/arbor/internal/inorder"
	"github.com/arborlog/arbor/session"
)

// Stream hands add, in order, the messages Build makes of ctx without a
// budget, reading each message once and keeping none of them: what a request
// to a model, or a list of a million messages, needs, without the counts that
// Build's planner reads every message for before it hands over the first.
//
// With each message comes what the session's scanner read of it (d), when
// the message handed over is the one it read (session.MessageScanner); d is
// nil for a result closing an unanswered call, for a result turned into user
// text, and for a message the scanner gave up on (its reader decodes it), and
// is valid only until add returns. add returns false to stop.
//
// Stream hands over nothing and returns false when the cursor outlined or
// summarized an entry: an outline names the calls of the whole context, so
// the caller builds with Build then.
func Stream(ctx session.Context, stamps map[string]session.Resolution, add func(m session.ContextMessage, d *session.MessageData) bool) bool {
	if !Streamable(stamps) {
		return false
	}
	p := &planner{est: &DefaultEstimator, stamps: stamps}
	var (
		m       *session.ContextMessage // the message read last
		it      item                    // it, as the planner takes it
		d       session.MessageData     // what reading it gave
		f       facts                   // what pairing reads of it (pairing copies what it keeps)
		scanned bool                    // by the scanner
		stopped bool
	)
	emit := func(e *item) {
		if stopped {
			return
		}
		var read *session.MessageData
		if scanned && e == &it && e.base == m { // not turned into user text
			read = &d
		}
		stopped = !add(e.msg(), read)
	}
	s := pairing{p: p}
	var held *readRun // the run of the message read last
	// The messages are read a run ahead, on the other cores, of their pairing
	// and of add.
	inorder.Do(len(ctx.Messages), streamRun, func(lo, hi int) *readRun {
		return readMessages(ctx.Messages, lo, hi)
	}, func(r *readRun) error {
		for j := range r.ds {
			i := r.lo + j
			m = &ctx.Messages[i]
			if !p.start(&it, i, m) {
				continue
			}
			// A run is given back once a message of a later one is read:
			// what add was given of the last message (the one it stopped
			// at, or the context's last) stays readable after Stream returns.
			if held != r {
				if held != nil {
					held.release()
				}
				held = r
			}
			var ok bool
			d, ok, scanned = r.ds[j], r.ok[j], r.scanned[j]
			if it.decoded = ok; ok {
				f = facts{toolCallID: d.ToolCallID, calls: appendCalls(f.calls[:0], d)}
				it.data = &f
			}
			s.next(&it, emit)
			if stopped {
				return errStopped
			}
		}
		if held != r {
			r.release()
		}
		return nil
	})
	if stopped {
		return true
	}
	scanned = false
	s.end(emit)
	return true
}

// errStopped ends Stream's reading when add returned false.
var errStopped = errors.New("stopped")

// streamRun is how many messages Stream reads at a time. (A test makes it
// small.)
var streamRun = 1024

// readRun is what reading a run of messages gave, as Stream reads each: by
// the session's scanner when the message is a loaded entry's, else by the
// decoder (data); scanned says which, ok whether either read it.
type readRun struct {
	lo          int
	ds          []session.MessageData
	ok, scanned []bool
	blocks      []session.Block // the scanned messages' blocks, one after another
	usages      []session.Usage // their usage, each pointed to by its message
}

// readRuns keeps runs for the next ones: the million messages of a session
// are read into a few.
var readRuns sync.Pool

// readMessages reads msgs[lo:hi].
func readMessages(msgs []session.ContextMessage, lo, hi int) *readRun {
	r, _ := readRuns.Get().(*readRun)
	if r == nil {
		r = &readRun{}
	}
	n := hi - lo
	r.lo = lo
	r.ds = slices.Grow(r.ds[:0], n)[:n]
	r.ok = slices.Grow(r.ok[:0], n)[:n]
	r.scanned = slices.Grow(r.scanned[:0], n)[:n]
	r.blocks = r.blocks[:0]
	r.usages = slices.Grow(r.usages[:0], n) // never grown below: the pointers to it stay good
	type span struct{ start, end int }
	var spans []span
	var sc session.MessageScanner
	for j := range n {
		m := &msgs[lo+j]
		var d session.MessageData
		ok, scanned := false, false
		if m.Entry != nil {
			d, ok = sc.Scan(m.Raw)
			scanned = ok
		}
		if !ok {
			d, ok = data(m.Raw)
		}
		if scanned {
			// The scanner's blocks and usage are its own until it reads again.
			if d.Usage != nil {
				r.usages = append(r.usages, *d.Usage)
				d.Usage = &r.usages[len(r.usages)-1]
			}
			if d.Content.Blocks != nil {
				if spans == nil {
					spans = make([]span, n)
				}
				spans[j] = span{len(r.blocks), len(r.blocks) + len(d.Content.Blocks)}
				r.blocks = append(r.blocks, d.Content.Blocks...)
			}
		}
		r.ds[j], r.ok[j], r.scanned[j] = d, ok, scanned
	}
	// Only now are the blocks where they stay.
	for j, sp := range spans {
		if r.scanned[j] && r.ds[j].Content.Blocks != nil {
			r.ds[j].Content.Blocks = r.blocks[sp.start:sp.end:sp.end]
		}
	}
	return r
}

// release gives the run back for another, letting go of what it read.
func (r *readRun) release() {
	clear(r.ds)
	clear(r.blocks)
	readRuns.Put(r)
}

// Streamable says whether Stream takes a context with these stamps: none
// outlined or summarized.
func Streamable(stamps map[string]session.Resolution) bool {
	for _, r := range stamps {
		if r.Level == session.Outlined || r.Level == session.Summarized {
			return false
		}
	}
	return true
}
