package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/store"
	"github.com/arborlog/arbor/window"
)

// Kind says what went wrong with an operation, so each protocol can map it to
// its own error.
type Kind int

const (
	Internal  Kind = iota // the session or the provider failed
	BadParams             // the request named something that does not exist or gave a bad value
	Busy                  // a prompt is running
)

// Error is an operation's failure: its kind, a one-line message and what was
// wrong (the parameter or the id).
type Error struct {
	Kind Kind
	Msg  string
	What string
}

func (e *Error) Error() string { return e.Msg }

func badParams(what, format string, args ...any) error {
	return &Error{Kind: BadParams, What: what, Msg: fmt.Sprintf(format, args...)}
}

var errBusy = &Error{Kind: Busy, What: "prompt", Msg: "a prompt is running: abort it or wait for agent/end"}

// Config is what an Engine needs from the command that starts it.
type Config struct {
	Store store.Store
	Scope catalog.Scope // where listSessions and resumeSession look
	Cwd   string
	Where string // the folder new sessions go in ("" for the project's default)
	Start string // the session to open at start (path, id or name); "" for a new one
	// NewAgent builds the agent for a session, with the model named (""
	// for the configured one). Its Log, Flush and Emit are set by the Engine.
	NewAgent func(model string) (*agent.Agent, error)
	// Models lists the models the configuration names.
	Models func() []string
	// Fork starts the session holding the branch of l (read from ref) that
	// ends at leaf, open for writing.
	Fork func(ref string, l *session.Log, leaf string) (store.Session, error)
	// Export writes the session's HTML page to the new file out ("" for the
	// default name) and returns its name; nil when arbor has no exporter.
	Export func(l *session.Log, ref, out string) (string, error)
	// Allow names folders whose files requests may name by path, besides
	// the project (Cwd), Where, Scope.Dir and the sessions folders.
	Allow []string
	// MaxRequestBytes bounds a request line (DefaultMaxRequestBytes when
	// 0); a longer one is answered with an error and not read.
	MaxRequestBytes int
	// Opening, if set, is called with a session's ref just before the
	// session is read (at start, resumeSession, switch_session): the command
	// bounds its heap for the file's size there, as for any session it opens.
	Opening func(ref string)
}

// Engine holds one session and the agent that runs prompts on it.
type Engine struct {
	cfg  Config
	emit func(agent.Event)

	mu         sync.Mutex
	sess       store.Session
	follow     string // the ref of a session read without the lock (a follower)
	log        *session.Log
	model      string
	ag         *agent.Agent
	running    bool
	aborted    bool // Abort was called during the current run
	compacting bool // the run is compact's
	cancel     context.CancelFunc
	q          *agent.Queue // steering and follow-up messages, shared by every agent the engine builds
	settings   settings
	bash       map[*context.CancelFunc]bool // the person's own commands running (abort_bash cancels them)
	bashLog    []session.BashExecution      // their bashExecution messages, held while a prompt runs
	messages   int                          // context messages, kept up to date while a run appends
	gen        int                          // counts the prompts started, so a finished one does not end the next
	agentErr   error                        // why there is no agent (no model configured)
}

// settings are what a client changed that every agent of the engine keeps.
type settings struct {
	thinking  string // "" for the configuration's
	noCompact bool
	noRetry   bool
}

// New returns an Engine on the session cfg.Start names, or on a new session
// (written with its first prompt). emit receives the agent's events (pi's
// names) from any goroutine.
func New(cfg Config, emit func(agent.Event)) (*Engine, error) {
	e := &Engine{cfg: cfg, emit: emit, bash: map[*context.CancelFunc]bool{}}
	e.q = &agent.Queue{OnChange: func(steering, followUp []string) {
		if e.emit != nil {
			e.emit(agent.QueueEvent(steering, followUp))
		}
	}}
	if cfg.Start != "" {
		// The command's own session: a path it names is the user's choice.
		if err := e.resume(cfg.Start, false, true); err != nil {
			return nil, err
		}
		return e, nil
	}
	if _, err := e.NewSession(); err != nil {
		return nil, err
	}
	return e, nil
}

// Close releases the session's writer lock.
func (e *Engine) Close() error {
	e.Abort()
	e.AbortBash()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closeSession()
}

func (e *Engine) closeSession() error {
	if e.sess == nil {
		return nil
	}
	err := e.sess.Close()
	e.sess = nil
	if errors.Is(err, jsonl.ErrUnwritten) {
		// A session closed before its first message, whose setup (a name,
		// a model) was held back: not written, as pi writes no session
		// without a reply.
		return nil
	}
	return err
}

// idle locks the engine for an operation on the session; it fails while a
// prompt runs. The caller unlocks e.mu.
func (e *Engine) idle() error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return errBusy
	}
	return nil
}

// writable also refuses a session opened as a follower.
func (e *Engine) writable() error {
	if err := e.idle(); err != nil {
		return err
	}
	if e.follow != "" {
		e.mu.Unlock()
		return &Error{Kind: BadParams, What: "session", Msg: "this session was opened to follow (readOnly): resume it without readOnly to write"}
	}
	return nil
}

// attach makes s the engine's session. Without a usable model the session
// still opens (to list, read, navigate and follow); prompts then fail with
// the reason.
func (e *Engine) attach(s store.Session) error {
	if err := e.closeSession(); err != nil {
		_ = s.Close()
		return err
	}
	e.sess, e.log, e.follow = s, s.Log(), ""
	e.dropQueue()
	e.messages = len(e.log.Context().Messages)
	a, err := e.cfg.NewAgent(e.model)
	e.ag, e.agentErr = a, err
	if err == nil {
		e.setup(a)
	}
	return nil
}

