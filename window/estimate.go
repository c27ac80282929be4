package window

import (
	"math"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// Tokenizer counts the tokens of a text exactly (package window/exact has one).
type Tokenizer interface {
	Count(text string) int
}

// Kind is the kind of text being counted: tokenizers split prose into fewer,
// longer tokens than code or tool output.
type Kind int

const (
	// Prose is natural-language text: requests, replies, reasoning, summaries.
	Prose Kind = iota
	// Code is code, tool arguments and tool output.
	Code
)

// Estimator turns messages into token counts. The zero value is not usable;
// start from DefaultEstimator.
type Estimator struct {
	// ProseBytesPerToken and CodeBytesPerToken are the ASCII bytes per token
	// for each kind of text. Text is placed between the two by its density of
	// symbols and digits, so prose with a code block counts in between.
	ProseBytesPerToken float64
	CodeBytesPerToken  float64
	// NonASCIITokens is the tokens per non-ASCII character (CJK, emoji, accents).
	NonASCIITokens float64
	// ImageTokens is the fixed cost of one image block.
	ImageTokens int
	// MessageTokens is the framing cost of one message (role, separators).
	MessageTokens int
	// Exact, when set, counts text exactly; images keep their fixed cost.
	Exact Tokenizer
}

// DefaultEstimator's rates were fitted against the o200k tokenizer on pi's
// interop sessions and window's fixtures (window/exact's accuracy test).
var DefaultEstimator = Estimator{
	ProseBytesPerToken: 4.2,
	CodeBytesPerToken:  2.8,
	NonASCIITokens:     0.8,
	ImageTokens:        1200,
	MessageTokens:      4,
}

// Text estimates the tokens of s as kind k.
func (e *Estimator) Text(s string, k Kind) int {
	if s == "" {
		return 0
	}
	if e.Exact != nil {
		return e.Exact.Count(s)
	}
	var ascii, other, dense int
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			ascii++
			if isDense(c) {
				dense++
			}
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
		other++
	}
	rate := e.ProseBytesPerToken
	if k == Code {
		rate = e.CodeBytesPerToken
	}
	if ascii >= 64 {
		// Long enough to judge by itself: the density of symbols, digits and
		// line breaks moves the rate from prose (5% or less) to code (35% and
		// more), whatever kind the caller guessed. Fitted on pi sessions
		// against o200k (window/exact's TestEstimateAgainstExact).
		d := float64(dense) / float64(ascii)
		t := math.Min(1, math.Max(0, (d-0.05)/0.30))
		rate = e.ProseBytesPerToken - t*(e.ProseBytesPerToken-e.CodeBytesPerToken)
	}
	return int(math.Ceil(float64(ascii)/rate + float64(other)*e.NonASCIITokens))
}

// isDense reports the bytes that code and tool output are full of and prose is not.
func isDense(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		return true
	case c == '\n' || c == '\t':
		return true
	}
	switch c {
	case '{', '}', '[', ']', '(', ')', '<', '>', ';', '=', '_', '/', '\\', '|', '`', '$', '#', '*', '&', '"', '\'', ':', '+', '-', '%', '@', '^', '~':
		return true
	}
	return false
}

// Message estimates what one context message costs once converted for a model.
func (e *Estimator) Message(m session.ContextMessage) int {
	d, ok := data(m.Raw)
	if !ok {
		return e.MessageTokens + e.Text(string(m.Raw), Code)
	}
	return e.data(d, m.Raw)
}

func (e *Estimator) data(d session.MessageData, raw []byte) int {
	n := e.MessageTokens
	switch d.Role {
	case session.RoleBashExecution:
		if d.ExcludeFromContext {
			return 0
		}
		return n + e.Text(d.Command, Code) + e.Text(d.Output, Code) + 8
	case session.RoleCompactionSummary, session.RoleBranchSummary:
		return n + e.Text(summaryOf(raw), Prose) + 30 // pi's wrapper text
	case session.RoleSystem:
		// The prompt's content, its sections and the tools it declares.
		var v struct {
			Sections   map[string]jsontext.Value `json:"sections"`
			ToolsAdded jsontext.Value            `json:"toolsAdded"`
		}
		_ = unmarshal(raw, &v)
		for _, s := range v.Sections {
			var text string
			if unmarshal(s, &text) == nil {
				n += e.Text(text, Prose)
			}
		}
		if len(v.ToolsAdded) > 0 {
			n += e.Text(string(v.ToolsAdded), Code)
		}
	}
	kind := Prose
	if d.Role == session.RoleToolResult {
		kind = Code
	}
	if d.Content.IsString {
		return n + e.Text(d.Content.String, kind)
	}
	for _, b := range d.Content.Blocks {
		switch b.Type {
		case "text":
			n += e.Text(b.Text, kind)
		case "thinking":
			n += e.Text(b.Thinking, Prose)
		case "toolCall":
			n += e.Text(b.Name, Code) + e.Text(string(b.Arguments), Code) + 4
		case "image":
			n += e.ImageTokens
		}
	}
	return n
}

func summaryOf(raw []byte) string {
	var v struct {
		Summary string `json:"summary"`
	}
	_ = unmarshal(raw, &v)
	return v.Summary
}
