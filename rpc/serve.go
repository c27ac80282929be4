package rpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/window"
)

// The parameters and results of arbor serve's methods (rho's shapes where rho
// has the method). The OpenRPC document in docs/ is generated from them.
type (
	PromptParams struct {
		Message  string `json:"message"`
		Steer    bool   `json:"steer,omitempty"`    // queue it: sent after the running reply's tool calls, before the next request
		FollowUp bool   `json:"followUp,omitempty"` // queue it: sent when the running prompt would stop (arbor's, as pi's follow_up)
	}
	PromptResult struct {
		Reply  string `json:"reply"`
		Queued bool   `json:"queued,omitempty"` // a steering message was queued for the running prompt
	}
	Empty          struct{}
	MessagesResult struct {
		Messages []json.RawMessage `json:"messages"`
	}
	ModelParams struct {
		Model string `json:"model"`
	}
	ModelResult struct {
		Model              string `json:"model"`
		Provider           string `json:"provider"`
		ContextWindow      int    `json:"contextWindow"`
		EstimatedUsed      int    `json:"estimatedUsed"`      // the context's tokens (pi's estimate: the last reply's usage and the messages after it)
		UtilizationPercent int    `json:"utilizationPercent"` // estimatedUsed of contextWindow (0 when the window is unknown)
	}
	// StatsResult is rho's ContextStats in camelCase with its apiUsage, the
	// figures 'arbor stats --json' gives for the model's window and reserve
	// (window.Measure), and what the system prompt and tool schemas take.
	StatsResult struct {
		ContextWindow       int                     `json:"contextWindow"` // window.DefaultWindow when the model's is unknown
		CompletionReserve   int                     `json:"completionReserve"`
		PromptBudget        int                     `json:"promptBudget"`
		EstimatedUsed       int                     `json:"estimatedUsed"`
		EstimatedRemaining  int                     `json:"estimatedRemaining"`
		UtilizationPercent  int                     `json:"utilizationPercent"`
		MessageCount        int                     `json:"messageCount"`
		EntryCount          int                     `json:"entryCount"`
		PathEntryCount      int                     `json:"pathEntryCount"`
		RoleTokens          window.RoleTokens       `json:"roleTokens"`
		ResolutionTokens    window.ResolutionTokens `json:"resolutionTokens"`
		PhaseTokens         window.PhaseTokens      `json:"phaseTokens"`
		CompactionTokens    int                     `json:"compactionTokens"`
		CompactedEntryCount int                     `json:"compactedEntryCount"`
		BeyondMessages      int                     `json:"beyondMessages"`
		SystemPromptTokens  int                     `json:"systemPromptTokens"`
		ToolSchemaTokens    int                     `json:"toolSchemaTokens"`
		APIUsage            UsageTotal              `json:"apiUsage"`
	}
	UsageTotal struct {
		TotalInputTokens  float64 `json:"totalInputTokens"`
		TotalOutputTokens float64 `json:"totalOutputTokens"`
		TotalCachedTokens float64 `json:"totalCachedTokens"`
		TotalTokens       float64 `json:"totalTokens"`
		TotalCost         float64 `json:"totalCost"`
		RequestCount      int     `json:"requestCount"`
	}
	SessionSummary struct {
		Path       string `json:"path"`
		MtimeSecs  int64  `json:"mtimeSecs"`
		SizeKb     int64  `json:"sizeKb"`
		EntryCount int    `json:"entryCount"`
		ID         string `json:"id"`
		Name       string `json:"name,omitempty"`
	}
	SessionsResult struct {
		Sessions []SessionSummary `json:"sessions"`
	}
	ResumeParams struct {
		Path     string `json:"path"`
		ReadOnly bool   `json:"readOnly,omitempty"` // follow: read without the writer lock
	}
	ResumeResult struct {
		Path       string `json:"path"`
		Model      string `json:"model"`
		Cwd        string `json:"cwd"`
		EntryCount int    `json:"entryCount"`
	}
	NewSessionResult struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
	}
	ForkParams struct {
		Name string `json:"name,omitempty"`
	}
	CursorResult struct {
		CursorID string `json:"cursorId"`
	}
	Branch struct {
		CursorID string `json:"cursorId"`
		Leaf     string `json:"leaf"`
		Name     string `json:"name,omitempty"`
		Active   bool   `json:"active"`
	}
	BranchesResult struct {
		Branches []Branch `json:"branches"`
	}
	CursorParams struct {
		CursorID string `json:"cursorId"`
	}
	NameBranchParams struct {
		CursorID string `json:"cursorId"`
		Name     string `json:"name"`
	}
	ModelsResult struct {
		Models []ModelEntry `json:"models"`
	}
	ModelEntry struct {
		ID       string `json:"id"`
		Provider string `json:"provider"`
	}
	ProvidersResult struct {
		Providers []ProviderEntry `json:"providers"`
	}
	ProviderEntry struct {
		Name       string `json:"name"`
		IsExternal bool   `json:"isExternal"` // always false: arbor talks to every provider over HTTP itself
		Reachable  bool   `json:"reachable"`  // configured (endpoint and key found); arbor does not contact it to answer
		Active     bool   `json:"active"`     // the current model's
	}
	ExtensionsResult struct {
		Extensions []ExtensionEntry `json:"extensions"`
	}
	ExtensionEntry struct {
		Name  string   `json:"name"`
		Tools []string `json:"tools"`
	}
	ApprovalParams struct {
		Approved bool   `json:"approved"`
		Message  string `json:"message,omitempty"`
	}
	ToolsResult struct {
		Tools []ToolInfo `json:"tools"`
	}
	ToolInfo struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	EntriesParams struct {
		Since string `json:"since,omitempty"`
	}
	EntriesResult struct {
		Entries []json.RawMessage `json:"entries"`
		LeafID  string            `json:"leafId"`
	}
	TreeParams struct {
		Filter string `json:"filter,omitempty"`
	}
	TreeResult struct {
		Tree   json.RawMessage `json:"tree,omitempty"` // written by the channel (drain.streamLater): a tree of any depth
		Rows   []TreeRow       `json:"rows,omitempty"`
		Shown  int             `json:"shown,omitempty"`
		Total  int             `json:"total,omitempty"`
		LeafID string          `json:"leafId"`
	}
	BranchToParams struct {
		EntryID string `json:"entryId"`
		Summary string `json:"summary,omitempty"`
	}
	LeafResult struct {
		LeafID string `json:"leafId"`
	}
	LabelParams struct {
		EntryID string `json:"entryId"`
		Label   string `json:"label"`
	}
	NameParams struct {
		Name string `json:"name"`
	}
	ResolutionParams struct {
		EntryID string `json:"entryId"`
		Level   string `json:"level"` // pin, unpin, outline, summarize
		Text    string `json:"text,omitempty"`
	}
	EntryParams struct {
		EntryID string `json:"entryId"`
	}
	ResolutionResult struct {
		EntryID string `json:"entryId"`
		Level   string `json:"level"`
	}
	UndoResult struct {
		Compaction string `json:"compaction"`
		From       string `json:"from"`
		To         string `json:"to"`
		Left       int    `json:"left"`
	}
	SearchParams struct {
		Query string `json:"query"`
		Limit int    `json:"limit,omitempty"`
	}
	PathParams struct {
		Path string `json:"path"`
	}
	FsckParams struct {
		Path string `json:"path,omitempty"`
	}
	ExportParams struct {
		OutputPath string `json:"outputPath,omitempty"`
	}
	PathResult struct {
		Path string `json:"path"`
	}
	SearchResult struct {
		Hits []catalog.Hit `json:"hits"`
	}
)

