package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/arborlog/arbor/internal/sessiongen"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/window"
)

// recorder is a provider that refuses every request (status), keeping each
// body and whether it came with its length.
type recorder struct {
	*httptest.Server
	status int
	mu     sync.Mutex
	bodies [][]byte
	sized  []bool
}

func newRecorder(t *testing.T, status int) *recorder {
	r := &recorder{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.sized = append(r.sized, req.ContentLength == int64(len(b)))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(r.status)
		io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"recorded"}}`)
	}))
	t.Cleanup(r.Close)
	return r
}

// take returns the bodies recorded since the last take.
func (r *recorder) take() ([][]byte, []bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, s := r.bodies, r.sized
	r.bodies, r.sized = nil, nil
	return b, s
}

// sdkBody is the body the SDK sends for the request's full parameters, every
// message converted up front: the request as it was built before bodies were
// written a message at a time.
func sdkBody(t *testing.T, kind string, rec *recorder, r Request) []byte {
	t.Helper()
	o := Options{Name: kind, BaseURL: rec.URL, APIKey: "k", MaxRetries: -1}
	ctx := context.Background()
	if kind == "openai" {
		p := NewOpenAI(o)
		full := p.params(r)
		full.Messages = slices.Collect(openaiMessages(r))
		p.client.Chat.Completions.NewStreaming(ctx, full, ooption.WithMaxRetries(0)).Close()
	} else {
		p := NewAnthropic(o)
		full := p.params(r)
		full.Messages = slices.Collect(anthropicMessages(r, false))
		p.client.Messages.NewStreaming(ctx, full, aoption.WithMaxRetries(0)).Close()
	}
	bodies, _ := rec.take()
	if len(bodies) != 1 {
		t.Fatalf("%s: the SDK sent %d requests, want 1", kind, len(bodies))
	}
	return bodies[0]
}

// streamed is what Stream sends for r, attempt by attempt.
func streamed(t *testing.T, kind string, rec *recorder, r Request, retries int) ([][]byte, []bool) {
	t.Helper()
	o := Options{Name: kind, BaseURL: rec.URL, APIKey: "k", MaxRetries: retries}
	if retries == 0 {
		o.MaxRetries = -1
	}
	p := Provider(NewOpenAI(o))
	if kind == "anthropic" {
		p = NewAnthropic(o)
	}
	if _, err := p.Stream(context.Background(), r, func(Delta) {}); err == nil {
		t.Fatalf("%s: the refused request did not fail", kind)
	}
	return rec.take()
}

// sessionFiles are the repository's sessions (pi's and arbor's, damaged ones
// included) and generated ones of each shape.
func sessionFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{}
	for _, root := range []string{"../testdata", "../examples"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return err
			}
			data, err := os.ReadFile(path)
			files[path] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var chain, plain bytes.Buffer
	if err := sessiongen.Chain(&chain, 400, 24); err != nil {
		t.Fatal(err)
	}
	if err := sessiongen.Plain(&plain, 200); err != nil {
		t.Fatal(err)
	}
	files["chain"], files["plain"] = chain.Bytes(), plain.Bytes()
	return files
}

// requestsFor are the requests the agent would send for a session: its
// history as a list (window.BuildForModel), with and without a system
// prompt, pi's tools and each way of asking for thinking; and as the agent
// sends it ("agent": made from the log as it is sent, when it can be).
func requestsFor(t *testing.T, data []byte) map[string]Request {
	l := session.Load(data)
	c, stamps := l.Cursor("").ContextWithResolutions()
	_, msgs, err := window.BuildForModel(c, stamps, window.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agent := Request{Model: "m", System: "s", checked: true}
	if err := (&Agent{Log: l}).history(context.Background(), &agent); err != nil {
		t.Fatal(err)
	}
	if sent := slices.Collect(agent.Raw()); !slices.EqualFunc(sent, msgs, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		t.Fatalf("the agent's request holds %d messages, not the %d built", len(sent), len(msgs))
	}
	tools, err := Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	var specs []ToolSpec
	for _, tl := range tools {
		specs = append(specs, ToolSpec{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
	}
	return map[string]Request{
		"bare":  {Model: "m", Messages: msgs},
		"tools": {Model: "m", System: "Be brief. <b>&amp;</b>", Messages: msgs, Tools: specs, Thinking: "high", MaxTokens: 1000},
		"xhigh": {Model: "m", System: "s", Messages: msgs, Thinking: "xhigh"},
		"off":   {Model: "m", Messages: msgs, Thinking: "off", MaxTokens: 20000},
		"agent": agent,
	}
}

// listed is r with its messages as a list, checked again when decoded.
func listed(r Request) Request {
	r.Messages, r.each, r.checked = slices.Collect(r.Raw()), nil, false
	return r
}

// The body a request sends, written a message at a time, is byte for byte
// the one the SDK builds from the full parameters, for both providers and
// every session in the repository, with its length as before.
func TestStreamedBodyIsTheSDKs(t *testing.T) {
	files := sessionFiles(t)
	for _, kind := range []string{"openai", "anthropic"} {
		rec := newRecorder(t, http.StatusBadRequest)
		for name, data := range files {
			for variant, r := range requestsFor(t, data) {
				want := sdkBody(t, kind, rec, listed(r))
				got, sized := streamed(t, kind, rec, r, 0)
				if len(got) != 1 {
					t.Fatalf("%s %s %s: %d requests, want 1", kind, name, variant, len(got))
				}
				if diff := cmp.Diff(string(want), string(got[0])); diff != "" {
					t.Errorf("%s %s %s: body (-SDK +streamed):\n%s", kind, name, variant, diff)
				}
				if !sized[0] {
					t.Errorf("%s %s %s: a body of %d bytes was sent without its length", kind, name, variant, len(got[0]))
				}
			}
		}
	}
}

// A request with no message to send (none, or only failed replies) sends the
// SDK's own body.
func TestEmptyRequestBodyIsTheSDKs(t *testing.T) {
	failed := session.Assistant{Content: []session.Block{session.TextBlock("x")}, StopReason: session.StopError}
	for _, kind := range []string{"openai", "anthropic"} {
		rec := newRecorder(t, http.StatusBadRequest)
		for _, r := range []Request{{Model: "m"}, {Model: "m", Messages: []json.RawMessage{failed.Message().Raw()}}} {
			want := sdkBody(t, kind, rec, r)
			got, _ := streamed(t, kind, rec, r, 0)
			if diff := cmp.Diff(string(want), string(got[0])); diff != "" {
				t.Errorf("%s: body (-SDK +streamed):\n%s", kind, diff)
			}
		}
	}
}

// A body longer than maxBuffered is streamed, and every retry sends it whole again.
func TestLongBodyIsStreamedAndRetriedWhole(t *testing.T) {
	defer func(n int) { maxBuffered = n }(maxBuffered)
	maxBuffered = 64 << 10
	var chain bytes.Buffer
	if err := sessiongen.Chain(&chain, 3000, 24); err != nil {
		t.Fatal(err)
	}
	r := requestsFor(t, chain.Bytes())["tools"]
	for _, kind := range []string{"openai", "anthropic"} {
		rec := newRecorder(t, http.StatusServiceUnavailable)
		want := sdkBody(t, kind, rec, r)
		if len(want) <= maxBuffered {
			t.Fatalf("%s: the body is %d bytes, not longer than %d", kind, len(want), maxBuffered)
		}
		got, sized := streamed(t, kind, rec, r, 2)
		if len(got) != 3 {
			t.Fatalf("%s: %d attempts, want 3", kind, len(got))
		}
		for i, b := range got {
			if !bytes.Equal(want, b) {
				t.Errorf("%s attempt %d: %d bytes differ from the SDK's %d", kind, i+1, len(b), len(want))
			}
			if sized[i] {
				t.Errorf("%s attempt %d: sent with a length, not streamed", kind, i+1)
			}
		}
	}
}

// The skeleton's message list is found at the top level only.
func TestEmptyListEnd(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int // -1: an error
	}{
		{`{"messages":[],"model":"m"}`, 13},
		{`{"tools":[{"messages":[]}],"messages":[]}`, 39},
		{`{"system":"\"messages\":[]","messages":[]}`, 40},
		{`{"messages":[{}]}`, -1},
		{`{"model":"m"}`, -1},
		{`[]`, -1},
	} {
		got, err := emptyListEnd([]byte(c.in), "messages")
		if c.want < 0 && err == nil || c.want >= 0 && (err != nil || got != c.want) {
			t.Errorf("emptyListEnd(%s) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}
