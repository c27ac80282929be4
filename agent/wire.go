package agent

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/openai/openai-go/v3"
)

// The SDKs encode a parameter by reflection, at 2–4 µs a message: for a
// request of a million messages that was most of the time spent writing it.
// appendOpenAI and appendAnthropic encode the parameters openaiMessage and
// anthropicMessage make, byte for byte as the SDK's own MarshalJSON does
// (FuzzWireIsTheSDKs, and TestStreamedBodyIsTheSDKs on whole requests), and
// decline (ok false) any parameter with a field they do not write, which the
// SDK then encodes. The conversion stays in one place; this is only a faster
// MarshalJSON of its output.

// appendOpenAI appends u as its MarshalJSON would.
func appendOpenAI(b []byte, u openai.ChatCompletionMessageParamUnion) ([]byte, bool) {
	w := wire{b: b, ok: one(u.OfDeveloper != nil, u.OfSystem != nil, u.OfUser != nil, u.OfAssistant != nil, u.OfTool != nil, u.OfFunction != nil)}
	switch {
	case !w.ok:
	case u.OfSystem != nil:
		m := u.OfSystem
		w.need(!m.Name.Valid() && m.Content.OfString.Valid() && m.Content.OfArrayOfContentParts == nil)
		w.raw(`{"content":`)
		w.str(m.Content.OfString.Value)
		w.raw(`,"role":"system"}`)
	case u.OfUser != nil:
		m, c := u.OfUser, u.OfUser.Content
		w.need(!m.Name.Valid() && c.OfString.Valid() != (len(c.OfArrayOfContentParts) > 0))
		w.raw(`{"content":`)
		if c.OfString.Valid() {
			w.str(c.OfString.Value)
		} else {
			w.raw("[")
			for i, p := range c.OfArrayOfContentParts {
				t := p.OfText
				w.need(t != nil && p.OfImageURL == nil && p.OfInputAudio == nil && p.OfFile == nil)
				if !w.ok {
					break
				}
				w.need(t.PromptCacheBreakpoint == openai.ChatCompletionContentPartTextPromptCacheBreakpointParam{})
				w.comma(i)
				w.raw(`{"text":`)
				w.str(t.Text)
				w.raw(`,"type":"text"}`)
			}
			w.raw("]")
		}
		w.raw(`,"role":"user"}`)
	case u.OfAssistant != nil:
		m := u.OfAssistant
		w.need(!m.Refusal.Valid() && !m.Name.Valid() && m.Audio == openai.ChatCompletionAssistantMessageParamAudio{} && m.Content.OfArrayOfContentParts == nil)
		//lint:ignore SA1019 a deprecated field set would still be sent, so it must be unset here
		w.need(m.FunctionCall == openai.ChatCompletionAssistantMessageParamFunctionCall{})
		w.raw("{")
		if m.Content.OfString.Valid() {
			w.raw(`"content":`)
			w.str(m.Content.OfString.Value)
			w.raw(",")
		}
		if len(m.ToolCalls) > 0 {
			w.raw(`"tool_calls":[`)
			for i, c := range m.ToolCalls {
				f := c.OfFunction
				if w.need(f != nil && c.OfCustom == nil); !w.ok {
					break
				}
				w.comma(i)
				w.raw(`{"id":`)
				w.str(f.ID)
				w.raw(`,"function":{"arguments":`)
				w.str(f.Function.Arguments)
				w.raw(`,"name":`)
				w.str(f.Function.Name)
				w.raw(`},"type":"function"}`)
			}
			w.raw("],")
		}
		w.raw(`"role":"assistant"}`)
	case u.OfTool != nil:
		m := u.OfTool
		w.need(m.Content.OfString.Valid() && m.Content.OfArrayOfContentParts == nil)
		w.raw(`{"content":`)
		w.str(m.Content.OfString.Value)
		w.raw(`,"tool_call_id":`)
		w.str(m.ToolCallID)
		w.raw(`,"role":"tool"}`)
	default:
		w.ok = false
	}
	return w.b, w.ok
}

// appendAnthropic appends m as its MarshalJSON would.
func appendAnthropic(b []byte, m anthropic.MessageParam) ([]byte, bool) {
	w := wire{b: b, html: true, ok: one(m.OfUser != nil, m.OfAssistant != nil, m.OfSystem != nil)}
	var blocks []anthropic.ContentBlockParamUnion
	role := ""
	switch {
	case !w.ok:
	case m.OfUser != nil:
		blocks, role = m.OfUser.Content, `"user"}`
	case m.OfAssistant != nil:
		blocks, role = m.OfAssistant.Content, `"assistant"}`
	default:
		w.ok = false
	}
	w.need(len(blocks) > 0)
	w.raw(`{"content":[`)
	for i, u := range blocks {
		w.comma(i)
		w.block(u)
	}
	w.raw(`],"role":`)
	w.raw(role)
	return w.b, w.ok
}

