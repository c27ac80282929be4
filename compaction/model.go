package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/arborlog/arbor/session"
)

// Model is a Summarizer that asks a model behind any OpenAI-compatible
// chat-completions endpoint (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama, …),
// with pi's prompts: a system prompt that forbids continuing the conversation,
// the conversation serialized inside <conversation> tags, the previous summary
// inside <previous-summary> tags, and the structured prompt for the kind of
// summary asked for.
type Model struct {
	BaseURL string // e.g. https://api.openai.com/v1; "/chat/completions" is appended
	Model   string
	APIKey  string // sent as a bearer token when not empty
	// Timeout bounds each request (default 2 minutes).
	Timeout time.Duration
	// Client defaults to an http.Client with Timeout.
	Client *http.Client
}

// Environment variables that configure the model summarizer.
const (
	EnvBaseURL   = "ARBOR_MODEL_BASE_URL"
	EnvModel     = "ARBOR_MODEL"
	EnvAPIKeyEnv = "ARBOR_API_KEY_ENV" // names the variable that holds the key
	DefaultKey   = "ARBOR_API_KEY"     // the key's variable when ARBOR_API_KEY_ENV is unset
)

// ErrNoModel: the model summarizer was asked for but no model is configured.
var ErrNoModel = errors.New("compaction: no model configured: set " + EnvBaseURL + " and " + EnvModel + " (and the API key's variable), or use the mechanical summarizer")

// ModelFromEnv configures a Model from the environment; it fails with
// ErrNoModel when the base URL or the model is missing.
func ModelFromEnv(getenv func(string) string) (*Model, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Model{BaseURL: getenv(EnvBaseURL), Model: getenv(EnvModel)}
	if m.BaseURL == "" || m.Model == "" {
		return nil, ErrNoModel
	}
	keyVar := getenv(EnvAPIKeyEnv)
	if keyVar == "" {
		keyVar = DefaultKey
	}
	m.APIKey = getenv(keyVar)
	return m, nil
}

// Prompt returns the user prompt pi sends for a request.
func Prompt(r Request) string {
	var b strings.Builder
	if r.Kind == TurnPrefix {
		// pi 1.6.0 frames the start of a cut turn as a conversation and instructions.
		b.WriteString("# Conversation\n" + Serialize(r.Messages) + "\n\n# Instructions\n" + turnPrefixPrompt)
		if r.Instructions != "" {
			b.WriteString("\n\nAdditional focus: " + r.Instructions)
		}
		return b.String()
	}
	b.WriteString("<conversation>\n" + Serialize(r.Messages) + "\n</conversation>\n\n")
	switch r.Kind {
	case History:
		prompt := summaryPrompt
		if r.PreviousSummary != nil && *r.PreviousSummary != "" {
			prompt = updatePrompt
			b.WriteString("<previous-summary>\n" + *r.PreviousSummary + "\n</previous-summary>\n\n")
		}
		if r.Instructions != "" {
			prompt += "\n\nAdditional focus: " + r.Instructions
		}
		b.WriteString(prompt)
	case Branch:
		switch {
		case r.ReplaceInstructions && r.Instructions != "":
			b.WriteString(r.Instructions)
		case r.Instructions != "":
			b.WriteString(branchPrompt + "\n\nAdditional focus: " + r.Instructions)
		default:
			b.WriteString(branchPrompt)
		}
	}
	return b.String()
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model     string        `json:"model"`
	Messages  []chatMessage `json:"messages"`
	MaxTokens int           `json:"max_tokens,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		PromptTokens        float64 `json:"prompt_tokens"`
		CompletionTokens    float64 `json:"completion_tokens"`
		TotalTokens         float64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens float64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// Summarize sends one chat-completions request and returns the reply's text.
// A timeout, a status other than 2xx, an error in the reply or an empty reply
// is an error; nothing is retried.
func (m *Model) Summarize(ctx context.Context, r Request) (string, error) {
	text, _, err := m.SummarizeMetered(ctx, r)
	return text, err
}

// SummarizeMetered is Summarize that also returns the tokens the endpoint
// reported (pi's usage shape; no cost, since the endpoint's prices are unknown).
func (m *Model) SummarizeMetered(ctx context.Context, r Request) (string, session.Usage, error) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	client := m.Client
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(chatRequest{Model: m.Model, MaxTokens: r.MaxTokens, Messages: []chatMessage{
		{Role: "system", Content: SystemPrompt}, {Role: "user", Content: Prompt(r)}}})
	if err != nil {
		return "", session.Usage{}, fmt.Errorf("compaction: encode request: %w", err)
	}
	url := strings.TrimRight(m.BaseURL, "/") + "/chat/completions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", session.Usage{}, fmt.Errorf("compaction: model endpoint %q: %w", m.BaseURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if m.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.APIKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", session.Usage{}, fmt.Errorf("compaction: model %s at %s did not answer within %s", m.Model, url, timeout)
		}
		return "", session.Usage{}, fmt.Errorf("compaction: model %s at %s: %w", m.Model, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", session.Usage{}, fmt.Errorf("compaction: model %s at %s: read reply: %w", m.Model, url, err)
	}
	var cr chatResponse
	jsonErr := json.Unmarshal(data, &cr)
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(data))
		if jsonErr == nil && cr.Error != nil && cr.Error.Message != "" {
			msg = cr.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return "", session.Usage{}, fmt.Errorf("compaction: model %s at %s: %s: %s", m.Model, url, resp.Status, msg)
	}
	if jsonErr != nil {
		return "", session.Usage{}, fmt.Errorf("compaction: model %s at %s: the reply is not chat-completions JSON: %w", m.Model, url, jsonErr)
	}
	if cr.Error != nil && cr.Error.Message != "" {
		return "", session.Usage{}, fmt.Errorf("compaction: model %s at %s: %s", m.Model, url, cr.Error.Message)
	}
	if len(cr.Choices) == 0 || cr.Choices[0].Message.Content == nil || strings.TrimSpace(*cr.Choices[0].Message.Content) == "" {
		return "", session.Usage{}, fmt.Errorf("%w from model %s at %s", ErrEmptySummary, m.Model, url)
	}
	var u session.Usage
	if cr.Usage != nil {
		cached := cr.Usage.PromptTokensDetails.CachedTokens
		u = session.Usage{Input: cr.Usage.PromptTokens - cached, Output: cr.Usage.CompletionTokens, CacheRead: cached, TotalTokens: cr.Usage.TotalTokens}
	}
	return *cr.Choices[0].Message.Content, u, nil
}
