package rpc

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/internal/inorder"
	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"
)

// piCommand is one command of pi's RPC mode (rpc-types.ts RpcCommand).
type piCommand struct {
	ID                json.RawMessage `json:"id,omitempty"`
	Type              string          `json:"type"`
	Message           string          `json:"message"`
	StreamingBehavior string          `json:"streamingBehavior"`
	Provider          string          `json:"provider"`
	ModelID           string          `json:"modelId"`
	SessionPath       string          `json:"sessionPath"`
	EntryID           string          `json:"entryId"`
	Since             *string         `json:"since"`
	Name              string          `json:"name"`
	OutputPath        string          `json:"outputPath"`
	Level             string          `json:"level"`
	Mode              string          `json:"mode"`
	Enabled           *bool           `json:"enabled"`
	Command           string          `json:"command"`
	Exclude           bool            `json:"excludeFromContext"`
	Instructions      string          `json:"customInstructions"`
}

// piResponse is pi's RpcResponse.
type piResponse struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    string          `json:"type"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// piModel is the part of pi's Model object arbor knows.
type piModel struct {
	ID            string       `json:"id"`
	Name          string       `json:"name"`
	Provider      string       `json:"provider"`
	ContextWindow int          `json:"contextWindow"`
	MaxTokens     int          `json:"maxTokens"`
	Cost          agent.Prices `json:"cost"`
}

func modelOf(m agent.Model) *piModel {
	if m.ID == "" {
		return nil
	}
	return &piModel{ID: m.ID, Name: m.ID, Provider: m.Provider, ContextWindow: m.Window, MaxTokens: m.MaxTokens, Cost: m.Prices}
}

type piServer struct {
	e    *Engine
	mu   sync.Mutex
	out  *bufio.Writer
	runs sync.WaitGroup
	// agentRuns counts the prompts and compactions running: abort answers
	// once they have ended, as pi's awaits session.abort().
	agentRuns sync.WaitGroup
	lastEnd   []json.RawMessage // the messages of the last agent_end; mu guards it
}

func (p *piServer) write(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Encoded straight to the output (what Marshal gives, and a newline):
	// get_messages of a million messages is not copied once more. An
	// encoding that fails writes nothing.
	// Raw entries and messages pass on what a session file holds, which may be
	// bytes that are not UTF-8: each run of them becomes U+FFFD, as validJSON.
	out := &validUTF8{w: p.out}
	r, isResponse := v.(piResponse)
	if !isResponse || !writeMessages(out, r) && !writeTree(out, r) && !writeEntries(out, r) {
		enc := json.NewEncoder(out)
		if err := enc.Encode(v); err != nil {
			// Still the answer to its command: the client waits for its id.
			enc.Encode(piResponse{ID: r.ID, Type: "response", Command: cmp.Or(r.Command, "internal"), Error: err.Error()})
		}
	}
	p.out.Flush()
}

// piMessages is get_messages' data; write streams it.
type piMessages struct {
	Messages []json.RawMessage `json:"messages"`
}

// writeMessages writes a response whose data is piMessages a message at a
// time, each as encoding/json writes a RawMessage (compacted, HTML-escaped),
// so the answer of a million messages is not built whole first. It returns
// false, having written nothing, for any other response.
func writeMessages(w io.Writer, r piResponse) bool {
	d, ok := r.Data.(piMessages)
	if !ok || d.Messages == nil {
		return false
	}
	r.Data = json.RawMessage(`{"messages":[]}`)
	head, err := json.Marshal(r)
	if err != nil || !bytes.HasSuffix(head, []byte(`[]}}`)) {
		return false
	}
	bw := bufio.NewWriter(w)
	bw.Write(head[:len(head)-4])
	writeRawArray(bw, d.Messages)
	bw.WriteString("}}\n")
	bw.Flush()
	return true
}

// piTree is get_tree's data; write streams it.
type piTree struct {
	Tree   []*session.TreeNode
	LeafID *string
}

// writeTree writes a response whose data is piTree with its tree written by
// session.WriteTreeJSON: as deep as the session's longest chain, deeper than
// encoding/json encodes (10,000 levels). It returns false, having written
// nothing, for any other response.
func writeTree(w io.Writer, r piResponse) bool {
	d, ok := r.Data.(piTree)
	if !ok {
		return false
	}
	return writeList(w, r, "tree", d.LeafID, func(bw *bufio.Writer) { _ = session.WriteTreeJSON(bw, d.Tree, true) })
}

// piEntries is get_entries' data; write streams it.
type piEntries struct {
	Entries []json.RawMessage
	LeafID  *string
}

// writeEntries writes a response whose data is piEntries an entry at a time
// (as writeRawArray does), so the answer of a million entries is not built
// whole first. It returns false, having written nothing, for any other
// response.
func writeEntries(w io.Writer, r piResponse) bool {
	d, ok := r.Data.(piEntries)
	if !ok {
		return false
	}
	return writeList(w, r, "entries", d.LeafID, func(bw *bufio.Writer) { writeRawArray(bw, d.Entries) })
}

// writeList writes r with data {"<field>":<list>,"leafId":leaf}, the list
// written by list straight to w. It returns false, having written nothing,
// when r does not marshal.
func writeList(w io.Writer, r piResponse, field string, leaf *string, list func(*bufio.Writer)) bool {
	l, err := json.Marshal(leaf)
	if err != nil {
		return false
	}
	r.Data = json.RawMessage(`{"` + field + `":[],"leafId":` + string(l) + `}`)
	head, err := json.Marshal(r)
	mark := `"data":{"` + field + `":[]`
	at := bytes.LastIndex(head, []byte(mark))
	if err != nil || at < 0 {
		return false
	}
	at += len(mark) - len("[]")
	bw := bufio.NewWriter(w)
	bw.Write(head[:at])
	list(bw)
	bw.Write(head[at+len("[]"):])
	bw.WriteByte('\n')
	bw.Flush()
	return true
}

// writeRawArray writes ms as a JSON array, each message as encoding/json
// marshals a RawMessage (compacted, HTML-escaped). Runs of rawRun messages
// are checked (and the rare message that needs it rewritten) on every core,
// and written in order.
func writeRawArray(bw *bufio.Writer, ms []json.RawMessage) {
	bw.WriteByte('[')
	written := 0
	inorder.Do(len(ms), rawRun, func(lo, hi int) *[][]byte {
		out, _ := rawRuns.Get().(*[][]byte)
		if out == nil {
			out = new([][]byte)
		}
		for _, m := range ms[lo:hi] {
			*out = append(*out, marshaledRaw(m))
		}
		return out
	}, func(out *[][]byte) error {
		for _, m := range *out {
			if written > 0 {
				bw.WriteByte(',')
			}
			bw.Write(m)
			written++
		}
		clear(*out)
		*out = (*out)[:0]
		rawRuns.Put(out)
		return nil
	})
	bw.WriteByte(']')
}

// rawRun is how many messages writeRawArray checks at a time on one core. (A
// variable for tests.)
var rawRun = 1024

// rawRuns keeps the lists of a run's messages for the next runs.
var rawRuns sync.Pool

// marshaledRaw is what encoding/json writes of the RawMessage m: m itself
// for most messages of a session (no copy), else m compacted and escaped,
// or null when m is not JSON (never so for a message read from a session).
func marshaledRaw(m []byte) []byte {
	if marshalsAsIs(m) {
		return m
	}
	var compact, escaped bytes.Buffer
	if json.Compact(&compact, m) != nil {
		return []byte("null")
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	return escaped.Bytes()
}

// marshalsAsIs reports whether encoding/json marshals the RawMessage m as m
// itself: m is JSON (as the loader's validator, which is encoding/json's,
// finds) with no white space between its tokens and nothing HTML escaping
// changes (<, >, &, U+2028, U+2029). It reads m faster than Compact does,
// skipping strings as the loader does.
func marshalsAsIs(m []byte) bool {
	if bytes.ContainsAny(m, "<>&") || bytes.Contains(m, []byte("\u2028")) || bytes.Contains(m, []byte("\u2029")) {
		return false
	}
	for i := 0; i < len(m); {
		switch m[i] {
		case '"':
			j, ok := jsonscan.String(m, i)
			if !ok {
				return false
			}
			i = j
		case ' ', '\t', '\n', '\r':
			return false
		default:
			i++
		}
	}
	return session.IsCompleteJSON(m)
}

func ok(id json.RawMessage, command string, data any) piResponse {
	return piResponse{ID: id, Type: "response", Command: command, Success: true, Data: data}
}

func fail(id json.RawMessage, command string, err error) piResponse {
	return piResponse{ID: id, Type: "response", Command: command, Error: err.Error()}
}

// Pi speaks pi's RPC mode on r and w: a command a line in, responses and
// events a line out, until r ends (a running prompt is then aborted).
func Pi(cfg Config, r io.Reader, w io.Writer) error {
	p := &piServer{out: bufio.NewWriter(w)}
	e, err := New(cfg, func(ev agent.Event) {
		if ev.Type == "agent_end" {
			p.mu.Lock()
			p.lastEnd = ev.Messages
			p.mu.Unlock()
		}
		p.write(ev)
	})
	if err != nil {
		return err
	}
	p.e = e
	br := bufio.NewReader(r)
	limit := cmp.Or(cfg.MaxRequestBytes, DefaultMaxRequestBytes)
	for {
		b, rerr := readLine(br, limit)
		if tl, ok := errors.AsType[*tooLong](rerr); ok {
			p.write(fail(tl.id, cmp.Or(tl.typ, "parse"), piErrf("%s", tl.Error())))
			continue
		}
		if line := string(b); strings.TrimSpace(line) != "" {
			p.handle(line)
		}
		if rerr != nil {
			e.Abort()
			e.AbortBash()
			p.runs.Wait()
			cerr := e.Close()
			if errors.Is(rerr, io.EOF) {
				return cerr
			}
			return rerr
		}
	}
}

func (p *piServer) handle(line string) {
	var head struct {
		ID   json.RawMessage `json:"id"`
		Type string          `json:"type"`
	}
	if err := json.Unmarshal([]byte(line), &head); err != nil {
		p.write(fail(nil, "parse", piErrf("Failed to parse command: %v", err)))
		return
	}
	var c piCommand
	if err := json.Unmarshal([]byte(line), &c); err != nil {
		// Valid JSON with a field of the wrong type: answered as that command.
		p.write(fail(head.ID, head.Type, piErrf("Invalid %s command: %v", head.Type, err)))
		return
	}
	switch c.Type {
	case "prompt":
		p.prompt(c)
		return
	case "bash":
		p.bash(c)
		return
	case "compact":
		// Like a prompt, compaction runs while further commands are read, so
		// abort and get_state reach it; the next command is read once it runs.
		running := make(chan struct{})
		p.runs.Add(1)
		p.agentRuns.Add(1)
		go func() {
			defer p.runs.Done()
			defer p.agentRuns.Done()
			var once sync.Once
			data, err := p.compact(c, func() { once.Do(func() { close(running) }) })
			once.Do(func() { close(running) })
			if err != nil {
				p.write(fail(c.ID, c.Type, err))
				return
			}
			p.write(ok(c.ID, c.Type, data))
		}()
		<-running
		return
	}
	data, err := p.run(c)
	if err != nil {
		p.write(fail(c.ID, c.Type, err))
		return
	}
	p.write(ok(c.ID, c.Type, data))
}

// endSaid says whether the last agent_end's last message reports the run's
// failure (a reply that ended with stopReason "error", as pi reports a
// provider's error).
func (p *piServer) endSaid() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lastEnd) == 0 {
		return false
	}
	var m struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(p.lastEnd[len(p.lastEnd)-1], &m)
	return m.StopReason == session.StopError
}

// prompt answers once the prompt is accepted; its events follow.
func (p *piServer) prompt(c piCommand) {
	if p.e.State().IsCompacting {
		p.write(fail(c.ID, "prompt", piErrf("Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry.")))
		return
	}
	if p.e.Running() {
		if c.StreamingBehavior == "" {
			p.write(fail(c.ID, "prompt", piErrf("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")))
			return
		}
		if err := p.e.Steer(c.Message, c.StreamingBehavior != "steer"); err != nil {
			p.write(fail(c.ID, "prompt", err))
			return
		}
		p.write(ok(c.ID, "prompt", map[string]string{"disposition": "queued"}))
		return
	}
	accepted := make(chan struct{})
	p.runs.Add(1)
	p.agentRuns.Add(1)
	go func() {
		defer p.runs.Done()
		defer p.agentRuns.Done()
		_, err := p.e.Prompt(context.Background(), c.Message, func() {
			p.write(ok(c.ID, "prompt", map[string]string{"disposition": "started"}))
			close(accepted)
		})
		select {
		case <-accepted:
			if err != nil && !errors.Is(err, agent.ErrAborted) && !p.endSaid() {
				// A failure no message of the run shows (the session file
				// replaced, a write that failed): the reply was not kept,
				// and the client is told why, as arbor -p --mode json does.
				p.write(agent.ErrorEvent(err, false))
			}
			// pi 1.6.0's agent_settled: the session is idle again (its
			// RpcClient's waitForIdle and promptAndWait wait for it).
			p.write(agent.SettledEvent(errors.Is(err, agent.ErrAborted)))
		default:
			p.write(fail(c.ID, "prompt", err))
			close(accepted)
		}
	}()
	// The next command is read once this one is answered, so a command sent
	// after the prompt sees it running.
	<-accepted
}

func (p *piServer) run(c piCommand) (any, error) {
	e := p.e
	switch c.Type {
	case "steer", "follow_up":
		if err := e.Steer(c.Message, c.Type == "follow_up"); err != nil {
			return nil, err
		}
		return map[string]string{"disposition": "queued"}, nil
	case "abort":
		// As in pi, the answer comes once the session is idle: the run's
		// agent_end and agent_settled are written before it.
		e.Abort()
		p.agentRuns.Wait()
		return nil, nil
	case "clear_queue":
		steering, followUp := e.ClearQueue()
		return map[string][]string{"steering": steering, "followUp": followUp}, nil
	case "cycle_model":
		m, err := e.CycleModel()
		if err != nil || m == nil {
			return nil, err
		}
		return map[string]any{"model": modelOf(*m), "thinkingLevel": e.Thinking(), "isScoped": false}, nil
	case "set_thinking_level":
		_, err := e.SetThinking(c.Level)
		return nil, err
	case "cycle_thinking_level":
		level, err := e.CycleThinking()
		if err != nil {
			return nil, err
		}
		return map[string]string{"level": level}, nil
	case "set_steering_mode", "set_follow_up_mode":
		if c.Mode != agent.All && c.Mode != agent.OneAtATime {
			return nil, piErrf("Invalid mode: %q (want \"all\" or \"one-at-a-time\")", c.Mode)
		}
		if c.Type == "set_steering_mode" {
			return nil, e.SetQueueModes(c.Mode, "")
		}
		return nil, e.SetQueueModes("", c.Mode)
	case "set_auto_compaction", "set_auto_retry":
		if c.Enabled == nil {
			return nil, piErrf("Missing field: enabled (true or false)")
		}
		if c.Type == "set_auto_compaction" {
			return nil, e.SetAutoCompaction(*c.Enabled)
		}
		return nil, e.SetAutoRetry(*c.Enabled)
	case "abort_retry":
		// Like pi's abortRetry, nothing to stop is not an error.
		e.AbortRetry()
		return nil, nil
	case "abort_bash":
		e.AbortBash()
		return nil, nil
	case "get_commands":
		// arbor has no extensions, prompt templates or skills.
		return map[string][]any{"commands": {}}, nil
	case "new_session":
		if _, err := e.NewSession(); err != nil {
			return nil, err
		}
		return map[string]bool{"cancelled": false}, nil
	case "get_state":
		return p.state(), nil
	case "get_messages":
		m, err := e.Messages()
		if m == nil {
			m = []json.RawMessage{}
		}
		return piMessages{Messages: m}, err
	case "set_model":
		if _, err := e.SetModel(c.ModelID); err != nil {
			return nil, piErrf("Model not found: %s/%s", c.Provider, c.ModelID)
		}
		m := e.Model()
		if c.Provider != "" && c.Provider != m.Provider {
			return nil, piErrf("Model not found: %s/%s", c.Provider, c.ModelID)
		}
		return modelOf(m), nil
	case "get_available_models":
		models := []*piModel{}
		if m := modelOf(e.Model()); m != nil {
			models = append(models, m)
		}
		return map[string]any{"models": models}, nil
	case "get_available_thinking_levels":
		return map[string]any{"levels": agent.ThinkingLevels}, nil
	case "get_session_stats":
		return p.stats()
	case "export_html":
		path, err := e.ExportHTML(c.OutputPath)
		if err != nil {
			return nil, err
		}
		return map[string]string{"path": path}, nil
	case "switch_session":
		if err := e.Resume(c.SessionPath, false); err != nil {
			return nil, err
		}
		return map[string]bool{"cancelled": false}, nil
	case "fork":
		text, err := e.ForkSession(c.EntryID, false)
		if err != nil {
			return nil, err
		}
		return map[string]any{"text": text, "cancelled": false}, nil
	case "clone":
		var leaf string
		if err := e.view(func(l *session.Log) error {
			if lf := l.Leaf(); lf != nil {
				leaf = lf.ID
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if leaf == "" {
			return nil, piErrf("Cannot clone session: no current entry selected")
		}
		if _, err := e.ForkSession(leaf, true); err != nil {
			return nil, err
		}
		return map[string]bool{"cancelled": false}, nil
	case "get_fork_messages":
		m, err := e.ForkMessages()
		return map[string]any{"messages": m}, err
	case "get_entries":
		since := ""
		if c.Since != nil {
			if since = *c.Since; since == "" {
				return nil, piErrf("Entry not found: ")
			}
		}
		es, leaf, err := e.Entries(since)
		if err != nil {
			if pe, ok := asError(err); ok && pe.What == "since" {
				return nil, piErrf("Entry not found: %s", since)
			}
			return nil, err
		}
		return piEntries{Entries: es, LeafID: nullable(leaf)}, nil
	case "get_tree":
		t, leaf, err := e.Tree()
		if err != nil {
			return nil, err
		}
		return piTree{Tree: t, LeafID: nullable(leaf)}, nil
	case "get_last_assistant_text":
		return p.lastText()
	case "set_session_name":
		if strings.TrimSpace(c.Name) == "" {
			return nil, piErrf("Session name cannot be empty")
		}
		return nil, e.SetSessionName(strings.TrimSpace(c.Name))
	}
	return nil, piErrf("Unknown command: %s", c.Type)
}

// compact is pi's CompactionResult for a manual compaction.
func (p *piServer) compact(c piCommand, started func()) (any, error) {
	en, err := p.e.Compact(context.Background(), c.Instructions, started)
	if err != nil {
		return nil, err
	}
	var r struct {
		Summary          string          `json:"summary"`
		FirstKeptEntryID string          `json:"firstKeptEntryId"`
		TokensBefore     float64         `json:"tokensBefore"`
		Details          json.RawMessage `json:"details,omitempty"`
	}
	if err := en.Decode(&r); err != nil {
		return nil, err
	}
	return r, nil
}

// bash runs a person's command without holding up the next command (so
// abort_bash can stop it), streaming its output as bash_execution_update
// events; the response comes when it ends.
func (p *piServer) bash(c piCommand) {
	p.runs.Add(1)
	go func() {
		defer p.runs.Done()
		r, err := p.e.Bash(c.Command, c.Exclude, func(delta string) {
			ev := map[string]any{"type": "bash_execution_update", "delta": delta}
			if len(c.ID) > 0 {
				ev["id"] = c.ID
			}
			p.write(ev)
		})
		if err != nil {
			p.write(fail(c.ID, "bash", err))
			return
		}
		p.write(ok(c.ID, "bash", r))
	}()
}

// piErr is an error with pi's own message, which starts with a capital.
type piErr string

func (e piErr) Error() string { return string(e) }

func piErrf(format string, args ...any) error { return piErr(fmt.Sprintf(format, args...)) }

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// state is pi's RpcSessionState.
func (p *piServer) state() map[string]any {
	st := p.e.State()
	steering, followUp, steerMode, followMode := p.e.Queue()
	out := map[string]any{
		"thinkingLevel": p.e.Thinking(), "isStreaming": st.IsStreaming, "isCompacting": st.IsCompacting,
		"steeringMode": steerMode, "followUpMode": followMode, "sessionFile": st.SessionFile, "sessionId": st.SessionID,
		"autoCompactionEnabled": p.e.AutoCompaction(), "messageCount": st.MessageCount, "pendingMessageCount": len(steering) + len(followUp),
	}
	if m := modelOf(p.e.Model()); m != nil {
		out["model"] = m
	}
	if st.SessionName != "" {
		out["sessionName"] = st.SessionName
	}
	return out
}

// stats is pi's SessionStats, over the active context.
func (p *piServer) stats() (any, error) {
	type tokens struct {
		Input      float64 `json:"input"`
		Output     float64 `json:"output"`
		CacheRead  float64 `json:"cacheRead"`
		CacheWrite float64 `json:"cacheWrite"`
		Total      float64 `json:"total"`
	}
	var out struct {
		SessionFile       string  `json:"sessionFile"`
		SessionID         string  `json:"sessionId"`
		UserMessages      int     `json:"userMessages"`
		AssistantMessages int     `json:"assistantMessages"`
		ToolCalls         int     `json:"toolCalls"`
		ToolResults       int     `json:"toolResults"`
		TotalMessages     int     `json:"totalMessages"`
		Tokens            tokens  `json:"tokens"`
		Cost              float64 `json:"cost"`
	}
	err := p.e.view(func(l *session.Log) error {
		out.SessionFile, out.SessionID = p.e.ref(), l.Header().ID
		for _, m := range l.Context().Messages {
			out.TotalMessages++
			switch m.Role {
			case session.RoleUser:
				out.UserMessages++
			case session.RoleToolResult:
				out.ToolResults++
			case session.RoleAssistant:
				out.AssistantMessages++
				var a session.Assistant
				if json.Unmarshal(m.Raw, &a) != nil {
					continue
				}
				out.ToolCalls += len(a.ToolCalls())
				u := a.Usage
				out.Tokens.Input += u.Input
				out.Tokens.Output += u.Output
				out.Tokens.CacheRead += u.CacheRead
				out.Tokens.CacheWrite += u.CacheWrite
				out.Tokens.Total += u.Input + u.Output + u.CacheRead + u.CacheWrite
				out.Cost += u.Cost.Total
			}
		}
		return nil
	})
	return out, err
}

// lastText is the text of the last assistant message that is not an empty
// abort; pi omits the key when there is none.
func (p *piServer) lastText() (any, error) {
	out := map[string]string{}
	err := p.e.view(func(l *session.Log) error {
		ms := l.Context().Messages
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].Role != session.RoleAssistant {
				continue
			}
			var a session.Assistant
			if json.Unmarshal(ms[i].Raw, &a) != nil {
				continue
			}
			if a.StopReason == session.StopAborted && len(a.Content) == 0 {
				continue
			}
			if t := a.Text(); t != "" {
				out["text"] = t
			}
			return nil
		}
		return nil
	})
	return out, err
}