// server is arbor serve's method table over one Engine.
type server struct {
	e   *Engine
	srv *jrpc2.Server
	d   *drain // the channel; nil when only the method table is wanted
	mu  sync.Mutex
	run runNotes // what agent/end reports of the running prompt; mu guards it
}

// runNotes gathers a prompt's iterations, usage and tool calls for agent/end.
type runNotes struct {
	iter  int
	usage RunUsage
	calls []ToolCallRecord
	args  map[string]string // a running tool call's arguments, by call id
}

// rpcError maps an operation's failure to a JSON-RPC error whose data names
// what was wrong.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := asError(err); ok {
		code := jrpc2.InternalError
		if e.Kind == BadParams {
			code = jrpc2.InvalidParams
		}
		return jrpc2.Errorf(code, "%s", e.Msg).WithData(map[string]string{"field": e.What, "reason": reasonOf(e.Kind)})
	}
	var le *jsonl.LockError
	if errors.As(err, &le) {
		return jrpc2.Errorf(jrpc2.InternalError, "%s", err.Error()).WithData(map[string]any{"reason": "locked", "path": le.Path, "holder": le.Holder})
	}
	return jrpc2.Errorf(jrpc2.InternalError, "%s", err.Error()).WithData(map[string]string{"reason": "failed"})
}

func reasonOf(k Kind) string {
	switch k {
	case BadParams:
		return "badParams"
	case Busy:
		return "busy"
	}
	return "failed"
}

func (s *server) notify(method string, params any) {
	if s.srv != nil {
		_ = s.srv.Notify(context.Background(), method, params)
	}
}

// event turns the agent's events into rho's notifications.
func (s *server) event(ev agent.Event) {
	switch ev.Type {
	case "agent_start":
		s.notify("agent/start", Empty{})
	case "message_update":
		if d := ev.AssistantMessageEvent; d != nil {
			switch d.Type {
			case "text_delta":
				s.notify("message/delta", DeltaNote{Delta: d.Delta})
			case "thinking_delta":
				s.notify("reasoning/delta", DeltaNote{Delta: d.Delta})
			}
		}
	case "tool_execution_start":
		args := argsText(ev.Args)
		s.mu.Lock()
		if s.run.args == nil {
			s.run.args = map[string]string{}
		}
		s.run.args[ev.ToolCallID] = args
		s.mu.Unlock()
		s.notify("tool/call", ToolCallNote{ID: ev.ToolCallID, Name: ev.ToolName, Arguments: args})
	case "tool_execution_end":
		var tr session.ToolResult
		_ = json.Unmarshal(ev.Result, &tr)
		out := session.Content{Blocks: tr.Content}.Text("\n")
		isErr := ev.IsError != nil && *ev.IsError
		rec := ToolCallRecord{Name: ev.ToolName, Outcome: ToolOutcome{Kind: "success"}, DurationMs: tr.DurationMs}
		if isErr {
			rec.Outcome = ToolOutcome{Kind: "error", Output: out}
		}
		s.mu.Lock()
		rec.Arguments = s.run.args[ev.ToolCallID]
		if rec.Arguments == "" {
			rec.Arguments = "{}" // a call skipped after an abort never started
		}
		delete(s.run.args, ev.ToolCallID)
		s.run.calls = append(s.run.calls, rec)
		s.mu.Unlock()
		s.notify("tool/result", ToolResultNote{ID: ev.ToolCallID, Name: ev.ToolName, IsError: isErr, Output: out})
	case "message_end":
		var m struct {
			Role  string        `json:"role"`
			Usage session.Usage `json:"usage"`
		}
		if json.Unmarshal(ev.Message, &m) == nil && m.Role == "assistant" {
			d := usageDelta(m.Usage)
			s.mu.Lock()
			s.run.iter++
			it := s.run.iter
			u := &s.run.usage
			u.InputTokens += d.InputTokens
			u.OutputTokens += d.OutputTokens
			u.TotalTokens += int64(m.Usage.TotalTokens)
			u.TotalCost += d.Cost
			u.RequestCount++
			s.mu.Unlock()
			s.notify("usage", UsageNote{Iteration: it, Usage: d, Context: s.e.contextAfter(m.Usage)})
		}
	case "compaction_start", "compaction_end":
		// rho's {state}, with pi's compaction event beside it.
		state := map[string]string{"compaction_start": "compacting", "compaction_end": "compacted"}[ev.Type]
		raw, _ := json.Marshal(ev)
		s.notify("state/change", StateChangeNote{State: state, Event: raw})
	}
}