// dropQueue empties the queue when the session changes: what was queued for
// one session is not sent to another (pi resets its agent's queues).
func (e *Engine) dropQueue() {
	if e.q.Len() > 0 {
		e.q.Clear()
	}
}

// setup gives an agent the engine's session, queue and settings.
func (e *Engine) setup(a *agent.Agent) {
	a.Log, a.Flush, a.Emit, a.Queue = e.log, e.sess.Flush, e.onEvent, e.q
	if e.settings.thinking != "" {
		a.Thinking = e.settings.thinking
	}
	if e.settings.noCompact {
		a.SetAutoCompaction(false)
	}
	a.NoRetry = e.settings.noRetry
}

func (e *Engine) onEvent(ev agent.Event) {
	switch ev.Type {
	case "message_end":
		e.mu.Lock()
		e.messages++
		e.mu.Unlock()
	case "agent_end":
		// The run is over unless a message is queued after a reply that
		// ended well (Prompt then continues): a client that waits for
		// agent_end may send the next prompt at once. The run's goroutine
		// touches the log no more.
		e.mu.Lock()
		if e.running && (e.q.Len() == 0 || e.aborted || failed(ev.Messages)) {
			e.stopped()
		}
		e.mu.Unlock()
	}
	if e.emit != nil {
		e.emit(ev)
	}
}

// Ref names the current session (its file, or its id in a database).
func (e *Engine) Ref() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ref()
}

func (e *Engine) ref() string {
	if e.follow != "" {
		return e.follow
	}
	return e.sess.Ref()
}

// NewSession starts a new session (written with its first prompt).
func (e *Engine) NewSession() (string, error) {
	e.mu.Lock()
	running := e.running
	e.mu.Unlock()
	if running {
		return "", errBusy
	}
	s, err := e.cfg.Store.Create(e.cfg.Cwd, e.cfg.Where, store.Options{})
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.attach(s); err != nil {
		return "", err
	}
	return s.Ref(), nil
}

// Resume opens the session named by ref (a path, id or name). readOnly opens
// it to follow without taking the writer lock.
func (e *Engine) Resume(ref string, readOnly bool) error { return e.resume(ref, readOnly, false) }

// resume is Resume; a request's path (not trusted) must name a session file
// in the engine's folders.
func (e *Engine) resume(ref string, readOnly, trusted bool) error {
	if ref == "" {
		return badParams("path", "give the session to resume (path, id or name)")
	}
	if err := e.idle(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	r, err := e.cfg.Store.Resolve(ref, e.cfg.Scope)
	if err != nil {
		return badParams("path", "no session %q: %v (listSessions names them)", ref, err)
	}
	if !trusted {
		if err := e.sessionFile(r); err != nil {
			return err
		}
	}
	if e.cfg.Opening != nil {
		e.cfg.Opening(r)
	}
	if readOnly {
		l, err := e.cfg.Store.Read(r)
		if err != nil {
			return missing(err)
		}
		if err := e.closeSession(); err != nil {
			return err
		}
		e.log, e.follow, e.ag = l, r, nil
		e.dropQueue()
		e.messages = len(l.Context().Messages)
		return nil
	}
	if e.follow == "" && e.sess != nil && sameSession(r, e.sess.Ref()) {
		// The session served: read it again (as pi's switch_session does)
		// under a lock taken anew, which this engine's own would refuse.
		if err := e.closeSession(); err != nil {
			return err
		}
		s, err := e.cfg.Store.Open(r, store.Options{})
		if err != nil {
			// Not reopened: a new session keeps the engine serving.
			if ns, cerr := e.cfg.Store.Create(e.cfg.Cwd, e.cfg.Where, store.Options{}); cerr == nil {
				_ = e.attach(ns)
			}
			return missing(err)
		}
		return e.attach(s)
	}
	s, err := e.cfg.Store.Open(r, store.Options{})
	if err != nil {
		return missing(err)
	}
	return e.attach(s)
}

// sameSession says whether two refs name one session: the same file (by
// device and inode, whatever path names it), or the same id in a database.
func sameSession(a, b string) bool {
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// Prompt runs message on the session and returns the last reply. It blocks
// until the run ends; Abort stops it. started, if not nil, is called once the
// prompt is accepted, before the run's first event.
func (e *Engine) Prompt(ctx context.Context, message string, started func()) (*session.Assistant, error) {
	if strings.TrimSpace(message) == "" {
		return nil, badParams("message", "the message is empty")
	}
	if !utf8.ValidString(message) {
		return nil, badParams("message", "the message is not valid UTF-8")
	}
	if err := e.writable(); err != nil {
		return nil, err
	}
	if e.ag == nil {
		e.mu.Unlock()
		return nil, &Error{Kind: Internal, What: "model", Msg: fmt.Sprintf("no model to prompt: %v", e.agentErr)}
	}
	ctx, cancel := context.WithCancel(ctx)
	e.running, e.cancel, e.aborted = true, cancel, false
	e.gen++
	gen := e.gen
	a := e.ag
	release := a.Hold() // a setting changed from now on waits for the next turn
	first := e.log.Len() == 0
	e.mu.Unlock()
	defer cancel()
	if started != nil {
		started()
	}

	var (
		last *session.Assistant
		err  error
	)
	if first {
		err = a.Prepare()
	}
	if err == nil {
		last, err = a.Run(ctx, message)
	}
	// A message queued after the run last looked starts another run (pi's
	// continue), unless the run was over for the engine already.
	for err == nil {
		e.mu.Lock()
		more := e.gen == gen && e.running && e.q.Len() > 0
		e.mu.Unlock()
		if !more {
			break
		}
		var next *session.Assistant
		if next, err = a.Continue(ctx); errors.Is(err, agent.ErrNothingQueued) {
			err = nil
			break
		}
		last = next
	}
	if rerr := release(); rerr != nil && err == nil {
		err = rerr
	}
	e.mu.Lock()
	if e.gen == gen && e.running {
		e.stopped()
	}
	e.mu.Unlock()
	return last, err
}

// failed says whether a run's last message ended it (aborted or failed).
func failed(messages []json.RawMessage) bool {
	if len(messages) == 0 {
		return true
	}
	var m struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(messages[len(messages)-1], &m)
	return m.StopReason == session.StopAborted || m.StopReason == session.StopError
}

// stopped marks the run over and appends the person's commands that ended
// while it ran (as pi does, so a tool call and its result stay together).
// e.mu is held.
func (e *Engine) stopped() {
	e.running, e.cancel, e.compacting = false, nil, false
	for _, m := range e.bashLog {
		if err := e.appendBash(m); err != nil && e.emit != nil {
			e.emit(agent.Event{Type: "error", ErrorMessage: err.Error()})
		}
	}
	e.bashLog = nil
	e.messages = len(e.log.Context().Messages)
}

// Steer queues a steering message: while a prompt runs it is sent after the
// tool calls of the current reply, before the next request; otherwise with
// the next prompt. followUp queues it instead until the run would stop.
func (e *Engine) Steer(message string, followUp bool) error {
	if strings.TrimSpace(message) == "" {
		return badParams("message", "the message is empty")
	}
	if followUp {
		e.q.FollowUp(message)
	} else {
		e.q.Steer(message)
	}
	return nil
}

// ClearQueue empties the queue and returns what it held.
func (e *Engine) ClearQueue() (steering, followUp []string) { return e.q.Clear() }

// Queue reports the queued messages and the queue's modes.
func (e *Engine) Queue() (steering, followUp []string, steerMode, followMode string) {
	steering, followUp = e.q.Pending()
	steerMode, followMode = e.q.Modes()
	return
}

// SetQueueModes sets how many queued messages are sent at a time: "all" or
// "one-at-a-time"; "" leaves a mode as it is.
func (e *Engine) SetQueueModes(steering, followUp string) error {
	if err := e.q.SetModes(steering, followUp); err != nil {
		return badParams("mode", "%v", err)
	}
	return nil
}

// Abort stops the running prompt (the partial reply is kept); queued
// messages stay queued (ClearQueue drops them), as in pi. Without a prompt
// it does nothing.
func (e *Engine) Abort() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel != nil {
		e.cancel()
		e.aborted = true
	}
}

// Running says whether a prompt runs.
func (e *Engine) Running() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running
}

