package window

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/arborlog/arbor/session"
)

// Stats is a snapshot of a context's use of the model's window (the seed's
// ContextStats, in camelCase, plus the prompt budget, what remains, and the
// provider usage summed over the whole file).
type Stats struct {
	ContextWindow      int     `json:"contextWindow"`
	CompletionReserve  int     `json:"completionReserve"`
	PromptBudget       int     `json:"promptBudget"`
	EstimatedUsed      int     `json:"estimatedUsed"`
	EstimatedRemaining int     `json:"estimatedRemaining"`
	UtilizationPercent float64 `json:"utilizationPercent"`
	// UsageAnchor is the assistant message whose reported usage EstimatedUsed
	// starts from ("" when every message was estimated).
	UsageAnchor    string `json:"usageAnchor,omitempty"`
	MessageCount   int    `json:"messageCount"`   // messages in the rendered context
	EntryCount     int    `json:"entryCount"`     // entries in the file, on every branch, arbor's markers not counted
	PathEntryCount int    `json:"pathEntryCount"` // entries from the root to the cursor's leaf, markers not counted

	// The breakdowns split the tokens of the rendered messages; each, plus
	// BeyondMessages, adds up to EstimatedUsed.
	RoleTokens       RoleTokens       `json:"roleTokens"`
	ResolutionTokens ResolutionTokens `json:"resolutionTokens"`
	PhaseTokens      PhaseTokens      `json:"phaseTokens"`
	// BeyondMessages is what the provider counted beyond arbor's estimate of
	// the messages (the system prompt, the tool schemas, the estimate's own
	// error): EstimatedUsed less the messages' tokens. 0 when every message
	// was estimated; negative when the provider counted fewer.
	BeyondMessages int `json:"beyondMessages"`

	CompactionTokens    int `json:"compactionTokens"`    // the compaction summary in the context
	CompactedEntryCount int `json:"compactedEntryCount"` // path entries a compaction or the cursor left out

	APIUsage APIUsage `json:"apiUsage"`
	// Redactions counts the secrets the agent removed from tool output, in the
	// whole file (details.arborRedacted of each tool result).
	Redactions int `json:"redactions"`
}

// RoleTokens splits the estimate by who is speaking. Summaries, custom
// messages and the user's own bash runs reach the model as user messages.
type RoleTokens struct {
	System    int `json:"system"`
	User      int `json:"user"`
	Assistant int `json:"assistant"`
	Tool      int `json:"tool"`
}

// ResolutionTokens splits the estimate by the level each message is rendered at.
type ResolutionTokens struct {
	Full       int `json:"full"`
	Outlined   int `json:"outlined"`
	Summarized int `json:"summarized"`
	Pinned     int `json:"pinned"`
}

// PhaseTokens splits the estimate by the kind of work (see Classifier).
type PhaseTokens struct {
	Exploration  int `json:"exploration"`
	Execution    int `json:"execution"`
	Verification int `json:"verification"`
	Conclusion   int `json:"conclusion"`
	Unclassified int `json:"unclassified"`
}

// APIUsage sums the provider usage recorded in the file, on every branch, as
// pi 1.6.0 counts it (session.Entry.UsageRecord): assistant messages, usage
// entries, and the summaries and tool results that record a usage. It is what
// the session cost.
type APIUsage struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CacheRead   float64 `json:"cacheRead"`
	CacheWrite  float64 `json:"cacheWrite"`
	TotalTokens float64 `json:"totalTokens"`
	Cost        float64 `json:"cost"`
	Requests    int     `json:"requests"`
	// ByModel is pi 1.6.0's getUsageCostBreakdown: one row per provider/model
	// ("Tools/summaries" for summaries and tool results), rows that cost and
	// used nothing left out, most expensive first.
	ByModel []UsageRow `json:"byModel"`

	rows map[string]*UsageRow
}

// UsageRow is the cost and tokens (input, output, cache read and write) of one key.
type UsageRow struct {
	Key    string  `json:"key"`
	Cost   float64 `json:"cost"`
	Tokens float64 `json:"tokens"`

	input, output, cacheRead, cacheWrite float64
}

// StatsOptions configures Measure.
type StatsOptions struct {
	Window     int // 0 means DefaultWindow
	Reserve    int // 0 means DefaultReserve; negative means none
	Estimator  *Estimator
	Classifier *Classifier
}