func (s *server) prompt(ctx context.Context, p PromptParams) (PromptResult, error) {
	if p.Steer || p.FollowUp {
		if p.Steer && p.FollowUp {
			return PromptResult{}, rpcError(badParams("followUp", "give steer or followUp, not both"))
		}
		return PromptResult{Queued: true}, rpcError(s.e.Steer(p.Message, p.FollowUp))
	}
	s.mu.Lock()
	s.run = runNotes{}
	s.mu.Unlock()
	start := time.Now()
	started := false
	last, err := s.e.Prompt(context.WithoutCancel(ctx), p.Message, func() { started = true })
	if err != nil {
		if !started {
			return PromptResult{}, rpcError(err)
		}
		s.notify("agent/error", AgentErrorNote{Error: err.Error(), Aborted: errors.Is(err, agent.ErrAborted)})
		return PromptResult{}, rpcError(err)
	}
	end := AgentEndNote{Reply: last.Text(), DurationMs: time.Since(start).Milliseconds(), FinishReason: last.StopReason}
	s.mu.Lock()
	end.Iterations, end.Usage, end.ToolCalls = s.run.iter, s.run.usage, s.run.calls
	s.mu.Unlock()
	if end.ToolCalls == nil {
		end.ToolCalls = []ToolCallRecord{}
	}
	s.notify("agent/end", end)
	return PromptResult{Reply: last.Text()}, nil
}

// messages serves getMessages. Its answer can be hundreds of megabytes (a
// million messages), so it is not built here: the messages are handed to the
// channel, which writes them a message at a time in place of the empty list
// the library marshals (drain.Send).
func (s *server) messages(ctx context.Context) (MessagesResult, error) {
	m, err := s.e.Fitted()
	if err != nil {
		return MessagesResult{}, rpcError(err)
	}
	if req := jrpc2.InboundRequest(ctx); s.d != nil && req != nil && !req.IsNotification() {
		s.d.streamLater(req.ID(), messagesMark, func(bw *bufio.Writer) { writeRawArray(bw, m) })
		return MessagesResult{}, nil
	}
	return MessagesResult{Messages: m}, nil
}

// entries serves getEntries. Like getMessages' its answer is the size of
// the session file (hundreds of megabytes), so the channel writes the
// entries an entry at a time in place of the null the library marshals.
func (s *server) entries(ctx context.Context, p EntriesParams) (EntriesResult, error) {
	es, leaf, err := s.e.Entries(p.Since)
	if err != nil {
		return EntriesResult{}, rpcError(err)
	}
	if req := jrpc2.InboundRequest(ctx); s.d != nil && req != nil && !req.IsNotification() {
		s.d.streamLater(req.ID(), entriesMark, func(bw *bufio.Writer) { writeRawArray(bw, es) })
		return EntriesResult{LeafID: leaf}, nil
	}
	if es == nil {
		es = []json.RawMessage{}
	}
	return EntriesResult{Entries: es, LeafID: leaf}, nil
}

// tree serves getTree without a filter. Its tree is as deep as the
// session's longest chain, deeper than a JSON library will encode or check
// (encoding/json stops at 10,000 levels, 5,000 entries), so the channel
// writes it in place of the null the library marshals.
func (s *server) tree(ctx context.Context) (TreeResult, error) {
	t, leaf, err := s.e.Tree()
	if err != nil {
		return TreeResult{}, rpcError(err)
	}
	if req := jrpc2.InboundRequest(ctx); s.d != nil && req != nil && !req.IsNotification() {
		s.d.streamLater(req.ID(), treeMark, func(bw *bufio.Writer) { _ = session.WriteTreeJSON(bw, t, true) })
		return TreeResult{Tree: json.RawMessage("null"), LeafID: leaf}, nil
	}
	var b bytes.Buffer
	_ = session.WriteTreeJSON(&b, t, true)
	return TreeResult{Tree: b.Bytes(), LeafID: leaf}, nil
}

func (s *server) stats(context.Context) (StatsResult, error) {
	var out StatsResult
	o, sys, tools := s.e.statsOptions()
	out.SystemPromptTokens, out.ToolSchemaTokens = sys, tools
	err := s.e.view(func(l *session.Log) error {
		st := window.Measure(l.Cursor(""), o)
		out.ContextWindow, out.CompletionReserve, out.PromptBudget = st.ContextWindow, st.CompletionReserve, st.PromptBudget
		out.EstimatedUsed, out.EstimatedRemaining, out.UtilizationPercent = st.EstimatedUsed, st.EstimatedRemaining, int(st.UtilizationPercent)
		out.MessageCount, out.EntryCount, out.PathEntryCount = st.MessageCount, st.EntryCount, st.PathEntryCount
		out.RoleTokens, out.ResolutionTokens, out.PhaseTokens = st.RoleTokens, st.ResolutionTokens, st.PhaseTokens
		out.CompactionTokens, out.CompactedEntryCount, out.BeyondMessages = st.CompactionTokens, st.CompactedEntryCount, st.BeyondMessages
		for _, en := range l.Entries() {
			if en.Role() != session.RoleAssistant {
				continue
			}
			var m struct {
				Usage session.Usage `json:"usage"`
			}
			if json.Unmarshal(en.MessageRaw(), &m) != nil {
				continue
			}
			u := &out.APIUsage
			u.TotalInputTokens += m.Usage.Input
			u.TotalOutputTokens += m.Usage.Output
			u.TotalCachedTokens += m.Usage.CacheRead
			u.TotalTokens += m.Usage.TotalTokens
			u.TotalCost += m.Usage.Cost.Total
			u.RequestCount++
		}
		return nil
	})
	return out, rpcError(err)
}