// State is what getState reports.
type State struct {
	Model        string `json:"model"`
	Provider     string `json:"provider"`
	Cwd          string `json:"cwd"`
	MessageCount int    `json:"messageCount"`
	SessionFile  string `json:"sessionFile"`
	SessionID    string `json:"sessionId"`
	SessionName  string `json:"sessionName,omitempty"`
	IsStreaming  bool   `json:"isStreaming"`
	IsCompacting bool   `json:"isCompacting"` // compact runs (isStreaming is then false, as in pi)
	ReadOnly     bool   `json:"readOnly"`
}

// State reports the model, the session and whether a prompt runs; it is
// served while a prompt runs.
func (e *Engine) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := State{Cwd: e.cfg.Cwd, MessageCount: e.messages, SessionFile: e.ref(), IsStreaming: e.running && !e.compacting, IsCompacting: e.compacting, ReadOnly: e.follow != ""}
	if e.ag != nil {
		m := e.ag.Current().Model
		st.Model, st.Provider = m.ID, m.Provider
	}
	if !e.running {
		st.SessionID, st.SessionName = e.log.Header().ID, e.log.SessionName()
	}
	return st
}

// view runs f on the session's log when no prompt is running (a follower's
// log is read again first, so it sees what the writer appended since).
func (e *Engine) view(f func(l *session.Log) error) error {
	if err := e.idle(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	if e.follow != "" {
		l, err := e.cfg.Store.Read(e.follow)
		if err != nil {
			return err
		}
		e.log = l
	}
	return f(e.log)
}

// change runs f on the session's log when it may be written. What a client
// asked for is written at once, even to a session that has no message yet
// (which otherwise holds entries back until its first one).
func (e *Engine) change(f func(l *session.Log) error) error {
	if err := e.writable(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	if err := f(e.log); err != nil {
		return err
	}
	if e.log.Len() == 0 {
		return nil
	}
	return e.sess.Flush()
}

// Messages returns the active branch's context messages (pi's objects).
func (e *Engine) Messages() ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := e.view(func(l *session.Log) error {
		ms := l.Context().Messages
		if len(ms) > 0 {
			out = make([]json.RawMessage, len(ms))
		}
		for i, m := range ms {
			out[i] = json.RawMessage(m.Raw)
		}
		return nil
	})
	return out, err
}

// Fitted returns the messages the model would be sent: the active cursor's
// context at its resolutions (pins, outlines, summaries), as pi's objects.
func (e *Engine) Fitted() ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := e.view(func(l *session.Log) error {
		ctx, stamps := l.Cursor("").ContextWithResolutions()
		out = make([]json.RawMessage, 0, len(ctx.Messages)) // the results closing unanswered calls may add a few
		if window.Stream(ctx, stamps, func(m session.ContextMessage, _ *session.MessageData) bool {
			out = append(out, m.Raw)
			return true
		}) {
			return nil // nothing to fit: each message read once
		}
		_, err := window.BuildEach(ctx, stamps, window.Options{}, func(m window.Message) { out = append(out, m.Raw) })
		return err
	})
	return out, err
}

