package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"

	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Anthropic speaks the Messages API with streaming.
type Anthropic struct {
	o      Options
	client anthropic.Client
}

// NewAnthropic returns a Messages API provider.
func NewAnthropic(o Options) *Anthropic {
	o = o.withDefaults()
	if o.Name == "" {
		o.Name = "anthropic"
	}
	opts := []option.RequestOption{
		option.WithMaxRetries(o.MaxRetries),
		option.WithHTTPClient(o.HTTPClient),
		option.WithRequestTimeout(o.Timeout),
		option.WithAPIKey(o.APIKey),
	}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	return &Anthropic{o: o, client: anthropic.NewClient(opts...)}
}

// API implements Provider.
func (p *Anthropic) API() string { return "anthropic-messages" }

// thinkingBudget is the token budget of each thinking level (pi's defaults).
var thinkingBudget = map[string]int64{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32000}

// anthropicMessages are the request's messages as Messages API messages, each
// converted when it is reached; consecutive tool results go back in one user
// message, as the API wants. With reuse, a message's parameters are made in
// lists the next message reuses, so they are valid only until the next is
// yielded, which is all splice needs: a million messages then make a few
// lists, not a million sets of parameters for the collector to sweep.
func anthropicMessages(r Request, reuse bool) iter.Seq[anthropic.MessageParam] {
	return func(yield func(anthropic.MessageParam) bool) {
		p := new(anthropicParams)
		send := func(m anthropic.MessageParam) bool {
			ok := yield(m)
			if reuse {
				p.reset()
			} else {
				p = new(anthropicParams)
			}
			return ok
		}
		results := false // p.blocks are tool results not sent yet
		flush := func() bool {
			if !results {
				return true
			}
			results = false
			return send(p.message("user", p.blocks))
		}
		for m := range r.Decoded() {
			if m.Role == "toolResult" {
				text := m.Content.Text("\n")
				if text == "" {
					text = "(no output)"
				}
				p.blocks = append(p.blocks, p.toolResult(m.ToolCallID, text, m.IsError))
				results = true
				continue
			}
			if !flush() {
				return
			}
			if msg, ok := p.convert(m); ok && !send(msg) {
				return
			}
		}
		flush()
	}
}

// anthropicParams makes the SDK's parameters of a message as the SDK's
// constructors (NewTextBlock, NewToolResultBlock, NewUserMessage, ...) do, in
// lists that reset keeps for the next message.
type anthropicParams struct {
	blocks    []anthropic.ContentBlockParamUnion // the message's
	texts     []anthropic.TextBlockParam
	thoughts  []anthropic.ThinkingBlockParam
	uses      []anthropic.ToolUseBlockParam
	results   []anthropic.ToolResultBlockParam
	contents  []anthropic.ToolResultBlockParamContentUnion
	user      anthropic.UserMessageParam
	assistant anthropic.AssistantMessageParam
}

// reset lets the next message reuse the lists; what was made before must no
// longer be read.
func (p *anthropicParams) reset() {
	p.blocks, p.texts, p.thoughts = p.blocks[:0], p.texts[:0], p.thoughts[:0]
	p.uses, p.results, p.contents = p.uses[:0], p.results[:0], p.contents[:0]
}