// Default window and reserve for Measure.
const (
	DefaultWindow  = 200000
	DefaultReserve = 16384
)

// Measure computes the statistics of the context a cursor renders, in one
// call: its resolutions applied, its usage anchored on the provider's last
// report, the whole file's API usage.
func Measure(c *session.Cursor, o StatsOptions) Stats {
	l := c.Log()
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	switch {
	case o.Reserve == 0:
		o.Reserve = DefaultReserve
	case o.Reserve < 0:
		o.Reserve = 0
	}
	if o.Estimator == nil {
		o.Estimator = &DefaultEstimator
	}
	if o.Classifier == nil {
		o.Classifier = DefaultClassifier()
	}
	// The file's usage first: read on every core, it then allocates beside
	// the log alone, not the context too.
	usage := FileUsage(l)
	ctx, resolutions := c.ContextWithResolutions()
	s := Stats{ContextWindow: o.Window, CompletionReserve: o.Reserve, PromptBudget: max(0, o.Window-o.Reserve)}
	t := o.measure(ctx, resolutions, &s, measureChunk)
	s.APIUsage = usage

	for _, e := range l.Entries() {
		if !e.IsMarker() {
			s.EntryCount++
		}
		if e.Type == session.TypeMessage && e.Role() == session.RoleToolResult {
			s.Redactions += redactionsOf(e)
		}
	}
	var path []*session.Entry
	if leaf := c.Leaf(); leaf != nil {
		path = l.PathTo(leaf.ID)
	}
	lastCompaction, invalidated := -1, -1
	for i, e := range path {
		if !e.IsMarker() {
			s.PathEntryCount++
		}
		if e.Type == session.TypeCompaction {
			lastCompaction = i
		}
		if e.Type == session.TypeCompaction || e.Type == session.TypeContextEdit {
			invalidated = i
		}
	}
	// Which entries reach the context matters only before a compaction and
	// for entries a cursor compacted.
	inContext := map[string]bool{}
	if lastCompaction > 0 || len(resolutions) > 0 {
		for _, m := range ctx.Messages {
			if m.Entry != nil {
				inContext[m.Entry.ID] = true
			}
		}
	}
	for i, e := range path {
		if i >= lastCompaction {
			break
		}
		if reaches(e) && !inContext[e.ID] {
			s.CompactedEntryCount++
		}
	}
	for _, e := range path {
		if r, ok := resolutions[e.ID]; ok && r.Level == session.Compacted && inContext[e.ID] {
			s.CompactedEntryCount++
		}
	}

	sum := t.sum
	s.EstimatedUsed = sum
	if id, tokens, ok := t.anchor(path, invalidated); ok {
		s.UsageAnchor, s.EstimatedUsed = id, tokens
	}
	s.BeyondMessages = s.EstimatedUsed - sum
	s.EstimatedRemaining = max(0, s.PromptBudget-s.EstimatedUsed)
	s.UtilizationPercent = 100
	if s.PromptBudget > 0 {
		s.UtilizationPercent = math.Min(100, math.Round(float64(s.EstimatedUsed)*1000/float64(s.PromptBudget))/10)
	}
	return s
}

// measureChunk is how many messages measure decodes at a time.
const measureChunk = 8192

// measure builds the context as Build does without a budget, chunk
// messages at a time, and tallies each built message into s as it is made, so
// a context of a million messages is never held built. A chunk's stamped
// messages are rendered with the calls indexed so far, which are all the calls
// Build would use unless a call id is used twice; then the context is built
// again with the whole index.
func (o StatsOptions) measure(ctx session.Context, stamps map[string]session.Resolution, s *Stats, chunk int) *tally {
	var calls callIndex
	for {
		p := &planner{est: o.Estimator, o: Options{Estimator: o.Estimator, ResultShare: 0.25}, stamps: stamps, calls: calls}
		if calls == nil {
			p.calls = callIndex{}
		}
		t := &tally{s: s, phases: phaser{o: o, calls: p.calls, byCall: map[string]Phase{}}}
		emit := func(it *item) { t.add(it.message()) }
		pr := pairing{p: p}
		slab := make([]item, min(chunk, len(ctx.Messages)))
		again := false
		for off := 0; off < len(ctx.Messages); off += chunk {
			items := p.decode(ctx.Messages[off:min(off+chunk, len(ctx.Messages))], off, slab)
			if calls == nil {
				for _, it := range items {
					again = p.index(it) || again
				}
			}
			for _, it := range items {
				p.stamp(it)
				pr.next(it, emit)
			}
		}
		pr.end(emit)
		if !again || calls != nil {
			return t
		}
		calls = p.calls
		*s = Stats{ContextWindow: s.ContextWindow, CompletionReserve: s.CompletionReserve, PromptBudget: s.PromptBudget}
	}
}