// block writes one content block: text, thinking, tool use or tool result,
// as anthropicMessages makes them.
func (w *wire) block(u anthropic.ContentBlockParamUnion) {
	w.need(one(u.OfText != nil, u.OfImage != nil, u.OfDocument != nil, u.OfSearchResult != nil, u.OfThinking != nil,
		u.OfRedactedThinking != nil, u.OfToolUse != nil, u.OfToolResult != nil, u.OfServerToolUse != nil, u.OfWebSearchToolResult != nil,
		u.OfWebFetchToolResult != nil, u.OfCodeExecutionToolResult != nil, u.OfBashCodeExecutionToolResult != nil,
		u.OfTextEditorCodeExecutionToolResult != nil, u.OfToolSearchToolResult != nil, u.OfContainerUpload != nil))
	switch {
	case !w.ok:
	case u.OfText != nil:
		w.text(u.OfText)
	case u.OfThinking != nil:
		w.raw(`{"signature":`)
		w.str(u.OfThinking.Signature)
		w.raw(`,"thinking":`)
		w.str(u.OfThinking.Thinking)
		w.raw(`,"type":"thinking"}`)
	case u.OfToolUse != nil:
		t := u.OfToolUse
		w.need(!t.ToolsetName.Valid() && t.CacheControl == anthropic.CacheControlEphemeralParam{} && t.Caller == anthropic.ToolUseBlockParamCallerUnion{} && t.Input != nil)
		w.raw(`{"id":`)
		w.str(t.ID)
		w.raw(`,"input":`)
		w.value(t.Input)
		w.raw(`,"name":`)
		w.str(t.Name)
		w.raw(`,"type":"tool_use"}`)
	case u.OfToolResult != nil:
		t := u.OfToolResult
		w.need(!t.ToolsetName.Valid() && t.IsError.Valid() && t.CacheControl == anthropic.CacheControlEphemeralParam{} && len(t.Content) > 0)
		w.raw(`{"tool_use_id":`)
		w.str(t.ToolUseID)
		w.raw(`,"is_error":`)
		w.b = strconv.AppendBool(w.b, t.IsError.Value)
		w.raw(`,"content":[`)
		for i, c := range t.Content {
			w.need(c.OfText != nil && c.OfImage == nil && c.OfSearchResult == nil && c.OfDocument == nil && c.OfToolReference == nil && c.OfBrowserState == nil)
			if !w.ok {
				break
			}
			w.comma(i)
			w.text(c.OfText)
		}
		w.raw(`],"type":"tool_result"}`)
	default:
		w.ok = false
	}
}

func (w *wire) text(t *anthropic.TextBlockParam) {
	w.need(t.Citations == nil && t.CacheControl == anthropic.CacheControlEphemeralParam{})
	w.raw(`{"text":`)
	w.str(t.Text)
	w.raw(`,"type":"text"}`)
}

// value writes what json.Unmarshal into an any makes, as encoding/json
// encodes it: objects with their keys sorted, numbers as float64s.
func (w *wire) value(v any) {
	switch v := v.(type) {
	case nil:
		w.raw("null")
	case bool:
		w.b = strconv.AppendBool(w.b, v)
	case string:
		w.str(v)
	case float64:
		w.float(v)
	case []any:
		w.raw("[")
		for i, e := range v {
			w.comma(i)
			w.value(e)
		}
		w.raw("]")
	case json.RawMessage: // sortedJSON's: the SDK writes it as it is
		w.b = append(w.b, v...)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.raw("{")
		for i, k := range keys {
			w.comma(i)
			w.str(k)
			w.raw(":")
			w.value(v[k])
		}
		w.raw("}")
	default:
		w.ok = false
	}
}

// float writes f as encoding/json does: the shortest form that reads back,
// in exponent form below 1e-6 and from 1e21.
func (w *wire) float(f float64) {
	if w.need(!math.IsInf(f, 0) && !math.IsNaN(f)); !w.ok {
		return
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 is written e-9
		b = b[:n-1]
	}
	w.b = b
}

// wire is a message being written; once ok is false the message is declined
// and what is written no longer matters.
type wire struct {
	b    []byte
	ok   bool
	html bool // <, > and & are escaped in strings (the Anthropic SDK's encoding)
}

// need declines the message unless cond holds.
func (w *wire) need(cond bool) { w.ok = w.ok && cond }

func (w *wire) raw(s string) { w.b = append(w.b, s...) }

func (w *wire) comma(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

// str writes s quoted as the SDK quotes it: jsontext's quoting with U+2028
// and U+2029 escaped, and with html <, > and & too. A string of invalid
// UTF-8 (which the SDKs write with U+FFFD in its place) is declined.
func (w *wire) str(s string) {
	if !w.ok {
		return
	}
	n := len(w.b)
	b, err := jsontext.AppendQuote(w.b, s)
	if w.b = b; err != nil {
		w.ok = false
		return
	}
	// (strings.Contains finds a separator at memchr's speed, where
	// ContainsAny with a rune outside ASCII walks s a rune at a time.)
	separators := strings.Contains(s, "\u2028") || strings.Contains(s, "\u2029")
	if !separators && (!w.html || !strings.ContainsAny(s, "<>&")) {
		return
	}
	// Those characters are in the quoted string as themselves.
	q := string(b[n:])
	b = b[:n]
	for _, r := range q {
		if r == '\u2028' || r == '\u2029' || w.html && (r == '<' || r == '>' || r == '&') {
			b = append(b, `\u`...)
			b = append(b, "0123456789abcdef"[r>>12&15], "0123456789abcdef"[r>>8&15], "0123456789abcdef"[r>>4&15], "0123456789abcdef"[r&15])
		} else {
			b = utf8.AppendRune(b, r)
		}
	}
	w.b = b
}

// one reports whether exactly one of a union's members is set.
func one(set ...bool) bool {
	n := 0
	for _, s := range set {
		if s {
			n++
		}
	}
	return n == 1
}