// convert converts a user or assistant message; ok is false for one with
// nothing to send.
func (p *anthropicParams) convert(m session.MessageData) (anthropic.MessageParam, bool) {
	p.blocks = p.blocks[:0]
	for _, b := range m.Content.AsBlocks() {
		switch {
		case b.Type == "text":
			if b.Text != "" {
				p.blocks = append(p.blocks, anthropic.ContentBlockParamUnion{OfText: p.text(b.Text)})
			}
		case b.Type == "image" && m.Role == "user":
			p.blocks = append(p.blocks, anthropic.NewImageBlockBase64(b.MimeType, b.Data))
		case b.Type == "thinking" && m.Role == "assistant":
			if b.ThinkingSignature != "" {
				p.thoughts = append(p.thoughts, anthropic.ThinkingBlockParam{Signature: b.ThinkingSignature, Thinking: b.Thinking})
				p.blocks = append(p.blocks, anthropic.ContentBlockParamUnion{OfThinking: &p.thoughts[len(p.thoughts)-1]})
			}
		case b.Type == "toolCall" && m.Role == "assistant":
			p.uses = append(p.uses, anthropic.ToolUseBlockParam{ID: b.ID, Input: toolInput(b.Arguments), Name: b.Name})
			p.blocks = append(p.blocks, anthropic.ContentBlockParamUnion{OfToolUse: &p.uses[len(p.uses)-1]})
		}
	}
	if len(p.blocks) == 0 {
		return anthropic.MessageParam{}, false
	}
	return p.message(m.Role, p.blocks), true
}

// message is NewUserMessage(blocks...) or NewAssistantMessage(blocks...).
func (p *anthropicParams) message(role string, blocks []anthropic.ContentBlockParamUnion) anthropic.MessageParam {
	if role == "user" {
		p.user = anthropic.UserMessageParam{Content: blocks}
		return anthropic.MessageParam{OfUser: &p.user}
	}
	p.assistant = anthropic.AssistantMessageParam{Content: blocks}
	return anthropic.MessageParam{OfAssistant: &p.assistant}
}

func (p *anthropicParams) text(t string) *anthropic.TextBlockParam {
	p.texts = append(p.texts, anthropic.TextBlockParam{Text: t})
	return &p.texts[len(p.texts)-1]
}

// toolResult is NewToolResultBlock(id, text, isError).
func (p *anthropicParams) toolResult(id, text string, isError bool) anthropic.ContentBlockParamUnion {
	p.contents = append(p.contents, anthropic.ToolResultBlockParamContentUnion{OfText: p.text(text)})
	n := len(p.contents)
	p.results = append(p.results, anthropic.ToolResultBlockParam{ToolUseID: id, Content: p.contents[n-1 : n : n], IsError: anthropic.Bool(isError)})
	return anthropic.ContentBlockParamUnion{OfToolResult: &p.results[len(p.results)-1]}
}

// toolInput is a tool call's arguments as the input of its tool_use block:
// what json.Unmarshal makes of them ({} when they are not JSON). Arguments of
// plain JSON (sortedJSON) are given as the JSON that value encodes to, without
// making it: a million tool calls are not each decoded into a map.
func toolInput(args json.RawMessage) any {
	if raw, ok := sortedJSON(args); ok {
		return raw
	}
	var input any = map[string]any{}
	_ = json.Unmarshal(args, &input)
	return input
}

// sortedJSON is what encoding/json writes (with HTML escaping) of the value
// json.Unmarshal makes of raw, for raw of strings without escapes, integers
// of up to 15 digits, true, false, null, and objects whose keys have no
// escape and are not repeated: those with their members sorted by key, the
// rest as written, without spaces. ok is false for anything else.
func sortedJSON(raw []byte) (json.RawMessage, bool) {
	w := wire{ok: true, html: true}
	end := w.sorted(raw, jsonscan.SkipSpace(raw, 0))
	return w.b, w.ok && jsonscan.SkipSpace(raw, end) == len(raw)
}