func (s *server) listSessions(context.Context) (SessionsResult, error) {
	infos, err := s.e.List()
	if err != nil {
		return SessionsResult{}, rpcError(err)
	}
	out := SessionsResult{Sessions: []SessionSummary{}}
	for _, in := range infos {
		out.Sessions = append(out.Sessions, summary(in))
	}
	return out, nil
}

// summary is a listing record as rho's listSessions gives it: mtimeSecs is
// the file's modification time (in a database, the last message's time).
func summary(in catalog.Info) SessionSummary {
	mtime := in.Modified.Time().Unix()
	if !in.FileModified.IsZero() {
		mtime = in.FileModified.Unix()
	}
	return SessionSummary{Path: in.Path, MtimeSecs: mtime, SizeKb: (in.SizeBytes + 1023) / 1024,
		EntryCount: in.EntryCount, ID: in.ID, Name: in.Name}
}

func (s *server) resume(_ context.Context, p ResumeParams) (ResumeResult, error) {
	if err := s.e.Resume(p.Path, p.ReadOnly); err != nil {
		return ResumeResult{}, rpcError(err)
	}
	out := ResumeResult{Path: s.e.Ref(), Model: s.e.Model().ID}
	err := s.e.view(func(l *session.Log) error {
		out.Cwd, out.EntryCount = l.Header().Cwd, l.Len()
		return nil
	})
	return out, rpcError(err)
}

func (s *server) branches(context.Context) (BranchesResult, error) {
	cs, err := s.e.Cursors()
	out := BranchesResult{Branches: []Branch{}}
	for _, c := range cs {
		out.Branches = append(out.Branches, Branch{CursorID: c.ID, Leaf: c.Leaf, Name: c.Name, Active: c.Active})
	}
	return out, rpcError(err)
}

// method is one method of arbor serve: its name, what it does, and the
// function that serves it, whose parameter and result types the OpenRPC
// document is generated from.
type method struct {
	Name, Summary string
	Fn            any
}

func (s *server) methods() handler.Map {
	m := handler.Map{}
	for _, d := range s.table() {
		if fi, err := handler.Check(d.Fn); err == nil && fi.Argument == nil {
			m[d.Name] = noParams(d.Fn)
			continue
		}
		m[d.Name] = handler.New(d.Fn)
	}
	return m
}

// noParams adapts a method that takes no parameters (func(ctx) (T, error)
// or func(ctx) error) so that it also accepts params {} and [], which
// clients commonly send; any other params are refused as jrpc2 refuses them.
func noParams(fn any) jrpc2.Handler {
	v := reflect.ValueOf(fn)
	return func(ctx context.Context, req *jrpc2.Request) (any, error) {
		if req.HasParams() {
			p := []byte(req.ParamString())
			var obj map[string]json.RawMessage
			var arr []json.RawMessage
			if !(json.Unmarshal(p, &obj) == nil && obj != nil && len(obj) == 0 || json.Unmarshal(p, &arr) == nil && arr != nil && len(arr) == 0) {
				return nil, &jrpc2.Error{Code: jrpc2.InvalidParams, Message: "no parameters accepted"}
			}
		}
		out := v.Call([]reflect.Value{reflect.ValueOf(ctx)})
		err, _ := out[len(out)-1].Interface().(error)
		if len(out) == 1 {
			return nil, err
		}
		return out[0].Interface(), err
	}
}

