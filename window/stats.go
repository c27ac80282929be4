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
	ctx, resolutions := c.ContextWithResolutions()
	// Without a budget the planner's items are the built messages: they are
	// read where they are, not emitted into a Result.
	p := plan(ctx, resolutions, Options{Estimator: o.Estimator})
	msgs := unemitted(p.items)
	s := Stats{ContextWindow: o.Window, CompletionReserve: o.Reserve, PromptBudget: max(0, o.Window-o.Reserve), MessageCount: msgs.len()}

	for _, e := range l.Entries() {
		if !e.IsMarker() {
			s.EntryCount++
		}
		if e.Type == session.TypeMessage && e.Role() == session.RoleToolResult {
			s.Redactions += redactionsOf(e)
		}
	}
	s.APIUsage = FileUsage(l)
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

	phases := o.classify(msgs, p.calls)
	sum := 0
	for i := range msgs.len() {
		m := msgs.at(i)
		sum += m.Tokens
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
		s.PhaseTokens.add(phases[i], m.Tokens)
		if m.Role == session.RoleCompactionSummary {
			s.CompactionTokens += m.Tokens
		}
	}
	s.EstimatedUsed = sum
	if id, tokens, ok := anchor(msgs, path, invalidated); ok {
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

// built is a read-only view of built messages, in order: a Result's, or,
// without a budget, a planner's before it emits them.
type built interface {
	len() int
	at(i int) Message
}

func (r *Result) len() int         { return len(r.Messages) }
func (r *Result) at(i int) Message { return r.Messages[i] }

// unemitted are the items of a planner that had no budget: the messages it would emit.
type unemitted []*item

func (u unemitted) len() int         { return len(u) }
func (u unemitted) at(i int) Message { return u[i].message() }

// reaches reports whether an entry type can put a message in the context.
func reaches(e *session.Entry) bool {
	switch e.Type {
	case session.TypeMessage, session.TypeCustomMessage, session.TypeBranchSummary:
		return true
	}
	return false
}

// anchor is pi's estimateContextTokens: the usage the provider reported for
// the last assistant message that did not fail, plus estimates of what came
// after it. It applies only while every message up to the anchor is rendered
// in full, and the anchor is newer than the last compaction and context edit
// (pi 1.6.0), since the usage measured that context and no other. Usage that
// counts nothing is skipped.
func anchor(msgs built, path []*session.Entry, lastCompaction int) (string, int, bool) {
	after := map[string]bool{}
	if lastCompaction >= 0 {
		for _, e := range path[lastCompaction+1:] {
			after[e.ID] = true
		}
	}
	for i := msgs.len() - 1; i >= 0; i-- {
		m := msgs.at(i)
		if m.Role != session.RoleAssistant || m.Entry == nil || m.Synthetic {
			continue
		}
		usage, stopReason, ok := m.usage()
		if !ok || usage == nil || stopReason == "aborted" || stopReason == "error" || contextTokens(*usage) <= 0 {
			continue
		}
		if lastCompaction >= 0 && !after[m.Entry.ID] {
			return "", 0, false
		}
		for j := range i + 1 {
			if prev := msgs.at(j); prev.Level == session.Outlined || prev.Level == session.Summarized || prev.cut {
				return "", 0, false
			}
		}
		tokens := int(contextTokens(*usage))
		for j := i + 1; j < msgs.len(); j++ {
			tokens += msgs.at(j).Tokens
		}
		return m.Entry.ID, tokens, true
	}
	return "", 0, false
}

// usage is the usage and stop reason of a message as rendered; ok is false
// when it cannot be decoded. A message rendered as logged is decoded only when
// its facts say it has a usage, so a context of a million messages without
// one is not decoded again.
func (m *Message) usage() (*session.Usage, string, bool) {
	if m.orig != nil && !m.Synthetic && (m.Level == session.Full || m.Level == session.Pinned) && !m.cut && !m.orig.hasUsage {
		return nil, m.orig.stopReason, true
	}
	d, ok := dataOf(m.ContextMessage)
	return d.Usage, d.StopReason, ok
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

// classify gives each built message a phase: a tool call and its result the
// phase of the call, an assistant reply without tool calls Conclusion, and
// requests and summaries Unclassified.
func (o StatsOptions) classify(msgs built, calls callIndex) []Phase {
	out := make([]Phase, msgs.len())
	edited := false
	byCall := make(map[string]Phase, len(calls))
	for i := range out {
		m := msgs.at(i)
		out[i] = Unclassified
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
			first := Phase("")
			for _, b := range d.calls {
				c := calls[b.id]
				if c.name == "" {
					c.name = b.name
				}
				ph := o.Classifier.Tool(c.name, c.str("command", "cmd"), edited)
				if ph == Execution {
					edited = true
				}
				byCall[b.id] = ph
				if first == "" {
					first = ph
				}
			}
			switch {
			case first != "":
				out[i] = first
			case d.stopReason != "error" && d.stopReason != "aborted" && d.hasText:
				out[i] = Conclusion
			}
		case session.RoleToolResult:
			if ph, ok := byCall[d.toolCallID]; ok {
				out[i] = ph
			}
		}
	}
	return out
}