// sorted writes the value at i of raw as sortedJSON does, and returns where
// it ends.
func (w *wire) sorted(raw []byte, i int) int {
	if i >= len(raw) {
		w.ok = false
		return i
	}
	switch c := raw[i]; {
	case c == '"':
		s, end, ok := jsonscan.PlainAt(raw, i)
		w.need(ok)
		w.str(s)
		return end
	case c == '[':
		w.raw("[")
		i = jsonscan.SkipSpace(raw, i+1)
		for n := 0; w.ok && i < len(raw) && raw[i] != ']'; n++ {
			if n > 0 {
				w.need(raw[i] == ',')
				i = jsonscan.SkipSpace(raw, i+1)
			}
			w.comma(n)
			i = jsonscan.SkipSpace(raw, w.sorted(raw, i))
		}
		w.need(i < len(raw))
		w.raw("]")
		return i + 1
	case c == '{':
		type member struct {
			key        string
			start, end int // of the value, written
		}
		var members []member
		values := wire{ok: true, html: true}
		i = jsonscan.SkipSpace(raw, i+1)
		for values.ok && w.ok && i < len(raw) && raw[i] != '}' {
			if len(members) > 0 {
				w.need(raw[i] == ',')
				i = jsonscan.SkipSpace(raw, i+1)
			}
			key, end, ok := jsonscan.PlainAt(raw, i)
			w.need(ok && !slices.ContainsFunc(members, func(m member) bool { return m.key == key }))
			if i = jsonscan.SkipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
				w.ok = false
				break
			}
			start := len(values.b)
			i = jsonscan.SkipSpace(raw, values.sorted(raw, jsonscan.SkipSpace(raw, i+1)))
			members = append(members, member{key, start, len(values.b)})
		}
		w.need(values.ok && i < len(raw))
		slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		w.raw("{")
		for n, m := range members {
			w.comma(n)
			w.str(m.key)
			w.raw(":")
			w.b = append(w.b, values.b[m.start:m.end]...)
		}
		w.raw("}")
		return i + 1
	case c == 't' || c == 'f' || c == 'n':
		if lit, end, ok := jsonscan.Keyword(raw, i); ok {
			w.raw(lit)
			return end
		}
	case c == '-' || '0' <= c && c <= '9':
		if end, ok := jsonscan.ExactInteger(raw, i); ok {
			w.b = append(w.b, raw[i:end]...) // encoding/json writes the float64 back so
			return end
		}
	}
	w.ok = false
	return i
}

// params is the request without its messages (see anthropicMessages).
func (p *Anthropic) params(r Request) anthropic.MessageNewParams {
	maxTokens := int64(r.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = 16384
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(r.Model)}
	if r.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: r.System}}
	}
	if budget, ok := thinkingBudget[r.Thinking]; ok {
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		maxTokens = max(maxTokens, budget+4096)
	}
	params.MaxTokens = maxTokens
	for _, t := range r.Tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		_ = json.Unmarshal(t.Parameters, &schema)
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: t.Name, Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}}})
	}
	return params
}