func (s *server) table() []method {
	e := s.e
	return []method{
		{"prompt", "Run a message on the session and answer with the last reply (rho). With steer, queue it instead: it is sent after the running reply's tool calls, before the next request (or with the next prompt); with followUp, when the running prompt would stop.", s.prompt},
		{"abort", "Stop the running prompt; its partial reply is kept.", func(context.Context) (Empty, error) {
			e.Abort()
			return Empty{}, nil
		}},
		{"clear", "Move the active leaf to before the first entry (rho's clear); the old tree stays on disk.", func(context.Context) (Empty, error) {
			_, err := e.BranchTo("", "")
			return Empty{}, rpcError(err)
		}},
		{"compact", "Summarize the older part of the active branch now.", func(ctx context.Context) (Empty, error) {
			_, err := e.Compact(context.WithoutCancel(ctx), "", nil)
			return Empty{}, rpcError(err)
		}},
		{"getState", "The model, the project folder, the session and whether a prompt runs. Served while a prompt runs.", func(context.Context) (State, error) { return e.State(), nil }},
		{"getMessages", "The messages the model would be sent: the active cursor's context at its resolutions.", s.messages},
		{"setModel", "Use another model of the configuration from the next request (a running prompt's next one); an unknown model is -32602.", func(_ context.Context, p ModelParams) (ModelResult, error) {
			m, err := e.SetModel(p.Model)
			if err != nil {
				return ModelResult{}, rpcError(err)
			}
			out := ModelResult{Model: m.ID, Provider: m.Provider, ContextWindow: m.Window}
			err = e.view(func(l *session.Log) error {
				u := e.use(l.Context())
				out.EstimatedUsed, out.UtilizationPercent = u.used, u.percent()
				return nil
			})
			if errors.Is(err, errBusy) {
				// Set for the running prompt's next request; the context's
				// size comes with its next usage notification.
				err = nil
			}
			return out, rpcError(err)
		}},
		{"getSessionStats", "Entry and message counts and the token and cost totals of the session's replies.", s.stats},
		{"listSessions", "The sessions of the project (or --session-dir), newest first.", s.listSessions},
		{"resumeSession", "Open a session by path, id or name; readOnly follows it without the writer lock.", s.resume},
		{"newSession", "Start a new session, written with its first prompt.", func(context.Context) (NewSessionResult, error) {
			ref, err := e.NewSession()
			if err != nil {
				return NewSessionResult{}, rpcError(err)
			}
			var id string
			_ = e.view(func(l *session.Log) error { id = l.Header().ID; return nil })
			return NewSessionResult{SessionID: id, Path: ref}, nil
		}},
		{"fork", "Start a new cursor at the active leaf; the active cursor does not change.", func(_ context.Context, p ForkParams) (CursorResult, error) {
			id, err := e.NewCursor(p.Name)
			return CursorResult{CursorID: id}, rpcError(err)
		}},
		{"listBranches", "The session's cursors, with their leaves and names.", s.branches},
		{"switchBranch", "Make a cursor the active one.", func(_ context.Context, p CursorParams) (CursorResult, error) {
			return CursorResult(p), rpcError(e.SwitchCursor(p.CursorID))
		}},
		{"listModels", "The models the configuration names, with their providers.", func(context.Context) (ModelsResult, error) {
			out := ModelsResult{Models: []ModelEntry{}}
			for _, m := range e.Models() {
				out.Models = append(out.Models, ModelEntry{ID: m.ID, Provider: m.Provider})
			}
			return out, nil
		}},
		{"listProviders", "The providers of the configured models; reachable means configured (arbor does not contact them to answer), active the current model's.", func(context.Context) (ProvidersResult, error) {
			out := ProvidersResult{Providers: []ProviderEntry{}}
			cur := e.Model().Provider
			seen := map[string]bool{}
			for _, m := range e.Models() {
				if m.Provider == "" || seen[m.Provider] {
					continue
				}
				seen[m.Provider] = true
				out.Providers = append(out.Providers, ProviderEntry{Name: m.Provider, Reachable: m.Err == nil, Active: m.Provider == cur})
			}
			if cur != "" && !seen[cur] {
				out.Providers = append(out.Providers, ProviderEntry{Name: cur, Reachable: true, Active: true})
			}
			return out, nil
		}},
		{"listExtensions", "The extensions loaded: always none, arbor has no extensions.", func(context.Context) (ExtensionsResult, error) {
			return ExtensionsResult{Extensions: []ExtensionEntry{}}, nil
		}},
		{"reloadExtensions", "Reload the extensions: arbor has none, so nothing changes.", func(context.Context) (Empty, error) {
			return Empty{}, nil
		}},
		{"approvalResponse", "Answer a tool approval request: arbor never asks one (it sends no approval/request), so this is always -32602.", func(context.Context, ApprovalParams) (Empty, error) {
			return Empty{}, rpcError(badParams("approved", "no tool approval is pending: arbor runs its tools without asking (no approval/request is ever sent)"))
		}},
		{"listTools", "The tools the agent may call.", func(context.Context) (ToolsResult, error) {
			out := ToolsResult{Tools: []ToolInfo{}}
			e.mu.Lock()
			if e.ag != nil {
				for _, t := range e.ag.Tools {
					out.Tools = append(out.Tools, ToolInfo{Name: t.Name, Description: t.Description})
				}
			}
			e.mu.Unlock()
			return out, nil
		}},
		{"getEntries", "The session's entries in file order, after the entry since when given (follow a live session).", s.entries},
		{"getTree", "The session's tree and the active leaf: pi's getTree nodes, or with filter (default, no-tools, user, labeled, all) the rows that filter keeps, as 'arbor tree' draws them.", func(ctx context.Context, p TreeParams) (TreeResult, error) {
			if p.Filter != "" {
				rows, shown, total, err := e.FilteredTree(p.Filter)
				if err != nil {
					return TreeResult{}, rpcError(err)
				}
				_, leaf, err := e.Tree()
				return TreeResult{Rows: rows, Shown: shown, Total: total, LeafID: leaf}, rpcError(err)
			}
			return s.tree(ctx)
		}},
		{"branchTo", "Move the active leaf to an entry, with an optional summary of the branch left.", func(_ context.Context, p BranchToParams) (LeafResult, error) {
			if p.EntryID == "" {
				return LeafResult{}, rpcError(badParams("entryId", "give entryId (clear moves to before the first entry)"))
			}
			leaf, err := e.BranchTo(p.EntryID, p.Summary)
			return LeafResult{LeafID: leaf}, rpcError(err)
		}},
		{"label", "Label an entry (an empty label clears it).", func(_ context.Context, p LabelParams) (Empty, error) {
			return Empty{}, rpcError(e.Label(p.EntryID, p.Label))
		}},
		{"setSessionName", "Name the session.", func(_ context.Context, p NameParams) (Empty, error) {
			return Empty{}, rpcError(e.SetSessionName(p.Name))
		}},
		{"nameBranch", "Name a cursor (an empty name clears it).", func(_ context.Context, p NameBranchParams) (NameBranchParams, error) {
			return p, rpcError(e.RenameCursor(p.CursorID, p.Name))
		}},
		{"setResolution", "How an entry reaches the model: pin, unpin, outline or summarize (with text).", func(_ context.Context, p ResolutionParams) (ResolutionResult, error) {
			l, err := e.Resolve(p.EntryID, p.Level, p.Text)
			return ResolutionResult{EntryID: p.EntryID, Level: l}, rpcError(err)
		}},
		{"pin", "Keep an entry in full in the model's context.", func(_ context.Context, p EntryParams) (ResolutionResult, error) {
			l, err := e.Resolve(p.EntryID, "pin", "")
			return ResolutionResult{EntryID: p.EntryID, Level: l}, rpcError(err)
		}},
		{"unpin", "Give an entry back its default resolution.", func(_ context.Context, p EntryParams) (ResolutionResult, error) {
			l, err := e.Resolve(p.EntryID, "unpin", "")
			return ResolutionResult{EntryID: p.EntryID, Level: l}, rpcError(err)
		}},
		{"compactUndo", "Move the active leaf back to before the last compaction; nothing is deleted.", func(context.Context) (UndoResult, error) {
			u, err := e.CompactUndo()
			if err != nil {
				return UndoResult{}, rpcError(err)
			}
			return UndoResult{Compaction: u.Compaction.ID, From: u.From, To: u.To, Left: u.Left}, nil
		}},
		{"exportHtml", "Write the session as one self-contained HTML page (arbor export) to a new file; outputPath defaults to a name in the server's folder.", func(_ context.Context, p ExportParams) (PathResult, error) {
			path, err := e.ExportHTML(p.OutputPath)
			return PathResult{Path: path}, rpcError(err)
		}},
		{"rm", "Move a session file, with its sidecars, to the trash (files only; not the session being served).", func(_ context.Context, p PathParams) (catalog.Trashed, error) {
			t, err := e.Remove(p.Path)
			return t, rpcError(err)
		}},
		{"restore", "Bring a removed session back where it was (files only); a file there is never overwritten.", func(_ context.Context, p PathParams) (catalog.Trashed, error) {
			t, err := e.Restore(p.Path)
			return t, rpcError(err)
		}},
		{"fsck", "Report the damage loading a session file found (files only; the one served when path is left out); nothing is changed.", func(_ context.Context, p FsckParams) (FsckResult, error) {
			r, err := e.Fsck(p.Path)
			return r, rpcError(err)
		}},
		{"search", "Find entries of the sessions in scope (pi's picker syntax; re:<pattern> for a regular expression).", func(_ context.Context, p SearchParams) (SearchResult, error) {
			if strings.TrimSpace(p.Query) == "" {
				return SearchResult{}, rpcError(badParams("query", "give a query"))
			}
			hits, err := e.Search(p.Query, p.Limit)
			if hits == nil {
				hits = []catalog.Hit{}
			}
			return SearchResult{Hits: hits}, rpcError(err)
		}},
	}
}