// tally sums built messages into Stats as they come, and keeps what finding
// the usage anchor needs.
type tally struct {
	s          *Stats
	phases     phaser
	sum        int  // tokens of the messages so far
	downgraded bool // a message so far is outlined, summarized or cut
	anchors    []anchorCandidate
}

// anchorCandidate is an assistant message that may hold the usage anchor.
type anchorCandidate struct {
	msg     session.ContextMessage // as rendered
	through int                    // tokens of the messages up to it, itself included
	clean   bool                   // no message up to it is outlined, summarized or cut
}

func (t *tally) add(m Message) {
	s := t.s
	s.MessageCount++
	t.sum += m.Tokens
	switch m.Role {
	case session.RoleAssistant:
		s.RoleTokens.Assistant += m.Tokens
	case session.RoleToolResult:
		s.RoleTokens.Tool += m.Tokens
	case session.RoleSystem:
		s.RoleTokens.System += m.Tokens
	default:
		s.RoleTokens.User += m.Tokens
	}
	switch m.Level {
	case session.Outlined:
		s.ResolutionTokens.Outlined += m.Tokens
	case session.Summarized:
		s.ResolutionTokens.Summarized += m.Tokens
	case session.Pinned:
		s.ResolutionTokens.Pinned += m.Tokens
	default:
		s.ResolutionTokens.Full += m.Tokens
	}
	s.PhaseTokens.add(t.phases.of(m), m.Tokens)
	if m.Role == session.RoleCompactionSummary {
		s.CompactionTokens += m.Tokens
	}
	if m.Level == session.Outlined || m.Level == session.Summarized || m.cut {
		t.downgraded = true
	}
	if m.Role != session.RoleAssistant || m.Entry == nil || m.Synthetic {
		return
	}
	if m.asLogged() && (!m.orig.hasUsage || m.orig.failed) {
		return // its facts say it cannot be the anchor: not kept, not decoded
	}
	if m.asLogged() && m.orig.counts {
		// anchor, looking back, stops here at the latest: the candidates
		// before it are never read (a million replies keep one or two).
		t.anchors = t.anchors[:0]
	}
	t.anchors = append(t.anchors, anchorCandidate{m.ContextMessage, t.sum, !t.downgraded})
}

// anchor is pi's estimateContextTokens: the usage the provider reported for
// the last assistant message that did not fail, plus estimates of what came
// after it. It applies only while every message up to the anchor is rendered
// in full, and the anchor is newer than the last compaction and context edit
// (pi 1.6.0), since the usage measured that context and no other. Usage that
// counts nothing is skipped.
func (t *tally) anchor(path []*session.Entry, lastCompaction int) (string, int, bool) {
	after := map[string]bool{}
	if lastCompaction >= 0 {
		for _, e := range path[lastCompaction+1:] {
			after[e.ID] = true
		}
	}
	for i := len(t.anchors) - 1; i >= 0; i-- {
		a := t.anchors[i]
		d, ok := dataOf(a.msg)
		if !ok || d.Usage == nil || d.StopReason == "aborted" || d.StopReason == "error" || contextTokens(*d.Usage) <= 0 {
			continue
		}
		if lastCompaction >= 0 && !after[a.msg.Entry.ID] || !a.clean {
			return "", 0, false
		}
		return a.msg.Entry.ID, int(contextTokens(*d.Usage)) + t.sum - a.through, true
	}
	return "", 0, false
}

// reaches reports whether an entry type can put a message in the context.
func reaches(e *session.Entry) bool {
	switch e.Type {
	case session.TypeMessage, session.TypeCustomMessage, session.TypeBranchSummary:
		return true
	}
	return false
}

