package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/arborlog/arbor/session"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI speaks the chat-completions API with streaming: OpenAI, OpenRouter,
// vLLM, llama.cpp's server, Ollama and other compatible servers.
type OpenAI struct {
	o      Options
	client openai.Client
}

// NewOpenAI returns a chat-completions provider.
func NewOpenAI(o Options) *OpenAI {
	o = o.withDefaults()
	if o.Name == "" {
		o.Name = "openai"
	}
	opts := []option.RequestOption{
		option.WithMaxRetries(o.MaxRetries),
		option.WithHTTPClient(o.HTTPClient),
		option.WithRequestTimeout(o.Timeout),
	}
	if o.BaseURL != "" { // else the SDK's default, OpenAI's own endpoint
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	} else {
		opts = append(opts, option.WithAPIKey("none"))
	}
	return &OpenAI{o: o, client: openai.NewClient(opts...)}
}

// API implements Provider.
func (p *OpenAI) API() string { return "openai-completions" }

// params is the request without its messages (see messages).
func (p *OpenAI) params(r Request) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(r.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if r.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(int64(r.MaxTokens))
	}
	if r.Thinking != "" && r.Thinking != "off" {
		effort := r.Thinking
		if effort == "xhigh" {
			effort = "high"
		}
		params.ReasoningEffort = shared.ReasoningEffort(effort)
	}
	for _, t := range r.Tools {
		var schema map[string]any
		_ = json.Unmarshal(t.Parameters, &schema)
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(schema)}))
	}
	return params
}

// openaiMessages are the request's messages as chat-completions messages, the
// system prompt first, each converted when it is reached.
func openaiMessages(r Request) iter.Seq[openai.ChatCompletionMessageParamUnion] {
	return func(yield func(openai.ChatCompletionMessageParamUnion) bool) {
		if r.System != "" && !yield(openai.SystemMessage(r.System)) {
			return
		}
		for m := range r.Decoded() {
			if msg, ok := openaiMessage(m); ok && !yield(msg) {
				return
			}
		}
	}
}

// openaiMessage converts one message; ok is false for one with nothing to send.
func openaiMessage(m session.MessageData) (openai.ChatCompletionMessageParamUnion, bool) {
	switch m.Role {
	case "user":
		var parts []openai.ChatCompletionContentPartUnionParam
		for _, b := range m.Content.AsBlocks() {
			switch b.Type {
			case "text":
				parts = append(parts, openai.TextContentPart(b.Text))
			case "image":
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + b.MimeType + ";base64," + b.Data}))
			}
		}
		if blocks := m.Content.AsBlocks(); len(parts) == 1 && blocks[0].Type == "text" {
			return openai.UserMessage(blocks[0].Text), true
		} else if len(parts) > 0 {
			return openai.UserMessage(parts), true
		}
	case "assistant":
		var a openai.ChatCompletionAssistantMessageParam
		text := m.Content.Text("\n")
		if text != "" {
			a.Content.OfString = openai.String(text)
		}
		for _, b := range m.Content.AsBlocks() {
			if b.Type != "toolCall" {
				continue
			}
			args := string(b.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: b.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args}}})
		}
		if text != "" || len(a.ToolCalls) > 0 {
			return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
		}
	case "toolResult":
		text := m.Content.Text("\n")
		if text == "" {
			text = "(no output)"
		}
		return openai.ToolMessage(text, m.ToolCallID), true
	}
	return openai.ChatCompletionMessageParamUnion{}, false
}

