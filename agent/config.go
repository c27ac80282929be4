package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/arborlog/arbor/compaction"
)

// Config is the agent's configuration file ($ARBOR_DIR/config.json). Every
// field is optional; flags and environment variables override it.
type Config struct {
	Provider           string   `json:"provider,omitempty"` // a name in Providers, or openai / anthropic
	Model              string   `json:"model,omitempty"`
	Thinking           string   `json:"thinking,omitempty"`
	Tools              []string `json:"tools,omitempty"`
	SystemPrompt       string   `json:"systemPrompt,omitempty"`
	BashTimeoutSeconds float64  `json:"bashTimeoutSeconds,omitempty"`
	MaxResultBytes     int      `json:"maxResultBytes,omitempty"`
	// ShareCommand publishes the HTML page of the chat's /share (package
	// internal/share): a shell command line, {file} the page's path, else the
	// page on stdin; what it prints (a URL) is shown.
	ShareCommand string                    `json:"shareCommand,omitempty"`
	Providers    map[string]ProviderConfig `json:"providers,omitempty"`
	Models       map[string]ModelConfig    `json:"models,omitempty"`
	Redact       struct {
		Patterns []string `json:"patterns,omitempty"`
	} `json:"redact,omitzero"`
	Compaction *struct {
		Enabled          *bool `json:"enabled,omitempty"`
		ReserveTokens    int   `json:"reserveTokens,omitempty"`
		KeepRecentTokens int   `json:"keepRecentTokens,omitempty"`
	} `json:"compaction,omitempty"`
	// Checkpoints of the working folder (package checkpoint), for print
	// mode; off unless enabled.
	Checkpoints *struct {
		Enabled      *bool `json:"enabled,omitempty"`
		MaxFileBytes int64 `json:"maxFileBytes,omitempty"`
	} `json:"checkpoints,omitempty"`
}

// CheckpointsEnabled reports whether checkpoints are on and the size above
// which a file is left out of them (0: the default).
func (c *Config) CheckpointsEnabled() (bool, int64) {
	if c.Checkpoints == nil {
		return false, 0
	}
	on := c.Checkpoints.Enabled != nil && *c.Checkpoints.Enabled
	return on, c.Checkpoints.MaxFileBytes
}

// ProviderConfig is one endpoint.
type ProviderConfig struct {
	Type               string  `json:"type"` // openai or anthropic
	BaseURL            string  `json:"baseUrl,omitempty"`
	APIKeyEnv          string  `json:"apiKeyEnv,omitempty"`
	MaxRetries         int     `json:"maxRetries,omitempty"`
	TimeoutSeconds     float64 `json:"timeoutSeconds,omitempty"`
	IdleTimeoutSeconds float64 `json:"idleTimeoutSeconds,omitempty"`
}

// ModelConfig is what arbor knows about one model.
type ModelConfig struct {
	Provider      string `json:"provider,omitempty"`
	ID            string `json:"id,omitempty"` // the id sent to the provider, when it differs from the key
	ContextWindow int    `json:"contextWindow,omitempty"`
	Reserve       int    `json:"reserve,omitempty"`
	MaxTokens     int    `json:"maxTokens,omitempty"`
	Prices        Prices `json:"prices,omitzero"`
}

// LoadConfig reads a configuration file; a missing file is an empty configuration.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseConfig(data, path)
}

