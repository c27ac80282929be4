package compaction

import (
	"github.com/arborlog/arbor/internal/js"
	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Settings are pi's compaction settings (its defaults: enabled, reserve 16,384
// tokens, keep the most recent 20,000).
type Settings struct {
	Enabled          bool
	ReserveTokens    int
	KeepRecentTokens int
}

// DefaultSettings are pi's defaults (the same in 0.73.1 and 1.6.0).
var DefaultSettings = Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}

// fields are the parts of a message the estimator and the summarizers read.
type fields struct {
	Role       string          `json:"role"`
	Content    session.Content `json:"content"`
	Command    string          `json:"command"`
	Output     string          `json:"output"`
	Summary    string          `json:"summary"`
	StopReason string          `json:"stopReason"`
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	IsError    bool            `json:"isError"`
	// Usage is read only where it is used (usable): a million replies are
	// not parsed for their usage to be estimated or summarized, and a usage
	// of another shape leaves the rest of its message readable, as in pi.
	Usage      jsontext.Value `json:"usage"`
	Sections   jsontext.Value `json:"sections"`
	ToolsAdded jsontext.Value `json:"toolsAdded"`
}

func decode(raw []byte) fields {
	var f fields
	_ = json.Unmarshal(raw, &f, decodeOptions) // a message pi could not read either counts as empty
	return f
}

// imageChars is what pi counts for an image.
const imageChars = 4800

// EstimateTokens is pi 1.6.0's estimateTokens: characters (JavaScript string
// length) divided by four, rounded up. User messages, tool results and custom
// messages count their text plus 4,800 characters per image; assistant
// messages their text, thinking, and each tool call's name plus its arguments
// as JSON; system messages their content, their sections and the tools they
// add as JSON; bash executions their command and output; summaries their
// summary. Any other role counts zero.
func EstimateTokens(m session.ContextMessage) int { return estimate(decode(m.Raw)) }

func estimateWith(s *scanner, m session.ContextMessage) int { return estimate(s.fields(m)) }

func estimate(f fields) int {
	chars := 0
	switch f.Role {
	case session.RoleSystem:
		chars = contentChars(f.Content)
		if f.Sections.Kind() == '{' {
			var sections map[string]jsontext.Value
			_ = json.Unmarshal(f.Sections, &sections, decodeOptions)
			for _, v := range sections {
				var s string
				if v.Kind() == '"' && json.Unmarshal(v, &s, decodeOptions) == nil {
					chars += jsLen(s)
				}
			}
		}
		if js.Truthy(f.ToolsAdded) {
			tools, _ := jsStringify(f.ToolsAdded)
			chars += jsLen(tools)
		}
	case session.RoleAssistant:
		for _, b := range f.Content.Blocks {
			switch b.Type {
			case "text":
				chars += jsLen(b.Text)
			case "thinking":
				chars += jsLen(b.Thinking)
			case "toolCall":
				n, ok := jsStringifiedLen(b.Arguments)
				if !ok {
					args, _ := jsStringify(jsontext.Value(b.Arguments))
					n = jsLen(args)
				}
				chars += jsLen(b.Name) + n
			}
		}
	case session.RoleUser, session.RoleCustom, session.RoleToolResult:
		chars = contentChars(f.Content)
	case session.RoleBashExecution:
		chars = jsLen(f.Command) + jsLen(f.Output)
	case session.RoleBranchSummary, session.RoleCompactionSummary:
		chars = jsLen(f.Summary)
	default:
		return 0
	}
	return (chars + 3) / 4
}

// contentChars is pi's estimateTextAndImageContentChars.
func contentChars(c session.Content) int {
	if c.IsString {
		return jsLen(c.String)
	}
	chars := 0
	for _, b := range c.Blocks {
		switch b.Type {
		case "text":
			chars += jsLen(b.Text)
		case "image":
			chars += imageChars
		}
	}
	return chars
}

// ContextTokens is pi's calculateContextTokens: the provider's total, or the
// sum of its parts when the total is missing or zero.
func ContextTokens(u session.Usage) int {
	if u.TotalTokens != 0 {
		return int(u.TotalTokens)
	}
	return int(u.Input + u.Output + u.CacheRead + u.CacheWrite)
}