// Entries returns the entries appended after the entry since ("" for all),
// in file order, and the active leaf.
func (e *Engine) Entries(since string) ([]json.RawMessage, string, error) {
	var (
		out  []json.RawMessage
		leaf string
	)
	err := e.view(func(l *session.Log) error {
		es := l.Entries()
		start := 0
		if since != "" {
			start = -1
			for i, en := range es {
				if en.ID == since {
					start = i + 1
					break
				}
			}
			if start < 0 {
				return badParams("since", "no entry %q in this session", since)
			}
		}
		for _, en := range es[start:] {
			out = append(out, json.RawMessage(en.Raw()))
		}
		if lf := l.Leaf(); lf != nil {
			leaf = lf.ID
		}
		return nil
	})
	return out, leaf, err
}

// Compact summarizes the older part of the active branch now (instructions:
// what the summary should focus on, "" for none) and returns the compaction
// entry. started, if not nil, is called once it runs (abort then reaches it).
func (e *Engine) Compact(ctx context.Context, instructions string, started func()) (*session.Entry, error) {
	if err := e.writable(); err != nil {
		return nil, err
	}
	if e.ag == nil {
		e.mu.Unlock()
		return nil, &Error{Kind: Internal, What: "model", Msg: fmt.Sprintf("no model to summarize with: %v", e.agentErr)}
	}
	ctx, cancel := context.WithCancel(ctx)
	e.running, e.cancel, e.aborted, e.compacting = true, cancel, false, true
	a := e.ag
	e.mu.Unlock()
	if started != nil {
		started()
	}
	err := a.Compact(ctx, instructions)
	cancel()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped()
	if err != nil {
		return nil, err
	}
	return e.log.Leaf(), nil
}

// ForkSession starts a new session, and makes it the engine's, from the
// branch that ends at the parent of the user message entryID (at: at the
// entry itself). It returns the text of that user message.
func (e *Engine) ForkSession(entryID string, at bool) (string, error) {
	if err := e.writable(); err != nil {
		return "", err
	}
	defer e.mu.Unlock()
	l := e.log
	if l.Entry(entryID) == nil {
		return "", badParams("entryId", "Entry not found: %s", entryID)
	}
	if !at {
		s, text, err := store.ForkBefore(e.cfg.Store, e.cfg.Fork, e.ref(), l, entryID, e.cfg.Cwd, e.cfg.Where)
		if errors.Is(err, store.ErrNotUserMessage) {
			return "", badParams("entryId", "Invalid entry ID for forking: %s is not a user message", entryID)
		}
		if err != nil {
			return "", err
		}
		return text, e.attach(s)
	}
	s, err := e.cfg.Fork(e.ref(), l, entryID)
	if err != nil {
		return "", err
	}
	if err := s.Flush(); err != nil {
		_ = s.Close()
		return "", err
	}
	return "", e.attach(s)
}