// Stream implements Provider.
func (p *Anthropic) Stream(ctx context.Context, r Request, on func(Delta)) (*session.Assistant, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wd := newWatchdog(p.o.IdleTimeout, cancel)
	var once []option.RequestOption
	retries := p.o.MaxRetries
	if r.NoRetry {
		once, retries = append(once, option.WithMaxRetries(0)), 0
	}
	if r.retry != nil {
		ctx = r.retry.start(ctx, retries)
		once = append(once, option.WithMiddleware(r.retry.observe))
	}
	// The messages are written into the body by the middleware (see splice).
	params := p.params(r)
	msgs := anthropicMessages(r, true)
	if hasAny(msgs) {
		params.Messages = []anthropic.MessageParam{}
		once = append(once, option.WithMiddleware(splice(msgs, appendAnthropic)))
	}
	stream := p.client.Messages.NewStreaming(ctx, params, once...)
	defer stream.Close()

	out := &session.Assistant{Content: []session.Block{}}
	at := map[int64]int{} // the server's block index → ours
	args := map[int]*strings.Builder{}
	stop := ""
	for stream.Next() {
		wd.alive(p.o.IdleTimeout)
		ev := stream.Current()
		switch e := ev.AsAny().(type) {
		case anthropic.MessageStartEvent:
			u := e.Message.Usage
			out.Usage.Input = float64(u.InputTokens)
			out.Usage.CacheRead = float64(u.CacheReadInputTokens)
			out.Usage.CacheWrite = float64(u.CacheCreationInputTokens)
			out.Usage.Output = float64(u.OutputTokens)
		case anthropic.ContentBlockStartEvent:
			var b session.Block
			switch cb := e.ContentBlock.AsAny().(type) {
			case anthropic.TextBlock:
				b = session.Block{Type: "text", Text: cb.Text}
			case anthropic.ThinkingBlock:
				b = session.Block{Type: "thinking", Thinking: cb.Thinking, ThinkingSignature: cb.Signature}
			case anthropic.ToolUseBlock:
				b = session.Block{Type: "toolCall", ID: cb.ID, Name: cb.Name}
			default:
				continue
			}
			out.Content = append(out.Content, b)
			i := len(out.Content) - 1
			at[e.Index] = i
			if b.Type == "toolCall" {
				args[i] = &strings.Builder{}
				on(Delta{Type: "toolcall_start", ContentIndex: i, ID: b.ID, ToolName: b.Name, Usage: out.Usage})
			}
		case anthropic.ContentBlockDeltaEvent:
			i, ok := at[e.Index]
			if !ok {
				continue
			}
			switch d := e.Delta.AsAny().(type) {
			case anthropic.TextDelta:
				out.Content[i].Text += d.Text
				on(Delta{Type: "text_delta", ContentIndex: i, Delta: d.Text, Usage: out.Usage})
			case anthropic.ThinkingDelta:
				out.Content[i].Thinking += d.Thinking
				on(Delta{Type: "thinking_delta", ContentIndex: i, Delta: d.Thinking, Usage: out.Usage})
			case anthropic.SignatureDelta:
				out.Content[i].ThinkingSignature += d.Signature
			case anthropic.InputJSONDelta:
				if b := args[i]; b != nil {
					b.WriteString(d.PartialJSON)
					on(Delta{Type: "toolcall_delta", ContentIndex: i, Delta: d.PartialJSON, Usage: out.Usage})
				}
			}
		case anthropic.MessageDeltaEvent:
			stop = string(e.Delta.StopReason)
			if e.Usage.OutputTokens > 0 {
				out.Usage.Output = float64(e.Usage.OutputTokens)
			}
			if e.Usage.InputTokens > 0 {
				out.Usage.Input = float64(e.Usage.InputTokens)
			}
			if e.Usage.CacheReadInputTokens > 0 {
				out.Usage.CacheRead = float64(e.Usage.CacheReadInputTokens)
			}
			if e.Usage.CacheCreationInputTokens > 0 {
				out.Usage.CacheWrite = float64(e.Usage.CacheCreationInputTokens)
			}
		}
	}
	stalled := wd.stop()
	for i, b := range args {
		out.Content[i].Arguments, out.Content[i].ArgumentsError = arguments(b.String())
	}
	u := &out.Usage
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	switch stop {
	case "max_tokens":
		out.StopReason = session.StopLength
	case "tool_use":
		out.StopReason = session.StopToolUse
	case "refusal":
		out.StopReason = session.StopError
	default:
		out.StopReason = session.StopEnd
	}
	if err := stream.Err(); err != nil {
		return out, p.error(ctx, err, stalled)
	}
	if stalled {
		return out, p.error(ctx, context.Canceled, true)
	}
	if stop == "" && ctx.Err() == nil {
		return out, &ProviderError{Provider: p.o.Name, Message: "the stream ended before the reply was finished"}
	}
	if stop == "refusal" {
		return out, &ProviderError{Provider: p.o.Name, Message: "the model refused to answer"}
	}
	return out, nil
}

func (p *Anthropic) error(ctx context.Context, err error, stalled bool) error {
	var api *apiError
	if ae := (*anthropic.Error)(nil); errors.As(err, &ae) {
		api = &apiError{status: ae.StatusCode, message: ae.Message, raw: ae.RawJSON()}
	}
	// An error event inside the stream ({"type":"error","error":{…}}) is a plain error.
	return p.o.mapError(ctx, err, stalled, api)
}
