package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/arborlog/arbor/checkpoint"
	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/store"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/shell"
	"github.com/arborlog/arbor/redact"
	"github.com/arborlog/arbor/rpc"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/window"
	"github.com/arborlog/arbor/window/blob"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// agentOptions are the root command's flags: running the agent.
type agentOptions struct {
	maxRequest int      // --max-request-bytes (serve, --mode rpc)
	allowPaths []string // --allow-path (serve, --mode rpc)
	export     string   // --export <session>: export it instead
	io         *IO
	g          *Global

	print     bool
	mode      string
	cont      bool
	resume    bool
	session   string
	sessionID string
	noSession bool
	name      string
	fork      string

	provider, baseURL, model, apiKeyEnv, thinking string
	contextWindow, reserve                        int
	systemPrompt, appendSystemPrompt              string
	tools                                         string

	args []string

	models       func() []string // the configuration's model names, once factory has run
	shareCommand string          // the configuration's shareCommand, once factory has run
}

const agentHelp = `

Running the agent:
  arbor                      on a terminal: the chat (streamed replies, an editor
                             with history, slash commands: type / or press ?)
  arbor -r                   pick the session to continue first
  arbor -p "prompt"          run the agent on a prompt and print its answer
  echo prompt | arbor -p     the prompt on stdin
  --mode json                print pi's JSON stream instead: the session header, then
                             one event per line (docs/print.md)
  arbor --mode rpc           pi's RPC mode: commands as JSON lines on stdin, responses
                             and events on stdout (arbor serve speaks JSON-RPC 2.0)

A new session is written to $ARBOR_DIR/sessions/<folder>/ when the first
prompt is sent; -c continues the latest one of this folder, --session opens
one by path, id or name, --fork copies one into a new session here, and
--no-session keeps everything in memory.

The model comes from --model, ARBOR_MODEL or $ARBOR_DIR/config.json; the
endpoint from --base-url or ARBOR_MODEL_BASE_URL; the key from the variable
--api-key-env names, else ARBOR_API_KEY (or OPENAI_API_KEY / ANTHROPIC_API_KEY).
For a local OpenAI-compatible server:

  ARBOR_MODEL_BASE_URL=http://localhost:8080/v1 arbor -p "hello" --model qwen3

The configuration file ($ARBOR_DIR/config.json) holds "provider", "model",
"thinking", "tools", "systemPrompt", "bashTimeoutSeconds", "maxResultBytes",
"providers" {name: {type, baseUrl, apiKeyEnv, maxRetries, timeoutSeconds,
idleTimeoutSeconds}}, "models" {name: {provider, id, contextWindow, reserve,
maxTokens, prices {input, output, cacheRead, cacheWrite} per million tokens}},
"redact" {patterns: [Go regular expressions]}, "compaction" {enabled,
reserveTokens, keepRecentTokens}, "checkpoints" {enabled, maxFileBytes} (when
enabled, print mode records the working folder in $ARBOR_DIR/checkpoints as each message is
sent and before each bash, edit and write; arbor rewind puts it back) and
"shareCommand", the shell command the
chat's /share gives the exported HTML page to ({file} is its path, else the
page is on stdin; e.g. "gh gist create {file}"), whose output (a URL) is shown.

Exit status: 0 done, 1 a provider or tool failure stopped the run (or Ctrl-C),
2 bad usage.`

// addAgentFlags puts the agent's flags on the root command.
func addAgentFlags(root *cobra.Command, ios *IO, g *Global) {
	o := &agentOptions{io: ios, g: g}
	f := root.Flags()
	f.BoolVarP(&o.print, "print", "p", false, "run the prompt (arguments or stdin) and print the answer")
	f.StringVar(&o.mode, "mode", "text", "print mode output: text or json (one event per line); rpc speaks pi's RPC protocol on stdin/stdout")
	rpcFlags(f, o)
	f.BoolVarP(&o.cont, "continue", "c", false, "continue the most recent session of this folder")
	f.BoolVarP(&o.resume, "resume", "r", false, "pick the session to continue in the session picker, then chat (on a terminal)")
	f.StringVar(&o.session, "session", "", "open this session (path, id or name); a path that does not exist is created")
	f.StringVar(&o.sessionID, "session-id", "", "open the session with this exact id, or create one with it")
	f.BoolVar(&o.noSession, "no-session", false, "keep the session in memory: nothing is written")
	f.BoolVar(&o.noSession, "ephemeral", false, "the same as --no-session")
	f.StringVarP(&o.name, "name", "n", "", "name the session")
	f.StringVar(&o.fork, "fork", "", "start a new session in this folder from a copy of this one (path, id or name)")
	f.StringVar(&o.export, "export", "", "export this session to HTML instead of running the agent: arbor --export <session> [out] (as 'arbor export')")
	modelFlags(f, o)
	root.Args = cobra.ArbitraryArgs
	root.Long += agentHelp
	root.RunE = func(c *cobra.Command, args []string) error {
		if o.export != "" {
			// pi's --export <session> [out]: the export command with its defaults.
			if len(args) > 1 {
				return usagef("--export takes the session and at most one output file, not %d arguments", len(args)+1)
			}
			e := &exportOptions{io: ios, g: g, arg: o.export, format: "html"}
			if len(args) == 1 {
				e.out = args[0]
			}
			return runExport(e, export.FormatHTML)
		}
		o.args = args
		return runAgent(c, o)
	}
}