// ForkMessage is a user message a session can be forked at.
type ForkMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkMessages lists the user messages of every branch, in file order (as
// pi's getUserMessagesForForking does).
func (e *Engine) ForkMessages() ([]ForkMessage, error) {
	out := []ForkMessage{}
	err := e.view(func(l *session.Log) error {
		for _, en := range l.Entries() {
			if en.Role() == session.RoleUser {
				out = append(out, ForkMessage{EntryID: en.ID, Text: store.MessageText(en)})
			}
		}
		return nil
	})
	return out, err
}

// SetModel switches the model the next prompt uses and records it. While a
// prompt runs the running prompt's next request uses it (as pi's), and the
// model_change entry is written then.
func (e *Engine) SetModel(model string) (agent.Model, error) {
	if model == "" {
		return agent.Model{}, badParams("model", "give the model")
	}
	e.mu.Lock()
	if e.running && e.ag != nil {
		defer e.mu.Unlock()
		a, err := e.cfg.NewAgent(model)
		if err != nil {
			return agent.Model{}, badParams("model", "%v", err)
		}
		e.ag.Apply(agent.Change{Provider: a.Provider, Model: &a.Model})
		e.model = model
		return a.Model, nil
	}
	e.mu.Unlock()
	var out agent.Model
	err := e.change(func(l *session.Log) error {
		a, err := e.cfg.NewAgent(model)
		if err != nil {
			return badParams("model", "%v", err)
		}
		e.setup(a)
		if l.Len() > 0 {
			if err := a.Prepare(); err != nil {
				return err
			}
		}
		e.ag, e.agentErr, e.model, out = a, nil, model, a.Model
		return nil
	})
	return out, err
}

// Model is the current agent's model.
func (e *Engine) Model() agent.Model {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ag == nil {
		return agent.Model{}
	}
	return e.ag.Current().Model
}

// ModelInfo is a model of the configuration: its name, its provider, and why
// it cannot be used (no key, an unknown provider) when it cannot.
type ModelInfo struct {
	ID, Provider string
	Err          error
}

// Models lists the configuration's models with their providers (building
// each model's agent, which contacts nothing).
func (e *Engine) Models() []ModelInfo {
	if e.cfg.Models == nil {
		return nil
	}
	var out []ModelInfo
	for _, name := range e.cfg.Models() {
		m := ModelInfo{ID: name}
		a, err := e.cfg.NewAgent(name)
		if err != nil {
			m.Err = err
		} else {
			m.Provider = a.Model.Provider
		}
		out = append(out, m)
	}
	return out
}

// contextUse is how full the model's window is.
type contextUse struct{ used, window, reserve int }

func (u contextUse) percent() int {
	if u.window <= 0 {
		return 0
	}
	return u.used * 100 / u.window
}

// statsOptions are the window and reserve the session's statistics are
// measured against (the model's, as 'arbor stats --window --reserve' would
// be given them), and the tokens of the system prompt and tool schemas.
func (e *Engine) statsOptions() (o window.StatsOptions, system, tools int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ag == nil {
		return o, 0, 0
	}
	o.Window, o.Reserve = e.ag.Model.Window, e.ag.CompactionSettings().ReserveTokens
	w := o.Window
	if w <= 0 {
		w = window.DefaultWindow // Measure's, as arbor stats'
	}
	if o.Reserve >= w {
		o.Reserve = w / 4 // as arbor stats: the reserve does not fit a small window
	}
	system, tools = e.ag.Overhead()
	return o, system, tools
}

// use estimates the context's tokens against the current model's window
// (pi's estimateContextTokens); e.mu is held.
func (e *Engine) use(c session.Context) contextUse {
	u := contextUse{used: compaction.EstimateContext(c.Messages).Tokens}
	if e.ag != nil {
		u.window, u.reserve = e.ag.Model.Window, e.ag.CompactionSettings().ReserveTokens
	}
	return u
}

// checkEntry fails with BadParams when id is not an entry of l.
func checkEntry(l *session.Log, what, id string) error {
	if id == "" {
		return badParams(what, "give %s (an entry id)", what)
	}
	if l.Entry(id) == nil {
		return badParams(what, "no entry %q in this session (getEntries lists them)", id)
	}
	return nil
}

// BranchTo moves the active leaf to entry id ("" for before the first entry),
// with an optional summary of the branch left behind.
func (e *Engine) BranchTo(id, summary string) (string, error) {
	var leaf string
	err := e.change(func(l *session.Log) error {
		if id == "" {
			if err := l.ResetLeaf(); err != nil {
				return err
			}
		} else {
			if err := checkEntry(l, "entryId", id); err != nil {
				return err
			}
			if summary != "" {
				en, err := l.BranchWithSummary(id, summary, nil, false)
				if err != nil {
					return err
				}
				leaf = en.ID
			} else if err := l.BranchTo(id); err != nil {
				return err
			}
		}
		if lf := l.Leaf(); lf != nil {
			leaf = lf.ID
		}
		e.messages = len(l.Context().Messages)
		return nil
	})
	return leaf, err
}

// Label sets (or with "" clears) the label of entry id.
func (e *Engine) Label(id, label string) error {
	return e.change(func(l *session.Log) error {
		if err := checkEntry(l, "entryId", id); err != nil {
			return err
		}
		_, err := l.SetLabel(id, label)
		return err
	})
}

// SetSessionName names the session.
// A session with no message yet is not written for its name (as pi, which
// writes nothing before the first reply): the name goes to the file with
// the first prompt, and is dropped with the session if none comes.
func (e *Engine) SetSessionName(name string) error {
	if strings.TrimSpace(name) == "" {
		return badParams("name", "Session name cannot be empty")
	}
	if !utf8.ValidString(name) {
		return badParams("name", "the session name is not valid UTF-8")
	}
	if err := e.writable(); err != nil {
		return err
	}
	defer e.mu.Unlock()
	if _, err := e.log.SetSessionName(name); err != nil {
		return err
	}
	if !jsonl.HasConversation(e.log.Entries()) {
		return nil
	}
	return e.sess.Flush()
}

// Cursors lists the session's cursors.
func (e *Engine) Cursors() ([]session.CursorInfo, error) {
	var out []session.CursorInfo
	err := e.view(func(l *session.Log) error {
		out = l.Cursors()
		return nil
	})
	return out, err
}

// NewCursor starts a new cursor at the active leaf (the active cursor does not
// change) and returns its id.
func (e *Engine) NewCursor(name string) (string, error) {
	var id string
	err := e.change(func(l *session.Log) error {
		c, err := l.NewCursor(name)
		if err == nil {
			id = c.ID()
		}
		return err
	})
	return id, err
}

// SwitchCursor makes the cursor id (or name) the active one.
func (e *Engine) SwitchCursor(id string) error {
	return e.change(func(l *session.Log) error {
		if err := l.Switch(id); id == "" || errors.Is(err, session.ErrNoCursor) {
			return badParams("cursorId", "no cursor %q in this session (listBranches names them)", id)
		} else if err != nil {
			return err
		}
		e.messages = len(l.Context().Messages)
		return nil
	})
}

// Tree returns the session's tree (pi's getTree nodes; session.WriteTreeJSON
// writes them at any depth) and the active leaf.
func (e *Engine) Tree() ([]*session.TreeNode, string, error) {
	var (
		out  []*session.TreeNode
		leaf string
	)
	err := e.view(func(l *session.Log) error {
		out = l.Tree()
		if lf := l.Leaf(); lf != nil {
			leaf = lf.ID
		}
		return nil
	})
	return out, leaf, err
}

// List returns the sessions in the engine's scope, newest first.
func (e *Engine) List() ([]catalog.Info, error) {
	return e.cfg.Store.List(e.cfg.Scope, catalog.ListOptions{})
}

// errorsAs is errors.As for the Engine's error.
func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Resolve sets how entry id reaches the model on the active cursor: "pin"
// (always in full), "unpin" (back to the default), "outline" or "summarize"
// (text replaces it in the context).
func (e *Engine) Resolve(id, level, text string) (string, error) {
	var out string
	err := e.change(func(l *session.Log) error {
		if err := checkEntry(l, "entryId", id); err != nil {
			return err
		}
		en := l.Entry(id)
		want := map[string]session.Level{"pin": session.Pinned, "unpin": session.DefaultLevel(en), "outline": session.Outlined, "summarize": session.Summarized}[level]
		if want != "" {
			if err := session.Resolvable(en, want); err != nil {
				return badParams("entryId", "%s %s: %v", level, id, err)
			}
		}
		c := l.Cursor("")
		var err error
		switch level {
		case "pin":
			err = c.Pin(id)
		case "unpin":
			err = c.Unpin(id)
		case "outline", "summarize":
			if strings.TrimSpace(text) == "" {
				return badParams("text", "give the text that stands for entry %s", id)
			}
			if level == "outline" {
				err = c.Outline(id, text)
			} else {
				err = c.Summarize(id, text)
			}
		default:
			return badParams("level", "level %q: want pin, unpin, outline or summarize", level)
		}
		if err != nil {
			return badParams("entryId", "%s %s: %v", level, id, err)
		}
		r, _ := c.Resolution(id)
		out = string(r.Level)
		e.messages = len(l.Context().Messages)
		return nil
	})
	return out, err
}

// CompactUndo moves the active leaf back to before the last compaction on its
// branch (nothing is deleted).
func (e *Engine) CompactUndo() (compaction.Undone, error) {
	var u compaction.Undone
	err := e.change(func(l *session.Log) error {
		var err error
		u, err = compaction.Undo(l.Cursor(""))
		if errors.Is(err, compaction.ErrNoCompaction) {
			return badParams("session", "nothing to undo: no compaction on the current branch")
		}
		e.messages = len(l.Context().Messages)
		return err
	})
	return u, err
}

// RenameCursor names the cursor id ("" clears the name).
func (e *Engine) RenameCursor(id, name string) error {
	return e.change(func(l *session.Log) error {
		err := l.Cursor(id).Rename(name)
		if id == "" || errors.Is(err, session.ErrNoCursor) {
			return badParams("cursorId", "no cursor %q in this session (listBranches names them)", id)
		}
		return err
	})
}

// Search finds the entries of the sessions in scope that match q (pi's
// session picker syntax; re:<pattern> for a regular expression).
func (e *Engine) Search(q string, limit int) ([]catalog.Hit, error) {
	query, err := catalog.ParseQuery(q)
	if err != nil {
		return nil, badParams("query", "%v", err)
	}
	return e.cfg.Store.Search(e.cfg.Scope, query, catalog.SearchOptions{Limit: limit})
}

// ExportHTML writes the session as one HTML page to the new file out ("" for
// the default name in the working folder) and returns its name.
func (e *Engine) ExportHTML(out string) (string, error) {
	if e.cfg.Export == nil {
		return "", &Error{Kind: Internal, What: "export", Msg: "this server has no HTML exporter"}
	}
	if out != "" {
		var err error
		if out, err = e.inside("outputPath", out); err != nil {
			return "", err
		}
	}
	var path string
	err := e.view(func(l *session.Log) error {
		if l.Len() == 0 {
			return badParams("session", "the session has no entries yet: nothing to export")
		}
		var err error
		path, err = e.cfg.Export(l, e.ref(), out)
		return err
	})
	return path, err
}

// files is the catalog of the file store; rm, restore and fsck work on
// session files only.
func (e *Engine) files(what string) (*catalog.Catalog, error) {
	f, ok := e.cfg.Store.(*store.Files)
	if !ok {
		return nil, &Error{Kind: BadParams, What: "store", Msg: what + " works on session files; it does not apply to a database store"}
	}
	return f.Catalog(), nil
}

func (e *Engine) resolve(arg string) (string, error) {
	if arg == "" {
		return "", badParams("path", "give the session (path, id or name)")
	}
	ref, err := e.cfg.Store.Resolve(arg, e.cfg.Scope)
	if err != nil {
		return "", badParams("path", "no session %q: %v (listSessions names them)", arg, err)
	}
	if _, err := e.inside("path", ref); err != nil {
		return "", err
	}
	return ref, nil
}

// roots are the folders whose files a request may name: the project, the
// sessions folders and those the server was started to allow.
func (e *Engine) roots() []string {
	rs := []string{e.cfg.Cwd, e.cfg.Where, e.cfg.Scope.Dir, catalog.SessionsRoot(), catalog.PiSessionsRoot()}
	var out []string
	for _, r := range append(rs, e.cfg.Allow...) {
		if r == "" {
			continue
		}
		if abs, err := filepath.Abs(r); err == nil {
			r = abs
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		out = append(out, r)
	}
	return out
}

// inside returns the file path names (relative to the project) when it is
// in one of the engine's roots once its symbolic links are resolved (the
// file itself need not exist), and a BadParams error for field what
// otherwise. A database store's refs are not paths: they pass.
func (e *Engine) inside(what, path string) (string, error) {
	if _, ok := e.cfg.Store.(*store.Files); !ok && what == "path" {
		return path, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.cfg.Cwd, path)
	}
	path = filepath.Clean(path)
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		real = filepath.Join(d, filepath.Base(path))
	}
	for _, root := range e.roots() {
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return path, nil
		}
	}
	return "", badParams(what, "%s is outside the project and the sessions folders: this server was not started to allow it (--allow-path)", path)
}