// Stream implements Provider.
func (p *OpenAI) Stream(ctx context.Context, r Request, on func(Delta)) (*session.Assistant, error) {
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
	msgs := openaiMessages(r)
	if hasAny(msgs) {
		params.Messages = []openai.ChatCompletionMessageParamUnion{}
		once = append(once, option.WithMiddleware(splice(msgs, appendOpenAI)))
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params, once...)
	defer stream.Close()

	out := &session.Assistant{Content: []session.Block{}}
	// Blocks are opened in the order their first delta arrives; tool calls are
	// keyed by the index the server gives them, their arguments accumulated.
	textIdx, thinkIdx := -1, -1
	calls := map[int64]int{}
	args := map[int]*strings.Builder{}
	finish := ""
	for stream.Next() {
		wd.alive(p.o.IdleTimeout)
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			out.Usage.Input = float64(u.PromptTokens - u.PromptTokensDetails.CachedTokens)
			out.Usage.CacheRead = float64(u.PromptTokensDetails.CachedTokens)
			out.Usage.Output = float64(u.CompletionTokens)
			out.Usage.TotalTokens = float64(u.TotalTokens)
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if reasoning := reasoningOf(d.JSON.ExtraFields); reasoning != "" {
				if thinkIdx < 0 {
					out.Content = append(out.Content, session.Block{Type: "thinking"})
					thinkIdx = len(out.Content) - 1
				}
				out.Content[thinkIdx].Thinking += reasoning
				on(Delta{Type: "thinking_delta", ContentIndex: thinkIdx, Delta: reasoning, Usage: out.Usage})
			}
			if d.Content != "" {
				if textIdx < 0 {
					out.Content = append(out.Content, session.Block{Type: "text"})
					textIdx = len(out.Content) - 1
				}
				out.Content[textIdx].Text += d.Content
				on(Delta{Type: "text_delta", ContentIndex: textIdx, Delta: d.Content, Usage: out.Usage})
			}
			for _, tc := range d.ToolCalls {
				i, ok := calls[tc.Index]
				if !ok {
					out.Content = append(out.Content, session.Block{Type: "toolCall", ID: tc.ID, Name: tc.Function.Name})
					i = len(out.Content) - 1
					calls[tc.Index] = i
					args[i] = &strings.Builder{}
					on(Delta{Type: "toolcall_start", ContentIndex: i, ID: tc.ID, ToolName: tc.Function.Name, Usage: out.Usage})
				}
				if tc.ID != "" && out.Content[i].ID == "" {
					out.Content[i].ID = tc.ID
				}
				if tc.Function.Name != "" && out.Content[i].Name == "" {
					out.Content[i].Name = tc.Function.Name
				}
				if tc.Function.Arguments != "" {
					args[i].WriteString(tc.Function.Arguments)
					on(Delta{Type: "toolcall_delta", ContentIndex: i, Delta: tc.Function.Arguments, Usage: out.Usage})
				}
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	stalled := wd.stop()
	for i, b := range args {
		out.Content[i].Arguments, out.Content[i].ArgumentsError = arguments(b.String())
	}
	for i := range out.Content {
		if out.Content[i].Type == "toolCall" && out.Content[i].ID == "" {
			out.Content[i].ID = fmt.Sprintf("call_%d", i)
		}
	}
	switch finish {
	case "length":
		out.StopReason = session.StopLength
	case "tool_calls", "function_call":
		out.StopReason = session.StopToolUse
	default:
		out.StopReason = session.StopEnd
		if len(out.ToolCalls()) > 0 {
			out.StopReason = session.StopToolUse
		}
	}
	if err := stream.Err(); err != nil {
		return out, p.error(ctx, err, stalled)
	}
	if stalled {
		return out, p.error(ctx, context.Canceled, true)
	}
	if finish == "" && ctx.Err() == nil {
		return out, &ProviderError{Provider: p.o.Name, Message: "the stream ended before the reply was finished"}
	}
	return out, nil
}

// reasoningOf reads the reasoning delta servers add to chat completions:
// reasoning_content (DeepSeek, vLLM, llama.cpp), reasoning (OpenRouter, Ollama).
func reasoningOf(extra map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning", "reasoning_text"} {
		f, ok := extra[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (p *OpenAI) error(ctx context.Context, err error, stalled bool) error {
	var api *apiError
	if ae := (*openai.Error)(nil); errors.As(err, &ae) {
		api = &apiError{status: ae.StatusCode, message: ae.Message, raw: ae.RawJSON(), overflow: ae.Code == "context_length_exceeded"}
	}
	return p.o.mapError(ctx, err, stalled, api)
}