// ParseConfig reads a configuration; path names it in errors. Unknown fields
// are errors, so a misspelt setting is not silently ignored.
func ParseConfig(data []byte, path string) (*Config, error) {
	c := &Config{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("%s: %v; fix the file (see 'arbor --help' for its fields)", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value; the file holds one object", path)
	}
	return c, nil
}

// Settings are what the command line and environment add on top of a Config.
type Settings struct {
	Provider, BaseURL, Model, APIKeyEnv, Thinking string
	ContextWindow, Reserve                        int
	Getenv                                        func(string) string
	ConfigPath                                    string // named in error messages
}

// Resolved is a complete configuration: a provider to talk to and a model.
type Resolved struct {
	Provider Provider
	Model    Model
	Thinking string
}

// Thinking levels (pi's).
var ThinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh"}

// Resolve combines flags (s), the environment and the file, and builds the
// provider. A missing model or key is an error naming the setting to set.
func (c *Config) Resolve(s Settings) (*Resolved, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	file := s.ConfigPath
	modelName := first(s.Model, getenv(compaction.EnvModel), c.Model)
	if modelName == "" {
		return nil, fmt.Errorf("no model chosen: set --model, %s, or \"model\" in %s", compaction.EnvModel, file)
	}
	mc := c.Models[modelName]
	provName := first(s.Provider, mc.Provider, c.Provider)
	pc, named := c.Providers[provName]
	if !named {
		pc = ProviderConfig{Type: provName}
	}
	if pc.Type == "" {
		pc.Type = "openai"
	}
	if pc.Type != "openai" && pc.Type != "anthropic" {
		return nil, fmt.Errorf("unknown provider %q: use openai or anthropic, or a name from \"providers\" in %s", provName, file)
	}
	if provName == "" {
		provName = pc.Type
	}
	baseURL := first(s.BaseURL, getenv(compaction.EnvBaseURL), pc.BaseURL)
	keyEnv := first(s.APIKeyEnv, pc.APIKeyEnv, getenv(compaction.EnvAPIKeyEnv))
	var key string
	if keyEnv != "" {
		key = getenv(keyEnv)
		if key == "" {
			return nil, fmt.Errorf("no API key: the variable %s is empty; set it, or name another with --api-key-env", keyEnv)
		}
	} else {
		official := map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[pc.Type]
		key = first(getenv(compaction.DefaultKey), getenv(official))
		// A local server (a base URL of its own) may need no key; the vendors' own endpoints do.
		if key == "" && baseURL == "" {
			return nil, fmt.Errorf("no API key: set %s (or %s), or point --base-url / %s at a server that needs none", compaction.DefaultKey, official, compaction.EnvBaseURL)
		}
	}
	thinking := first(s.Thinking, c.Thinking, "off")
	if !contains(ThinkingLevels, thinking) {
		return nil, fmt.Errorf("unknown thinking level %q: use one of %s", thinking, strings.Join(ThinkingLevels, ", "))
	}
	opts := Options{Name: provName, BaseURL: baseURL, APIKey: key, MaxRetries: pc.MaxRetries,
		Timeout: seconds(pc.TimeoutSeconds), IdleTimeout: seconds(pc.IdleTimeoutSeconds)}
	m := Model{Provider: provName, ID: first(mc.ID, modelName), Window: mc.ContextWindow, Reserve: mc.Reserve, MaxTokens: mc.MaxTokens, Prices: mc.Prices}
	if s.ContextWindow > 0 {
		m.Window = s.ContextWindow
	}
	if s.Reserve > 0 {
		m.Reserve = s.Reserve
	}
	r := &Resolved{Model: m, Thinking: thinking}
	if pc.Type == "anthropic" {
		r.Provider = NewAnthropic(opts)
	} else {
		r.Provider = NewOpenAI(opts)
	}
	return r, nil
}

// CompactionSettings are the file's compaction settings over pi's defaults.
func (c *Config) CompactionSettings() compaction.Settings {
	s := compaction.DefaultSettings
	if c.Compaction == nil {
		return s
	}
	if c.Compaction.Enabled != nil {
		s.Enabled = *c.Compaction.Enabled
	}
	if c.Compaction.ReserveTokens > 0 {
		s.ReserveTokens = c.Compaction.ReserveTokens
	}
	if c.Compaction.KeepRecentTokens > 0 {
		s.KeepRecentTokens = c.Compaction.KeepRecentTokens
	}
	return s
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
