package window

import "github.com/arborlog/arbor/session"

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
		sc      session.MessageScanner
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
	for i := range ctx.Messages {
		m = &ctx.Messages[i]
		if !p.start(&it, i, m) {
			continue
		}
		// What dataWith reads, knowing whether the scanner read it.
		ok := false
		if m.Entry != nil {
			d, ok = sc.Scan(m.Raw)
		}
		if scanned = ok; !ok {
			d, ok = data(m.Raw)
		}
		if it.decoded = ok; ok {
			f = facts{toolCallID: d.ToolCallID, calls: appendCalls(f.calls[:0], d)}
			it.data = &f
		}
		s.next(&it, emit)
		if stopped {
			return true
		}
	}
	scanned = false
	s.end(emit)
	return true
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