// Serve speaks JSON-RPC 2.0 on r and w, one JSON value a line, until r ends.
// It sends the ready notification first.
func Serve(cfg Config, r io.Reader, w io.WriteCloser) error {
	s := &server{}
	e, err := New(cfg, s.event)
	if err != nil {
		return err
	}
	defer e.Close()
	s.e = e
	limit := cfg.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	d := newDrain(&lineChannel{br: bufio.NewReader(r), w: w, limit: limit}, w, s.methods())
	s.d = d
	// ready goes out before the server reads a request: it is the first line,
	// and a short input cannot end the server before it is sent.
	ready, err := json.Marshal(struct {
		Version string    `json:"jsonrpc"`
		Method  string    `json:"method"`
		Params  ReadyNote `json:"params"`
	}{"2.0", "ready", ReadyNote{Pid: os.Getpid(), Session: e.Ref()}})
	if err != nil {
		return err
	}
	if err := d.Send(ready); err != nil {
		return err
	}
	s.srv = jrpc2.NewServer(d, &jrpc2.ServerOptions{AllowPush: true, Concurrency: 4})
	s.srv.Start(d)
	werr := s.srv.Wait()
	if errors.Is(werr, jrpc2.ErrConnClosed) {
		return nil
	}
	return werr
}

// ListenOptions says how Listen admits clients.
type ListenOptions struct {
	// Token is what a TCP client must send first, as the request
	// authenticate{token}; Listen refuses tcp: without one. A unix socket
	// needs none: it is made 0600 in a folder only its owner can enter.
	Token string
	// Ready, if set, is called once Listen listens.
	Ready func(net.Addr)
}

// ErrUnauthenticated is the JSON-RPC error code of a TCP request refused for
// want of the token (one of the codes JSON-RPC leaves to servers).
const ErrUnauthenticated jrpc2.Code = -32001

// authMethod is the request a TCP client sends first.
const authMethod = "authenticate"