// sessionFile checks that ref, opened for a request, is a session file in
// the engine's folders: a regular file whose first line is a session's, so
// an empty file or any other (/proc/self/environ) is never made one.
func (e *Engine) sessionFile(ref string) error {
	if _, ok := e.cfg.Store.(*store.Files); !ok {
		return nil
	}
	fi, err := os.Stat(ref)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the store says so, in its words, and creates nothing
	}
	if err != nil {
		return err
	}
	if _, err := e.inside("path", ref); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return badParams("path", "%s is not a session file (empty, or not a regular file): not opened", ref)
	}
	f, err := os.Open(ref)
	if err != nil {
		return err
	}
	defer f.Close()
	line, err := readLine(bufio.NewReader(f), 1<<20)
	if err != nil && !errors.Is(err, io.EOF) {
		if _, ok := errors.AsType[*tooLong](err); !ok {
			return err
		}
	}
	if _, ok := session.ParseHeader(line); ok {
		return nil
	}
	if _, ok := session.ParseLine(line); ok {
		return nil // a version 1 session, which has no header
	}
	return badParams("path", "%s is not a session file (its first line is not a session header): not opened", ref)
}

// Remove moves the session arg, with its sidecar files, to the trash
// (Restore brings it back). The session being served cannot be removed.
func (e *Engine) Remove(arg string) (catalog.Trashed, error) {
	cat, err := e.files("rm")
	if err != nil {
		return catalog.Trashed{}, err
	}
	ref, err := e.resolve(arg)
	if err != nil {
		return catalog.Trashed{}, err
	}
	if ref == e.Ref() {
		return catalog.Trashed{}, badParams("path", "%s is the session this server has open: newSession or resumeSession another first", ref)
	}
	return cat.Remove(ref)
}