// modelFlags are the flags that choose the model and tools, for -p, --mode rpc and serve.
func modelFlags(f *pflag.FlagSet, o *agentOptions) {
	f.StringVar(&o.provider, "provider", "", "openai or anthropic (or a provider named in the configuration)")
	f.StringVar(&o.baseURL, "base-url", "", "the provider's endpoint (default: "+"$ARBOR_MODEL_BASE_URL)")
	f.StringVar(&o.model, "model", "", "the model (default: $ARBOR_MODEL)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "the environment variable that holds the API key (default: ARBOR_API_KEY)")
	f.IntVar(&o.contextWindow, "context-window", 0, "the model's context window in tokens (enables budgeting and automatic compaction)")
	f.IntVar(&o.reserve, "reserve", 0, "tokens kept free for the reply (default 16384)")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "replace the system prompt")
	f.StringVar(&o.appendSystemPrompt, "append-system-prompt", "", "add to the system prompt")
	f.StringVar(&o.thinking, "thinking", "", "thinking level: off, minimal, low, medium, high, xhigh")
	f.StringVar(&o.tools, "tools", "", "comma-separated tools: "+strings.Join(agent.ToolNames, ", ")+" (default: "+strings.Join(agent.DefaultTools, ",")+")")
}

// exclusive are the flags that choose a session; at most one may be given.
var exclusive = []string{"continue", "resume", "session", "session-id", "no-session", "fork"}

func (o *agentOptions) check(c *cobra.Command) error {
	var set []string
	for _, name := range exclusive {
		changed := c.Flags().Changed(name)
		if name == "no-session" {
			if c.Flags().Changed("ephemeral") && !changed {
				set = append(set, "--ephemeral")
				continue
			}
		}
		if changed {
			set = append(set, "--"+name)
		}
	}
	if len(set) > 1 {
		return usagef("%s and %s cannot be used together", set[0], set[1])
	}
	if o.mode != "text" && o.mode != "json" && o.mode != "rpc" {
		return usagef("--mode must be text, json or rpc, not %q", o.mode)
	}
	if o.sessionID != "" {
		if _, err := uuid.Parse(o.sessionID); err != nil {
			return usagef("--session-id must be a UUID, not %q", o.sessionID)
		}
	}
	if c.Flags().Changed("context-window") && o.contextWindow <= 0 {
		return usagef("--context-window must be a number of tokens above 0, not %d", o.contextWindow)
	}
	if c.Flags().Changed("reserve") && o.reserve <= 0 {
		return usagef("--reserve must be a number of tokens above 0, not %d", o.reserve)
	}
	return nil
}

func stdinIsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func runAgent(c *cobra.Command, o *agentOptions) error {
	if err := o.check(c); err != nil {
		return err
	}
	if o.mode == "rpc" {
		if len(o.args) > 0 || o.print {
			return usagef("--mode rpc takes its prompts as commands on stdin, not -p or arguments")
		}
		if o.noSession || o.resume || o.fork != "" || o.sessionID != "" {
			return usagef("--mode rpc opens a session with --session or --continue (or switch_session); --no-session, --resume, --fork and --session-id are not supported with it")
		}
		cfg, closeStore, err := o.rpcConfig(c)
		if err != nil {
			return err
		}
		defer closeStore()
		cfg.Start = o.session
		if o.cont {
			latest, err := cfg.Store.Latest(cfg.Scope)
			if err != nil && !errors.Is(err, catalog.ErrNotFound) {
				return err
			}
			cfg.Start = latest.Path
		}
		return rpc.Pi(cfg, o.io.In, o.io.Out)
	}
	if !o.print {
		if len(o.args) > 0 {
			return usagef("unknown command %q for \"arbor\" (to run the agent on a prompt: arbor -p %q)", o.args[0], strings.Join(o.args, " "))
		}
		if !stdinIsTerminal(o.io.In) || !o.io.IsTTY() {
			return usagef(`no terminal: run the agent with -p "prompt" (or pipe the prompt into arbor -p)`)
		}
		return runChat(c, o)
	}
	if o.resume {
		return usagef("--resume picks a session interactively, which print mode cannot do; use --continue, or --session <id> (ids from 'arbor ls')")
	}
	prompt := strings.Join(o.args, " ")
	if prompt == "" && !stdinIsTerminal(o.io.In) {
		data, err := io.ReadAll(o.io.In)
		if err != nil {
			return fmt.Errorf("read the prompt from stdin: %w", err)
		}
		prompt = strings.TrimRight(string(data), "\n")
	}
	if strings.TrimSpace(prompt) == "" {
		return usagef(`no prompt: give it as an argument (arbor -p "prompt") or on stdin`)
	}

	mk, err := o.factory(c)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	a, err := mk("")
	if err != nil {
		return err
	}

	s, err := o.openSession(cwd)
	if err != nil {
		return err
	}
	defer s.close()
	a.Log, a.Flush, a.Blobs = s.log, s.flush, s.blobs
	var mu sync.Mutex
	if o.mode == "json" {
		// pi's stream: the session's header, then its events (agent.Event's JSON).
		_ = o.io.JSON(json.RawMessage(s.log.Header().Raw()))
		a.Emit = func(e agent.Event) {
			mu.Lock()
			defer mu.Unlock()
			_ = o.io.JSON(e)
		}
	} else {
		a.Emit = func(e agent.Event) {
			mu.Lock()
			defer mu.Unlock()
			o.report(e)
		}
	}
	if err := a.Prepare(); err != nil {
		return err
	}
	if o.name != "" {
		if _, err := s.log.SetSessionName(o.name); err != nil {
			return err
		}
	}

	ctx, stop := interruptible(context.Background())
	defer stop()
	last, err := a.Run(ctx, prompt)
	aborted := errors.Is(err, agent.ErrAborted)
	if o.mode == "json" {
		mu.Lock()
		if err != nil {
			// pi has no event for a run that failed (it says so on stderr);
			// scripts reading the events get arbor's own line that says so.
			_ = o.io.JSON(agent.ErrorEvent(err, aborted))
		}
		_ = o.io.JSON(agent.SettledEvent(aborted))
		mu.Unlock()
	}
	if aborted {
		if o.mode == "text" && last != nil {
			// What arrived before Ctrl-C is the answer so far.
			o.printReply(last)
		}
		if s.store == nil {
			return errors.New("interrupted; the partial reply was not kept (--no-session)")
		}
		return errors.New("interrupted; the partial reply is kept (continue with arbor -c)")
	}
	if err != nil {
		return err
	}
	if o.mode == "text" && last != nil {
		o.printReply(last)
	}
	return nil
}

// printReply prints a reply's text on stdout, ending with a newline.
func (o *agentOptions) printReply(last *session.Assistant) {
	text := last.Text()
	if text == "" {
		return
	}
	if o.io.IsTTY() {
		text = termtext.Block(text)
	}
	fmt.Fprint(o.io.Out, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(o.io.Out)
	}
}

// report tells on stderr what text print mode would otherwise do silently:
// the waits before retries and the automatic compactions.
func (o *agentOptions) report(e agent.Event) {
	switch e.Type {
	case "auto_retry_start":
		// The event counts retries; a person counts attempts (the first
		// request is attempt 1).
		attempt, max, wait := 1, 1, time.Duration(0)
		if e.Attempt != nil && e.MaxAttempts != nil {
			attempt, max = *e.Attempt+1, *e.MaxAttempts+1
		}
		if e.DelayMs != nil {
			wait = time.Duration(*e.DelayMs) * time.Millisecond
		}
		o.io.Warnf("retrying in %.1f s after %s (attempt %d of %d)", wait.Seconds(), e.ErrorMessage, attempt, max)
	case "compaction_start":
		switch e.Reason {
		case "overflow":
			o.io.Warnf("the request did not fit the model's context window; compacting the session to send it again")
		case "threshold":
			o.io.Warnf("the context is near the model's window; compacting the session first")
		}
	case "compaction_end":
		switch {
		case e.ErrorMessage != "":
			o.io.Warnf("compaction failed: %s", e.ErrorMessage)
		case e.Result != nil:
			var c struct {
				TokensBefore float64 `json:"tokensBefore"`
			}
			_ = json.Unmarshal(e.Result, &c)
			o.io.Warnf("compacted: the older part of the session (%d tokens) is now a summary", int(c.TokensBefore))
		}
	}
}