// Listen accepts clients on addr, unix:PATH or tcp:HOST:PORT with a loopback
// host, and serves each on its own Engine and session until ctx ends. A TCP
// client's first request must be authenticate{token} with o.Token; any other
// first line is answered with ErrUnauthenticated and the connection closed.
func Listen(ctx context.Context, cfg Config, addr string, o ListenOptions) error {
	network, where, ok := strings.Cut(addr, ":")
	switch {
	case !ok || where == "" || (network != "unix" && network != "tcp"):
		return &Error{Kind: BadParams, What: "listen", Msg: fmt.Sprintf("--listen %q: give unix:PATH or tcp:127.0.0.1:PORT", addr)}
	case network == "tcp":
		host, _, err := net.SplitHostPort(where)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return &Error{Kind: BadParams, What: "listen", Msg: fmt.Sprintf("--listen %q: tcp needs a loopback address and a port (tcp:127.0.0.1:PORT); anyone who reaches it could run the agent", addr)}
		}
		if o.Token == "" {
			return &Error{Kind: BadParams, What: "token", Msg: fmt.Sprintf("--listen %q: tcp needs a token: any local user can reach the port", addr)}
		}
	}
	var (
		ln  net.Listener
		err error
	)
	if network == "unix" {
		ln, err = listenUnix(where)
	} else {
		ln, err = net.Listen(network, where)
	}
	if err != nil {
		return err
	}
	defer ln.Close() // a unix socket's name is gone once Listen returns
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	go func() {
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r io.Reader = c
			if network == "tcp" {
				r = authenticate(c, o.Token)
			}
			if r != nil {
				_ = Serve(cfg, r, c)
			}
			c.Close()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// NewToken returns a random token for ListenOptions: 32 bytes from the
// system's generator, in hexadecimal.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// listenUnix listens on a socket at path that is 0600 from the moment it
// has that name: it is made in a folder of its own that only this user can
// enter, given its mode there, then renamed into place, so no other user can
// connect in between, whatever the folder of path lets them do.
func listenUnix(path string) (net.Listener, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".arbor-sock-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bound := filepath.Join(tmp, "s")
	ln, err := net.Listen("unix", bound)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(bound, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Link(bound, path); err != nil { // never replaces a file at path
		ln.Close()
		return nil, err
	}
	return &unlinking{UnixListener: ul, path: path}, nil
}

// unlinking removes its socket's name when first closed; a Close that comes
// meanwhile waits for that.
type unlinking struct {
	*net.UnixListener
	path string
	once sync.Once
	err  error
}

func (u *unlinking) Close() error {
	u.once.Do(func() {
		u.err = u.UnixListener.Close()
		_ = os.Remove(u.path)
	})
	return u.err
}

// authTimeout is how long a TCP client has to authenticate.
const authTimeout = 30 * time.Second

// authLine bounds the first line of a TCP client: the request that carries
// the token is small.
const authLine = 64 << 10

// authenticate reads a TCP client's first request and answers it: the
// reader to serve the client from when it was authenticate{token} with the
// token, nil (the client told why) otherwise.
func authenticate(c net.Conn, token string) io.Reader {
	_ = c.SetReadDeadline(time.Now().Add(authTimeout))
	br := bufio.NewReader(c)
	line, err := readLine(br, authLine)
	_ = c.SetReadDeadline(time.Time{})
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Token string `json:"token"`
		} `json:"params"`
	}
	perr := json.Unmarshal(line, &req)
	if !validID(req.ID) {
		req.ID = nil
	}
	if err == nil && perr == nil && req.Method == authMethod && len(req.ID) > 0 &&
		subtle.ConstantTimeCompare([]byte(req.Params.Token), []byte(token)) == 1 {
		answer(c, req.ID, `"result":{}`)
		return br
	}
	msg := "send authenticate{token} first: this server listens on TCP and admits only clients with its token"
	if req.Method == authMethod {
		msg = "authenticate: wrong token"
	}
	e, _ := json.Marshal(map[string]any{"code": ErrUnauthenticated, "message": msg, "data": map[string]string{"reason": "unauthenticated"}})
	answer(c, req.ID, `"error":`+string(e))
	return nil
}

// answer writes a JSON-RPC response with id (null when nil) and body.
func answer(w io.Writer, id json.RawMessage, body string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,`+body+"}\n")
}

// validID says whether id is a JSON-RPC id: a string, a number or null.
func validID(id json.RawMessage) bool {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64, nil:
		return true
	}
	return false
}

// drain makes requests piped in (echo … | arbor serve) all answered before
// the server stops: at the end of the input it sends the server one more
// request of its own, read after every other, whose handler waits until
// every request the server assigned a handler to has been answered; then the
// end is reported. It is both the server's channel and its assigner, because
// assignment happens in the order requests are read.
type drain struct {
	channel.Channel
	w        io.Writer // what Channel writes to, for the answers streamed
	methods  handler.Map
	sentinel string // the id of drain's own request
	mu       sync.Mutex
	cond     *sync.Cond
	owed     map[string]int      // ids of assigned requests not yet answered
	later    map[string]streamed // answers to stream (getMessages, getEntries, getTree), by request id
	tooLong  map[string]*tooLong // lines over the limit, by the id drain gave their stand-in request
	lines    int                 // counts them
	ended    error               // the input's end, reported after the sentinel
	stage    int                 // 0 reading, 1 at the end, 2 the sentinel sent
	done     chan struct{}
}

func newDrain(c channel.Channel, w io.Writer, methods handler.Map) *drain {
	d := &drain{Channel: c, w: w, methods: methods, owed: map[string]int{}, later: map[string]streamed{}, tooLong: map[string]*tooLong{}, done: make(chan struct{}),
		sentinel: fmt.Sprintf(`"arbor-drain-%d-%d"`, os.Getpid(), time.Now().UnixNano())}
	d.cond = sync.NewCond(&d.mu)
	return d
}

const (
	drainMethod   = "arbor.drain"
	tooLongMethod = "arbor.tooLong"
)

func (d *drain) Recv() ([]byte, error) {
	switch d.stage {
	case 0:
		msg, err := d.Channel.Recv()
		if tl, ok := errors.AsType[*tooLong](err); ok {
			// Answered by a request of drain's own, in its place among the
			// others, with the line's id put back when it is sent.
			d.mu.Lock()
			d.lines++
			id := fmt.Sprintf(`"arbor-too-long-%d"`, d.lines)
			d.tooLong[id] = tl
			d.mu.Unlock()
			return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + tooLongMethod + `"}`), nil
		}
		if err == nil {
			return msg, nil
		}
		d.ended, d.stage = err, 1
		if len(msg) > 0 {
			return msg, nil // the last line, without its newline
		}
		fallthrough
	case 1:
		d.stage = 2
		return []byte(`{"jsonrpc":"2.0","id":` + d.sentinel + `,"method":"` + drainMethod + `"}`), nil
	}
	<-d.done
	return nil, d.ended
}

