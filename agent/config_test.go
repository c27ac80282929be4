package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestConfigResolve(t *testing.T) {
	c, err := ParseConfig([]byte(`{"provider":"local","model":"small","thinking":"low",
		"providers":{"local":{"type":"openai","baseUrl":"http://127.0.0.1:1/v1"},"claude":{"type":"anthropic","apiKeyEnv":"CLAUDE_KEY"}},
		"models":{"small":{"id":"qwen3:8b","contextWindow":32768,"reserve":2048,"prices":{"input":1,"output":2}},"big":{"provider":"claude","contextWindow":200000}},
		"compaction":{"enabled":false,"keepRecentTokens":5000},"shareCommand":"gh gist create {file}"}`), "cfg.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.ShareCommand != "gh gist create {file}" {
		t.Errorf("shareCommand %q", c.ShareCommand)
	}
	env := map[string]string{"CLAUDE_KEY": "k"}
	getenv := func(k string) string { return env[k] }
	r, err := c.Resolve(Settings{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != (Model{Provider: "local", ID: "qwen3:8b", Window: 32768, Reserve: 2048, Prices: Prices{Input: 1, Output: 2}}) || r.Thinking != "low" || r.Provider.API() != "openai-completions" {
		t.Errorf("file only: %+v %s", r.Model, r.Thinking)
	}
	r, err = c.Resolve(Settings{Model: "big", Getenv: getenv, ContextWindow: 1000, Thinking: "off"})
	if err != nil || r.Provider.API() != "anthropic-messages" || r.Model.Window != 1000 || r.Model.Provider != "claude" || r.Thinking != "off" {
		t.Errorf("flags over the file: %+v %v", r, err)
	}
	env["ARBOR_MODEL"] = "from-env"
	if r, _ := c.Resolve(Settings{Getenv: getenv}); r.Model.ID != "from-env" {
		t.Errorf("ARBOR_MODEL over the file: %s", r.Model.ID)
	}
	if _, err := c.Resolve(Settings{Thinking: "max", Getenv: getenv}); err == nil || !strings.Contains(err.Error(), `unknown thinking level "max"`) {
		t.Errorf("thinking: %v", err)
	}
	s := c.CompactionSettings()
	if s.Enabled || s.KeepRecentTokens != 5000 || s.ReserveTokens != 16384 {
		t.Errorf("compaction settings %+v", s)
	}
	if _, err := ParseConfig([]byte(`{"modle":"x"}`), "cfg.json"); err == nil || !strings.Contains(err.Error(), `cfg.json: json: unknown field "modle"`) {
		t.Errorf("misspelt field: %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"model":"m","providers":{"p":{"type":"openai"}}}`))
	f.Add([]byte(`{"redact":{"patterns":["("]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, "f.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		_, _ = c.Resolve(Settings{Getenv: func(string) string { return "" }})
		c.CompactionSettings()
	})
}

// TestDefaultEndpoints checks that without a base URL each provider keeps its
// SDK's own endpoint: the request goes to the vendor's host, not to "".
func TestDefaultEndpoints(t *testing.T) {
	var hosts []string
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		hosts = append(hosts, r.URL.Host)
		return nil, errors.New("offline")
	})}
	for _, p := range []Provider{NewOpenAI(Options{APIKey: "k", HTTPClient: client, MaxRetries: -1}), NewAnthropic(Options{APIKey: "k", HTTPClient: client, MaxRetries: -1})} {
		_, err := p.Stream(context.Background(), Request{Model: "m", Messages: []json.RawMessage{UserMessage("hi")}}, func(Delta) {})
		if err == nil || !strings.Contains(err.Error(), "offline") {
			t.Errorf("%s: %v", p.API(), err)
		}
	}
	if len(hosts) != 2 || hosts[0] != "api.openai.com" || hosts[1] != "api.anthropic.com" {
		t.Errorf("hosts %v", hosts)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