// usable reports the usage of an assistant message that completed (pi ignores
// aborted and failed replies, and usage that counts nothing: their usage is
// not the context's size).
func usable(f fields) (session.Usage, bool) {
	if f.Role != session.RoleAssistant || f.Usage.Kind() != '{' || f.StopReason == "aborted" || f.StopReason == "error" {
		return session.Usage{}, false
	}
	u, ok := session.ScanUsage(f.Usage)
	if !ok {
		// What the walk gives up on, the decoder reads, into a fresh value.
		if u = (session.Usage{}); jsonUnmarshal(f.Usage, &u) != nil {
			return session.Usage{}, false
		}
	}
	return u, ContextTokens(u) != 0
}

// Estimate is the size of a context as pi estimates it.
type Estimate struct {
	Tokens         int // UsageTokens + TrailingTokens
	UsageTokens    int // the last usable assistant usage; 0 without one
	TrailingTokens int // chars/4 estimates of the messages after it (of all, without one)
	LastUsageIndex int // index of that assistant message; -1 without one
}

// EstimateContext is pi's estimateContextTokens: the provider-reported usage of
// the last completed assistant message plus estimates of what came after it,
// or the sum of estimates when no reply reports usage.
func EstimateContext(msgs []session.ContextMessage) Estimate {
	est, _ := estimateContext(msgs)
	return est
}

// estimateContext is EstimateContext, with the estimates of the messages after
// the usage that are not system messages summed apart. Each message is decoded
// once: a million-message context is not decoded again for its estimates.
func estimateContext(msgs []session.ContextMessage) (est Estimate, nonSystem int) {
	est.LastUsageIndex = -1
	var s scanner
	for i := len(msgs) - 1; i >= 0; i-- {
		f := s.fields(msgs[i])
		if msgs[i].Role == session.RoleAssistant {
			if u, ok := usable(f); ok {
				est.LastUsageIndex = i
				est.UsageTokens = ContextTokens(u)
				break
			}
		}
		n := estimate(f)
		est.TrailingTokens += n
		if msgs[i].Role != session.RoleSystem {
			nonSystem += n
		}
	}
	est.Tokens = est.UsageTokens + est.TrailingTokens
	return est, nonSystem
}

// EstimateProjected is pi 1.6.0's estimateProjectedContextTokens: the
// context's estimate, trusting the last usable assistant usage only when its
// entry comes after the latest compaction and context edit on the branch;
// otherwise every message is estimated, the system messages as the one system
// message they replay to.
func EstimateProjected(p session.Projection, branch []*session.Entry) Estimate {
	msgs := p.Context().Messages
	est, tokens := estimateContext(msgs)
	if est.LastUsageIndex >= 0 {
		var usageID string
		n := 0
		for _, e := range p.Entries {
			if est.LastUsageIndex < n+len(e.Messages) {
				usageID = e.Entry.ID
				break
			}
			n += len(e.Messages)
		}
		usageAt := -1
		if usageID != "" {
			usageAt = indexOf(branch, usageID)
		}
		invalidated := -1
		for i := len(branch) - 1; i >= 0; i-- {
			if t := branch[i].Type; t == session.TypeContextEdit || t == session.TypeCompaction {
				invalidated = i
				break
			}
		}
		if usageAt > invalidated {
			return est
		}
	}
	// Every message is estimated: those after the usage were above.
	before := msgs[:est.LastUsageIndex+1]
	sums := make([]int, partsOf(len(before)))
	spread(len(sums), len(before), func(part, lo, hi int) {
		var s scanner
		for _, m := range before[lo:hi] {
			if m.Role != session.RoleSystem {
				sums[part] += estimateWith(&s, m)
			}
		}
	})
	for _, n := range sums {
		tokens += n
	}
	if sys, _ := session.SystemPrompt(msgs); sys != nil {
		tokens += estimate(decode(sys))
	}
	return Estimate{Tokens: tokens, TrailingTokens: tokens, LastUsageIndex: -1}
}

// ShouldCompact is pi's trigger: compaction is enabled and the context holds
// more than the window minus the reserve kept for the reply.
func ShouldCompact(contextTokens, contextWindow int, s Settings) bool {
	return s.Enabled && contextTokens > contextWindow-s.ReserveTokens
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v, decodeOptions) }