// factory reads the configuration and returns what builds the agent for a
// model ("" for the one the flags and configuration choose): provider, tools,
// system prompt, redaction. The caller sets its Log and Flush.
func (o *agentOptions) factory(c *cobra.Command) (func(model string) (*agent.Agent, error), error) {
	home := catalog.Home()
	cfgPath := configPath()
	cfg, err := agent.LoadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	toolNames := agent.DefaultTools
	if len(cfg.Tools) > 0 {
		toolNames = cfg.Tools
	}
	if c.Flags().Changed("tools") {
		toolNames = strings.Split(o.tools, ",")
	}
	tools, err := agent.Tools(toolNames)
	if err != nil {
		return nil, usagef("--tools: %v", err)
	}
	red, err := redact.New(cfg.Redact.Patterns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfgPath, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	settings := agent.Settings{Provider: o.provider, BaseURL: o.baseURL, Model: o.model, APIKeyEnv: o.apiKeyEnv,
		Thinking: o.thinking, ContextWindow: o.contextWindow, Reserve: o.reserve, ConfigPath: cfgPath}
	o.shareCommand = cfg.ShareCommand
	o.models = func() []string {
		var names []string
		for name := range cfg.Models {
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	ckOn, ckMax := cfg.CheckpointsEnabled()
	var ckStore *checkpoint.Store
	if ckOn && o.print && o.mode != "rpc" && !o.noSession {
		if ckStore, err = checkpoint.Open(filepath.Join(home, "checkpoints")); err != nil {
			return nil, err
		}
	}
	return func(model string) (*agent.Agent, error) {
		st := settings
		if model != "" {
			st.Model = model
		}
		res, err := cfg.Resolve(st)
		if err != nil {
			return nil, err
		}
		var ck *agent.Checkpoints
		if ckStore != nil {
			ck = &agent.Checkpoints{Store: ckStore, Root: cwd, MaxFileBytes: ckMax,
				Failed: func(err error) { o.io.Warnf("checkpoint not taken: %v", err) }}
		}
		return &agent.Agent{
			Checkpoints: ck,
			Provider:    res.Provider, Model: res.Model, Thinking: res.Thinking,
			System: systemPrompt(o, cfg, tools, cwd), Tools: tools, Redactor: red,
			Blobs:          blob.Store{Dir: filepath.Join(home, "blobs")},
			Env:            &agent.ToolEnv{Cwd: cwd, BashTimeout: time.Duration(cfg.BashTimeoutSeconds * float64(time.Second))},
			MaxResultBytes: cfg.MaxResultBytes, Compaction: cfg.CompactionSettings(),
		}, nil
	}, nil
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM;
// a second one ends the process as usual.
func interruptible(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			signal.Stop(ch)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

const baseSystemPrompt = `You are an expert coding assistant working in the user's project. You help by reading files, running commands, editing code and writing files, using the tools you are given. Be concise; show file paths clearly when you work with files.`

func systemPrompt(o *agentOptions, cfg *agent.Config, tools []agent.Tool, cwd string) string {
	p := o.systemPrompt
	if p == "" {
		p = cfg.SystemPrompt
	}
	if p == "" {
		var names []string
		for _, t := range tools {
			names = append(names, t.Name)
		}
		p = baseSystemPrompt
		if len(names) > 0 {
			p += "\n\nAvailable tools: " + strings.Join(names, ", ") + "."
		}
		p += "\n\nCurrent working directory: " + cwd
	}
	if o.appendSystemPrompt != "" {
		p += "\n\n" + o.appendSystemPrompt
	}
	return p
}

// agentSession is the session a run writes to: a file, a session in the
// database (--store), or memory only (store nil).
type agentSession struct {
	log   *session.Log
	store interface {
		Flush() error
		Close() error
	}
	blobs window.BlobWriter
}

func (s *agentSession) flush() error {
	if s.store == nil {
		return nil
	}
	return s.store.Flush()
}

func (s *agentSession) close() {
	if s.store != nil {
		_ = s.store.Close()
	}
}

// memBlobs keeps full tool outputs in memory for a session that is not written.
type memBlobs map[string][]byte

func (m memBlobs) Put(data []byte) (string, error) {
	ref := blob.Ref(data)
	m[ref] = data
	return ref, nil
}

// openSession chooses the session from the flags (SPEC §10) and says on
// stderr where it is.
func (o *agentOptions) openSession(cwd string) (*agentSession, error) {
	if o.noSession {
		return &agentSession{log: session.New(cwd), blobs: memBlobs{}}, nil
	}
	if db, err := o.g.database(); err != nil || db != nil {
		if err != nil {
			return nil, err
		}
		return o.openInDatabase(db, cwd)
	}
	dir := o.g.SessionDir
	if dir == "" {
		dir = jsonl.Dir(catalog.SessionsRoot(), cwd)
	}
	blobs := blob.Store{Dir: filepath.Join(catalog.Home(), "blobs")}
	scope := catalog.Scope{Dir: o.g.SessionDir, Cwd: cwd}
	var (
		f       *jsonl.Session
		err     error
		resumed bool
	)
	switch {
	case o.cont:
		path, err := jsonl.MostRecent(dir)
		if err != nil {
			return nil, err
		}
		if path == "" && o.g.SessionDir == "" {
			if path, err = o.movedLatest(cwd); err != nil {
				return nil, err
			}
			if path != "" {
				boundHeap(fileSize(path))
				if f, err = jsonl.Open(path); err != nil {
					return nil, err
				}
				return &agentSession{log: f.Log, store: f, blobs: blobs}, nil
			}
		}
		if path == "" {
			o.io.Warnf("no earlier session in %s; starting a new one", dir)
			return o.create(cwd, dir, blobs)
		}
		boundHeap(fileSize(path))
		f, err = jsonl.Open(path)
		if err != nil {
			return nil, err
		}
		resumed = true
	case o.session != "":
		path := o.session
		if !looksLikePathArg(path) {
			if path, err = catalog.Resolve(o.session, scope); err != nil {
				return nil, err
			}
		}
		boundHeap(fileSize(path))
		if f, err = jsonl.Open(path); err != nil {
			return nil, err
		}
		resumed = f.Log.Len() > 0
		if !resumed {
			fmt.Fprintf(o.io.ErrOut, "session: %s (new)\n", termtext.Line(path))
		}
	case o.sessionID != "":
		path, err := catalog.Resolve(o.sessionID, scope)
		if err == nil {
			if l, rerr := jsonl.Read(path); rerr != nil || l.Header().ID != o.sessionID {
				path, err = "", catalog.ErrNotFound
			}
		}
		if errors.Is(err, catalog.ErrNotFound) {
			return o.create(cwd, dir, blobs, jsonl.WithLog(session.WithID(o.sessionID)))
		}
		if err != nil {
			return nil, err
		}
		if f, err = jsonl.Open(path); err != nil {
			return nil, err
		}
		resumed = true
	case o.fork != "":
		src, err := catalog.Resolve(o.fork, scope)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		if f, err = jsonl.ForkFrom(src, cwd, dir); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.io.ErrOut, "session: %s (forked from %s)\n", termtext.Line(f.Path()), termtext.Line(src))
		return &agentSession{log: f.Log, store: f, blobs: blobs}, nil
	default:
		return o.create(cwd, dir, blobs)
	}
	if resumed {
		fmt.Fprintf(o.io.ErrOut, "session: %s\n", termtext.Line(f.Path()))
		o.warnCwd(f.Log.Header().Cwd, cwd)
	}
	return &agentSession{log: f.Log, store: f, blobs: blobs}, nil
}

// openInDatabase chooses the session from the flags in the database store
// (--store postgres://…), as openSession does among files.
func (o *agentOptions) openInDatabase(db *pgstore.Store, cwd string) (*agentSession, error) {
	blobs := blob.Store{Dir: filepath.Join(catalog.Home(), "blobs")}
	scope := catalog.Scope{Cwd: cwd}
	wrap := func(s store.Session, how string) *agentSession {
		fmt.Fprintf(o.io.ErrOut, "session: %s%s\n", termtext.Line(s.Ref()), how)
		return &agentSession{log: s.Log(), store: s, blobs: blobs}
	}
	switch {
	case o.cont:
		latest, err := db.Latest(scope)
		if errors.Is(err, catalog.ErrNotFound) {
			o.io.Warnf("no earlier session for %s in the database; starting a new one", cwd)
			break
		}
		if err != nil {
			return nil, err
		}
		s, err := db.Open(latest.Path, store.Options{})
		if err != nil {
			return nil, err
		}
		o.warnCwd(s.Log().Header().Cwd, cwd)
		return wrap(s, ""), nil
	case o.session != "" || o.sessionID != "":
		arg := o.session
		if arg == "" {
			arg = o.sessionID
		}
		w, err := o.g.openDB(db, arg, store.Options{}, true)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.io.ErrOut, "session: %s\n", termtext.Line(w.Path()))
		if w.Log.Len() > 0 {
			o.warnCwd(w.Log.Header().Cwd, cwd)
		}
		return &agentSession{log: w.Log, store: w, blobs: blobs}, nil
	case o.fork != "":
		ref, err := db.Resolve(o.fork, catalog.Scope{})
		if err != nil {
			return nil, err
		}
		src, err := db.Read(ref)
		if err != nil {
			return nil, err
		}
		s, err := db.Adopt(src.Copy(cwd, session.WithParent(ref)), store.Options{})
		if err != nil {
			return nil, err
		}
		if err := s.Log().ForgetName(); err != nil {
			s.Close()
			return nil, err
		}
		if err := s.Flush(); err != nil {
			s.Close()
			return nil, err
		}
		return wrap(s, " (forked from "+termtext.Line(ref)+")"), nil
	}
	prev, _ := db.List(scope, catalog.ListOptions{})
	s, err := db.Create(cwd, "", store.Options{})
	if err != nil {
		return nil, err
	}
	as := wrap(s, "")
	if len(prev) > 0 {
		fmt.Fprintf(o.io.ErrOut, "  (%d previous session(s) for this project — use arbor -c to resume the latest)\n", len(prev))
	}
	return as, nil
}

// create starts a new session in dir; its file is written with the first prompt.
func (o *agentOptions) create(cwd, dir string, blobs window.BlobWriter, opts ...jsonl.Option) (*agentSession, error) {
	prev := previousSessions(dir, cwd)
	f, err := jsonl.Create(cwd, dir, opts...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.io.ErrOut, "session: %s\n", termtext.Line(f.Path()))
	if prev > 0 {
		fmt.Fprintf(o.io.ErrOut, "  (%d previous session(s) for this project — use arbor -c to resume the latest)\n", prev)
	}
	return &agentSession{log: f.Log, store: f, blobs: blobs}, nil
}

// previousSessions counts the sessions of cwd in dir (folders of different
// projects can share a name, so the header's cwd decides).
func previousSessions(dir, cwd string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		line, err := jsonl.FirstLine(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if h, ok := session.ParseHeader(line); ok && h.Cwd == cwd {
			n++
		}
	}
	return n
}

// warnCwd says when a resumed session was started in another folder.
func (o *agentOptions) warnCwd(recorded, cwd string) {
	if recorded == "" || recorded == cwd {
		return
	}
	if _, err := os.Stat(recorded); errors.Is(err, fs.ErrNotExist) {
		o.io.Warnf("this session was started in %s, which no longer exists; continuing in %s", termtext.Line(recorded), termtext.Line(cwd))
		return
	}
	o.io.Warnf("this session was started in %s; continuing in %s (tools now work here)", termtext.Line(recorded), termtext.Line(cwd))
}

// movedLatest is -c's last resort when this folder has no session: the
// latest session of this project made in a folder that no longer exists (the
// project moved). It says so in one line; "" when there is none.
func (o *agentOptions) movedLatest(cwd string) (string, error) {
	cat := catalog.Open("")
	defer cat.Close()
	in, err := cat.Latest(catalog.Scope{Cwd: cwd, Moved: true})
	if errors.Is(err, catalog.ErrNotFound) || err == nil && in.MovedFrom == "" {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	fmt.Fprintf(o.io.ErrOut, "session: %s (this project's latest, made in %s before the folder moved; 'arbor mv %s %s' re-homes its sessions)\n",
		termtext.Line(in.Path), termtext.Line(in.MovedFrom), shell.Quote(in.MovedFrom), shell.Quote(cwd))
	return in.Path, nil
}

// looksLikePathArg is pi's rule for --session: a slash or a .jsonl suffix makes a path.
func looksLikePathArg(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(s, ".jsonl")
}

// configPath is the agent's configuration file: $ARBOR_DIR/config.json.
func configPath() string { return filepath.Join(catalog.Home(), "config.json") }