// Restore puts a removed session back where it was; it never overwrites a file.
func (e *Engine) Restore(arg string) (catalog.Trashed, error) {
	cat, err := e.files("restore")
	if err != nil {
		return catalog.Trashed{}, err
	}
	if arg == "" {
		return catalog.Trashed{}, badParams("path", "give the removed session (id, name or its path)")
	}
	t, err := cat.Restore(arg)
	if errors.Is(err, catalog.ErrNotFound) {
		return t, badParams("path", "%v", err)
	}
	return t, err
}

// FsckResult is what loading a session file found wrong with it.
type FsckResult struct {
	OK   bool   `json:"ok"`
	Path string `json:"path"`
	session.Report
}

// Fsck reads the session arg ("" for the one being served) and reports the
// damage it found; it changes nothing.
func (e *Engine) Fsck(arg string) (FsckResult, error) {
	if _, err := e.files("fsck"); err != nil {
		return FsckResult{}, err
	}
	ref := e.Ref()
	if arg != "" {
		var err error
		if ref, err = e.resolve(arg); err != nil {
			return FsckResult{}, err
		}
	}
	l, err := e.cfg.Store.Read(ref)
	if err != nil {
		return FsckResult{}, missing(err)
	}
	r := l.Report()
	return FsckResult{OK: r.Clean(), Path: ref, Report: r}, nil
}

// validJSON makes an encoded message valid UTF-8, as JSON text must be: the
// raw entries and messages both protocols pass on are the session file's
// bytes, and a file (or a client's id) may hold bytes that are not UTF-8.
// Outside its strings JSON is ASCII, so each such byte is in a string and
// becomes U+FFFD there, as a UTF-8 decoder reading the line would make it.
func validJSON(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

// validUTF8 is validJSON for a stream: it passes writes on to w with each run
// of bytes that are not UTF-8 made U+FFFD, holding back a character a write
// cut short until the next write completes it.
type validUTF8 struct {
	w    io.Writer
	held []byte
}

func (v *validUTF8) Write(b []byte) (int, error) {
	n := len(b)
	if len(v.held) > 0 {
		b = append(v.held, b...)
		v.held = nil
	}
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	if cut < len(b) {
		v.held = append([]byte(nil), b[cut:]...)
	}
	if _, err := v.w.Write(validJSON(b[:cut])); err != nil {
		return 0, err
	}
	return n, nil
}

// missing makes a session that does not exist a BadParams error naming it.
func missing(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, catalog.ErrNotFound) {
		return badParams("path", "%v", err)
	}
	return err
}

// TreeRow is one entry a tree filter keeps, in drawing order.
type TreeRow struct {
	EntryID string `json:"entryId"`
	Type    string `json:"type"`
	Prefix  string `json:"prefix"` // the box-drawing that hangs it from its visible parent
	Text    string `json:"text"`   // what it says, as 'arbor tree' writes it
	OnPath  bool   `json:"onPath"` // on the active path
	Kids    int    `json:"children"`
}

// FilteredTree is the tree reduced by one of pi's tree filters (default,
// no-tools, user, labeled, all), as 'arbor tree' and the browser draw it.
func (e *Engine) FilteredTree(filter string) ([]TreeRow, int, int, error) {
	f, err := treeview.ParseFilter(filter)
	if err != nil {
		return nil, 0, 0, badParams("filter", "%v", err)
	}
	rows := []TreeRow{}
	var shown, total int
	err = e.view(func(l *session.Log) error {
		v := treeview.New(l.Tree(), l, l.Leaf(), f, 0)
		for _, r := range v.Rows(nil) {
			var text strings.Builder
			for _, s := range v.Says(r) {
				text.WriteString(s.Text)
			}
			rows = append(rows, TreeRow{EntryID: r.Node.Entry.ID, Type: r.Node.Entry.Type, Prefix: r.Prefix,
				Text: text.String(), OnPath: v.OnPath(r.Node.Entry), Kids: r.Kids})
		}
		shown, total = v.Shown, v.Total
		return nil
	})
	return rows, shown, total, err
}

// Thinking is the thinking level the next request uses.
func (e *Engine) Thinking() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.thinking()
}

func (e *Engine) thinking() string {
	switch {
	case e.ag != nil:
		return e.ag.Current().Thinking
	case e.settings.thinking != "":
		return e.settings.thinking
	}
	return "off"
}