// asLogged reports whether the message is rendered as logged, so its facts
// describe it.
func (m *Message) asLogged() bool {
	return m.orig != nil && !m.Synthetic && (m.Level == session.Full || m.Level == session.Pinned) && !m.cut
}

// RedactedKey is the tool result details field in which the agent counts the
// secrets it removed from the output.
const RedactedKey = "arborRedacted"

func redactionsOf(e *session.Entry) int {
	if !bytes.Contains(e.Raw(), []byte(RedactedKey)) {
		return 0
	}
	var v struct {
		Message struct {
			Details struct {
				N float64 `json:"arborRedacted"`
			} `json:"details"`
		} `json:"message"`
	}
	if unmarshal(e.Raw(), &v) != nil {
		return 0
	}
	return int(v.Message.Details.N)
}

// contextTokens is pi's calculateContextTokens: the total, or the sum of the parts when it is 0.
func contextTokens(u session.Usage) float64 {
	if u.TotalTokens != 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

func (u *APIUsage) add(key string, m session.Usage) {
	u.Input += m.Input
	u.Output += m.Output
	u.CacheRead += m.CacheRead
	u.CacheWrite += m.CacheWrite
	u.TotalTokens += m.TotalTokens
	u.Cost += m.Cost.Total
	u.Requests++
	if u.rows == nil {
		u.rows = map[string]*UsageRow{}
	}
	r, ok := u.rows[key]
	if !ok {
		r = &UsageRow{Key: key}
		u.rows[key] = r
		u.ByModel = append(u.ByModel, UsageRow{Key: key}) // first-seen order, filled in by finish
	}
	r.input += m.Input
	r.output += m.Output
	r.cacheRead += m.CacheRead
	r.cacheWrite += m.CacheWrite
	r.Cost += m.Cost.Total
}

// finish fills in ByModel as pi orders it: a stable sort by cost, highest first.
func (u *APIUsage) finish() {
	rows := u.ByModel[:0]
	for _, r := range u.ByModel {
		t := u.rows[r.Key]
		t.Tokens = t.input + t.output + t.cacheRead + t.cacheWrite
		if t.Cost > 0 || t.Tokens > 0 {
			rows = append(rows, *t)
		}
	}
	slices.SortStableFunc(rows, func(a, b UsageRow) int { return cmp.Compare(b.Cost, a.Cost) })
	u.ByModel = rows
	if u.ByModel == nil {
		u.ByModel = []UsageRow{}
	}
}

func (p *PhaseTokens) add(ph Phase, n int) {
	switch ph {
	case Exploration:
		p.Exploration += n
	case Execution:
		p.Execution += n
	case Verification:
		p.Verification += n
	case Conclusion:
		p.Conclusion += n
	default:
		p.Unclassified += n
	}
}

// phaser gives each built message, in order, a phase: a tool call and its
// result the phase of the call, an assistant reply without tool calls
// Conclusion, and requests and summaries Unclassified.
type phaser struct {
	o      StatsOptions
	calls  callIndex
	edited bool
	byCall map[string]Phase // the phases of the last assistant message's calls
}

// of is the phase of the next message.
func (c *phaser) of(m Message) Phase {
	d := m.orig
	if m.Synthetic {
		dd, _ := data(m.Raw)
		d = factsOf(dd)
	}
	if d == nil {
		d = &noFacts
	}
	switch m.Role {
	case session.RoleAssistant:
		// Built messages are paired: a result follows the assistant message
		// whose call it answers, so only that message's calls are kept.
		clear(c.byCall)
		first := Phase("")
		for _, b := range d.calls {
			cl := c.calls.get(b.id)
			if cl.name == "" {
				cl.name = b.name
			}
			ph := c.o.Classifier.Tool(cl.name, cl.str("command", "cmd"), c.edited)
			if ph == Execution {
				c.edited = true
			}
			c.byCall[b.id] = ph
			if first == "" {
				first = ph
			}
		}
		switch {
		case first != "":
			return first
		case !d.failed && d.hasText:
			return Conclusion
		}
	case session.RoleToolResult:
		if ph, ok := c.byCall[d.toolCallID]; ok {
			return ph
		}
	}
	return Unclassified
}