func (d *drain) Assign(ctx context.Context, method string) jrpc2.Handler {
	req := jrpc2.InboundRequest(ctx)
	if req != nil && !req.IsNotification() {
		if method == drainMethod && req.ID() == d.sentinel {
			return func(context.Context, *jrpc2.Request) (any, error) {
				d.mu.Lock()
				for len(d.owed) > 0 {
					d.cond.Wait()
				}
				d.mu.Unlock()
				return nil, nil
			}
		}
		d.mu.Lock()
		d.owed[compactID(req.ID())]++
		tl := d.tooLong[req.ID()]
		d.mu.Unlock()
		if method == tooLongMethod && tl != nil {
			return func(context.Context, *jrpc2.Request) (any, error) {
				return nil, jrpc2.Errorf(jrpc2.InvalidRequest, "%s", tl.Error()).WithData(map[string]any{"reason": tl.reason(), "bytes": tl.size, "limit": tl.limit})
			}
		}
	}
	return d.methods.Assign(ctx, method)
}

func compactID(id string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(id)) != nil {
		return id
	}
	return b.String()
}

// streamed is an answer whose part at mark (a field with the value null,
// as the library marshalled it) write writes.
type streamed struct {
	mark  string
	write func(*bufio.Writer)
}

// The fields of the answers streamed.
const (
	messagesMark = `"messages":null`
	entriesMark  = `"entries":null`
	treeMark     = `"tree":null`
)

// streamLater has the answer to request id written with write's output in
// place of the null of its field mark when the library sends it.
func (d *drain) streamLater(id, mark string, write func(*bufio.Writer)) {
	d.mu.Lock()
	d.later[compactID(id)] = streamed{mark, write}
	d.mu.Unlock()
}

// Send is called with the library's lock held, so what it writes to w
// directly is never interleaved with another message.
func (d *drain) Send(msg []byte) error {
	var batch []json.RawMessage
	if json.Unmarshal(msg, &batch) != nil {
		batch = []json.RawMessage{msg}
	}
	var (
		keep    []json.RawMessage
		fill    map[int]streamed // by index in keep
		renamed bool             // a message's id was put back
	)
	d.mu.Lock()
	for _, m := range batch {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &r) == nil && r.Method == "" && len(r.ID) > 0 {
			id := compactID(string(r.ID))
			if id == d.sentinel {
				close(d.done)
				continue
			}
			if d.owed[id]--; d.owed[id] <= 0 {
				delete(d.owed, id)
			}
			if sl, ok := d.later[id]; ok {
				delete(d.later, id)
				if bytes.Contains(m, []byte(sl.mark)) {
					if fill == nil {
						fill = map[int]streamed{}
					}
					fill[len(keep)] = sl
				}
			}
			if tl, ok := d.tooLong[id]; ok {
				delete(d.tooLong, id)
				real := tl.id
				if real == nil {
					real = json.RawMessage("null")
				}
				m = bytes.Replace(m, []byte(`"id":`+id), append([]byte(`"id":`), real...), 1)
				renamed = true
			}
		}
		keep = append(keep, m)
	}
	d.cond.Broadcast()
	d.mu.Unlock()
	if len(keep) == 0 {
		return nil
	}
	if len(fill) > 0 {
		return d.stream(keep, isBatch(msg), fill)
	}
	if !isBatch(msg) {
		msg = keep[0] // the one message, its id perhaps put back
	} else if len(keep) < len(batch) || renamed {
		b, err := json.Marshal(keep)
		if err != nil {
			return err
		}
		msg = b
	}
	return d.Channel.Send(validJSON(msg))
}

// stream writes the answers keep (as a batch when batch is set) with the
// streamed parts of the answers in fill written by their functions, as
// Channel would write the whole: valid UTF-8 and a newline.
func (d *drain) stream(keep []json.RawMessage, batch bool, fill map[int]streamed) error {
	bw := bufio.NewWriterSize(&validUTF8{w: d.w}, 64<<10) // d.w is the output itself: a write is a system call
	if batch {
		bw.WriteByte('[')
	}
	for i, m := range keep {
		if i > 0 {
			bw.WriteByte(',')
		}
		sl, ok := fill[i]
		if !ok {
			bw.Write(m)
			continue
		}
		at := bytes.LastIndex(m, []byte(sl.mark)) + len(sl.mark) - len("null")
		bw.Write(m[:at])
		sl.write(bw)
		bw.Write(m[at+len("null"):])
	}
	if batch {
		bw.WriteByte(']')
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// lineChannel is the server's channel: a JSON value a line each way. A
// request line is bounded (a longer one is reported as a *tooLong, the
// stream still read from its next line), and a last line without its
// newline is a request.
type lineChannel struct {
	br    *bufio.Reader
	w     io.WriteCloser
	limit int
}

func (c *lineChannel) Recv() ([]byte, error) { return readLine(c.br, c.limit) }

func (c *lineChannel) Send(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("rpc: a message to send holds a newline")
	}
	_, err := c.w.Write(append(msg, '\n'))
	return err
}

func (c *lineChannel) Close() error { return c.w.Close() }

// isBatch says whether msg is a JSON array.
func isBatch(msg []byte) bool {
	t := bytes.TrimLeft(msg, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}