// SetThinking sets the thinking level; a level arbor does not know becomes
// "off" (pi's clamp when a model's levels do not have it). A change is
// recorded as a thinking_level_change entry and announced with a
// thinking_level_changed event. It returns the level set.
func (e *Engine) SetThinking(level string) (string, error) {
	if !slices.Contains(agent.ThinkingLevels, level) {
		level = agent.ThinkingLevels[0]
	}
	changed := false
	e.mu.Lock()
	if e.running && e.ag != nil {
		// The running prompt's next request uses it; the run records it.
		changed = level != e.thinking()
		e.settings.thinking = level
		e.ag.Apply(agent.Change{Thinking: &level})
		e.mu.Unlock()
		if changed && e.emit != nil {
			e.emit(agent.Event{Type: "thinking_level_changed", Level: level})
		}
		return level, nil
	}
	e.mu.Unlock()
	err := e.change(func(l *session.Log) error {
		if level == e.thinking() {
			return nil
		}
		if _, err := l.AppendThinkingLevelChange(level); err != nil {
			return err
		}
		e.settings.thinking, changed = level, true
		if e.ag != nil {
			e.ag.Thinking = level
		}
		return nil
	})
	if changed && e.emit != nil {
		e.emit(agent.Event{Type: "thinking_level_changed", Level: level})
	}
	return level, err
}

// CycleThinking moves to the next thinking level (after the last, the first).
func (e *Engine) CycleThinking() (string, error) {
	cur := slices.Index(agent.ThinkingLevels, e.Thinking())
	return e.SetThinking(agent.ThinkingLevels[(cur+1)%len(agent.ThinkingLevels)])
}

// CycleModel switches to the model after the current one in the
// configuration's list (the first when the current is not in it); with fewer
// than two models to cycle through it returns nil, as pi does.
func (e *Engine) CycleModel() (*agent.Model, error) {
	var models []string
	if e.cfg.Models != nil {
		models = e.cfg.Models()
	}
	cur := slices.Index(models, e.Model().ID)
	switch {
	case len(models) == 0, len(models) == 1 && cur == 0:
		return nil, nil
	}
	m, err := e.SetModel(models[(cur+1)%len(models)])
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// AutoCompaction says whether the agent compacts on its own.
func (e *Engine) AutoCompaction() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.settings.noCompact
}

// SetAutoCompaction turns automatic compaction on or off for this engine's
// agents (compact still works).
func (e *Engine) SetAutoCompaction(on bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settings.noCompact = !on
	if e.ag != nil {
		e.ag.Apply(agent.Change{AutoCompaction: &on}) // a running prompt's next turn
	}
	return nil
}

// SetAutoRetry turns the provider's retries of 429, 5xx and lost
// connections on or off.
func (e *Engine) SetAutoRetry(on bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.settings.noRetry = !on
	if e.ag != nil {
		off := !on
		e.ag.Apply(agent.Change{NoRetry: &off}) // a running prompt's next request
	}
	return nil
}

// AbortRetry stops the provider client's retries of the running prompt's
// request while it waits before one; the prompt then ends with the last
// failure. It reports whether a retry was waiting.
func (e *Engine) AbortRetry() bool {
	e.mu.Lock()
	a := e.ag
	e.mu.Unlock()
	return a != nil && a.AbortRetry()
}

// Bash runs a person's own command in the project folder (pi's "!command"):
// onChunk receives its output as it comes; the result is recorded as a
// bashExecution message, at once or, while a prompt runs, when it ends.
// excludeFromContext keeps it from the model. AbortBash kills it.
func (e *Engine) Bash(command string, excludeFromContext bool, onChunk func(string)) (agent.BashResult, error) {
	if strings.TrimSpace(command) == "" {
		return agent.BashResult{}, badParams("command", "the command is empty")
	}
	e.mu.Lock()
	if e.follow != "" {
		e.mu.Unlock()
		return agent.BashResult{}, &Error{Kind: BadParams, What: "session", Msg: "this session was opened to follow (readOnly): resume it without readOnly to run commands in it"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	key := &cancel
	e.bash[key] = true
	e.mu.Unlock()
	r, err := agent.RunUserBash(ctx, e.cfg.Cwd, command, onChunk)
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.bash, key)
	cancel()
	if err != nil {
		return r, err
	}
	recorded := command
	if e.ag != nil && e.ag.Redactor != nil {
		// What is kept and sent to the model is redacted as a tool's output
		// is; the client saw the output live (onChunk), as on its own terminal.
		r.Output, _ = e.ag.Redactor.Redact(r.Output)
		recorded, _ = e.ag.Redactor.Redact(command)
	}
	m := r.Record(recorded, excludeFromContext)
	m.Timestamp = time.Now().UnixMilli()
	if e.running {
		e.bashLog = append(e.bashLog, m)
		return r, nil
	}
	return r, e.appendBash(m)
}

// appendBash records a bashExecution message; e.mu is held.
func (e *Engine) appendBash(m session.BashExecution) error {
	if e.sess == nil || e.follow != "" {
		return &Error{Kind: Internal, What: "session", Msg: "the session was closed before the command ended: its output is not recorded"}
	}
	if _, err := e.log.AppendBashExecution(m); err != nil {
		return err
	}
	e.messages = len(e.log.Context().Messages)
	return e.sess.Flush()
}

// AbortBash kills the person's commands that run (their whole process
// groups); it reports whether there was one.
func (e *Engine) AbortBash() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for c := range e.bash {
		(*c)()
	}
	return len(e.bash) > 0
}

// contextAfter is the context's size as a model response reports it
// (pi's calculateContextTokens) against the current model's window; it is
// called on the agent's goroutine while a prompt runs.
func (e *Engine) contextAfter(u session.Usage) UsageContext {
	c := contextUse{used: compaction.ContextTokens(u)}
	if e.ag != nil {
		c.window, c.reserve = e.ag.Model.Window, e.ag.CompactionSettings().ReserveTokens
	}
	return UsageContext{EstimatedUsed: c.used, ContextWindow: c.window, CompletionReserve: c.reserve, UtilizationPercent: c.percent()}
}
