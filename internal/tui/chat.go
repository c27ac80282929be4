package tui

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/markdown"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/window"
	"github.com/charmbracelet/colorprofile"
)

// ChatOptions configure the interactive agent (`arbor` on a terminal).
type ChatOptions struct {
	// NewAgent builds the agent for a model ("" for the configured one): its
	// provider, tools, system prompt and settings. The chat sets its Log,
	// Flush, Blobs and Emit.
	NewAgent func(model string) (*agent.Agent, error)
	Models   []string // the configuration's model names, for /model
	Cwd      string   // the project: new sessions record it
	Dir      string   // the folder new sessions are written to
	// Session is the session the chat opens on (it takes it over and closes
	// it); nil for --no-session: a session in memory, nothing written.
	Session *jsonl.Session
	Blobs   window.BlobWriter // where full tool outputs go (a memory store without a Session)
	Catalog *catalog.Catalog  // for /resume and /fork
	Scope   catalog.Scope
	// ShareCommand publishes /share's page (config.json's shareCommand).
	ShareCommand string
	// Summarizer writes branch summaries in /tree (nil: the model's).
	Summarizer compaction.Summarizer
	// Export writes the session l (read from path) to out ("" for the
	// default name), as HTML or, for a .jsonl name, as JSON lines, and
	// returns the file written (arbor export's rules: never overwrites).
	Export func(l *session.Log, path, out string) (string, error)
	Input  io.Reader
	Output io.Writer
	Env    []string         // the environment the colour profile is read from (NO_COLOR)
	Now    func() time.Time // for ages in the picker; time.Now when nil
}

// RunChat runs the chat until the user quits, and then closes its session.
func RunChat(o ChatOptions) error {
	c, err := NewChat(o)
	if err != nil {
		return err
	}
	defer c.Close()
	opts := []tea.ProgramOption{tea.WithEnvironment(o.Env)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	_, err = tea.NewProgram(c, opts...).Run()
	return err
}

type busyKind int

const (
	idle busyKind = iota
	running
	compacting
	exporting // /export, /share: the session is read in the background
)

// busyText is what the working line says.
var busyText = map[busyKind]string{running: "Working", compacting: "Compacting", exporting: "Exporting"}

type overlay int

const (
	noOverlay overlay = iota
	helpOverlay
	pickerOverlay
	treeOverlay
	forkOverlay
)

// Chat is the interactive agent: the conversation, an editor, a footer, the
// slash commands, and the picker and the tree over it.
type Chat struct {
	opt  ChatOptions
	th   theme
	dark bool

	width, height int

	sess     *jsonl.Session // nil for a session kept in memory
	log      *session.Log
	a        *agent.Agent
	prepared bool // the agent's model and thinking level are recorded in this session

	items     []*item
	notes     []*item       // the chat's notes on this session, oldest first: kept when items are drawn again
	live      map[int]*item // the reply being streamed, by content index
	liveOrder []int
	scroll    int // lines above the bottom of the conversation
	helpTop   int // the first row the help shows, when it is taller than the terminal

	editor  editor
	history []string // the prompts of recent sessions, then the open session's, oldest first
	histPos int      // len(history) when not browsing it
	ownFrom int      // where the open session's prompts start in history
	recent  []recentPrompts
	st      *store // the catalog's (nil without one): the picker and the history load
	draft   string
	queue   []string

	busy   busyKind
	gen    int
	events chan tea.Msg
	cancel context.CancelFunc
	spin   spinner.Model
	ran    time.Time

	showThinking, showTools bool

	compSel int

	over   overlay
	picker *Picker
	tree   *Tree
	fork   *ForkSelector
	stats  window.Stats // the context's statistics, measured when the chat is idle

	color      bool // the terminal shows colours (not NO_COLOR)
	md, mdLive *markdown.Renderer
	mdKey      markdown.Options
	mdFailed   error
}

// NewChat builds the chat on the session of o.
func NewChat(o ChatOptions) (*Chat, error) {
	c := &Chat{opt: o, dark: true, color: true, live: map[int]*item{}, spin: spinner.New(spinner.WithSpinner(spinner.Dot))}
	c.th = newTheme(c.dark)
	a, err := o.NewAgent("")
	if err != nil {
		return nil, err
	}
	c.a = a
	c.editor = newEditor()
	if o.Catalog != nil {
		c.st = newStore(o.Catalog, nil)
	}
	if o.Session != nil {
		c.attach(o.Session)
	} else {
		c.attachMemory(session.New(o.Cwd))
	}
	return c, nil
}

// tabRune stands for a tab in the editor. The textarea turns every tab it is
// given into four spaces, which would change Go code, a Makefile's recipes or
// the text of an edit call; it keeps this noncharacter instead (one column
// wide, as the textarea measures it), and editor gives tabs back.
const tabRune = '\ufdd0'

// tabShown is how the editor draws a tab: one column, as the textarea counts it.
const tabShown = "⇥"

// editor is the chat's textarea, keeping tabs: Value, SetValue and paste
// speak text with tabs; the textarea holds tabRune for each.
type editor struct{ textarea.Model }

// Value is the editor's text, its tabs as typed or pasted.
func (e *editor) Value() string { return strings.ReplaceAll(e.Model.Value(), string(tabRune), "\t") }

// SetValue replaces the editor's text with s.
func (e *editor) SetValue(s string) { e.Model.SetValue(toEditor(s)) }

// insert puts s at the cursor, in place of the selection if there is one: a
// paste, or a tab typed.
func (e *editor) insert(s string) {
	e.DeleteSelection()
	e.Model.InsertString(toEditor(s))
}

// View draws the editor, each tab as tabShown.
func (e *editor) View() string { return strings.ReplaceAll(e.Model.View(), string(tabRune), tabShown) }

// toEditor makes s the textarea's: tabs become tabRune, and a tabRune already
// in s is put in escaped, as typed escapes what a terminal would act on, so
// that it cannot come back as a tab.
func toEditor(s string) string {
	if !strings.ContainsAny(s, "\t"+string(tabRune)) {
		return s
	}
	s = strings.ReplaceAll(s, string(tabRune), `\ufdd0`)
	return strings.ReplaceAll(s, "\t", string(tabRune))
}

func newEditor() editor {
	e := textarea.New()
	e.Placeholder = "Ask anything · / for commands · ? for keys"
	e.ShowLineNumbers = false
	e.Prompt = "› "
	e.SetHeight(1)
	e.MaxHeight = 8
	e.DynamicHeight = true
	e.KeyMap.InsertNewline.SetKeys("shift+enter", "alt+enter", "ctrl+j")
	s := e.Styles()
	s.Cursor.Blink = false
	e.SetStyles(s)
	e.Focus()
	return editor{e}
}

// attach makes s the chat's session: the conversation is drawn from its
// active branch and the editor's history from its prompts.
func (c *Chat) attach(s *jsonl.Session) {
	c.sess = s
	c.bind(s.Log, s.Flush)
}

func (c *Chat) attachMemory(l *session.Log) {
	c.sess = nil
	c.bind(l, nil)
}

func (c *Chat) bind(l *session.Log, flush func() error) {
	if c.log == nil || c.log.Header().ID != l.Header().ID {
		c.notes = nil // another session's; the same one opened again (after /tree) keeps them
	}
	c.log = l
	c.a.Log, c.a.Flush, c.a.Blobs = l, flush, c.opt.Blobs
	c.prepared = false
	c.reload()
	c.setHistory(userPrompts(l))
	c.histPos = len(c.history)
}

// setHistory makes the editor's history the recent sessions' prompts and
// then own, the open session's.
func (c *Chat) setHistory(own []string) {
	c.history = mergeHistory(c.recent, c.path(), own)
	c.ownFrom = len(c.history) - len(own)
}

// reload draws the conversation again from the session's active branch.
func (c *Chat) reload() {
	c.items = itemsOfBranch(c.log, c.notes)
	c.live, c.liveOrder = map[int]*item{}, nil
	c.scroll = 0
	c.measure()
}

// measure computes the context status bar; only while no run appends.
func (c *Chat) measure() {
	s := window.Measure(c.log.Cursor(""), window.StatsOptions{Window: c.modelWindow(), Reserve: c.a.Model.Reserve})
	c.stats = s
}

func (c *Chat) modelWindow() int {
	if c.a.Model.Window > 0 {
		return c.a.Model.Window
	}
	return window.DefaultWindow
}

// closeSession releases the session file (its writer lock).
func (c *Chat) closeSession() error {
	if c.sess == nil {
		return nil
	}
	err := c.sess.Close()
	c.sess = nil
	return err
}

// Close stops a run still going and closes the session.
func (c *Chat) Close() error {
	c.stop()
	if c.st != nil {
		c.st.close() // a history load still listing ends before the catalog closes
	}
	return c.closeSession()
}

// stop cancels the run or compaction in progress and waits for it to end,
// so nothing appends to the session after it returns.
func (c *Chat) stop() {
	if c.busy == idle {
		return
	}
	c.cancel()
	for range c.events { // the worker closes it when it is done
	}
	c.busy = idle
}

type (
	agentEventMsg struct {
		gen int
		ev  agent.Event
	}
	runDoneMsg struct {
		gen  int
		last *session.Assistant
		err  error
	}
	compactDoneMsg struct {
		gen int
		err error
	}
	// doneMsg ends a background command: its result or its error, as a note.
	doneMsg struct {
		gen  int
		text string
		err  error
	}
)

// work runs f in a goroutine that feeds the events its agent emits to Update.
func (c *Chat) work(kind busyKind, f func(ctx context.Context, gen int) tea.Msg) tea.Cmd {
	c.gen++
	gen := c.gen
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan tea.Msg, 256)
	c.busy, c.cancel, c.events, c.ran = kind, cancel, ch, time.Now()
	c.a.Emit = func(e agent.Event) { ch <- agentEventMsg{gen, e} }
	go func() {
		defer close(ch)
		defer cancel()
		ch <- f(ctx, gen)
	}()
	return tea.Batch(c.next(), c.spin.Tick)
}

// next waits for the worker's next message.
func (c *Chat) next() tea.Cmd {
	ch := c.events
	return func() tea.Msg {
		m, ok := <-ch
		if !ok {
			return nil
		}
		return m
	}
}

// send runs the agent on a prompt.
func (c *Chat) send(prompt string) tea.Cmd {
	if !c.prepared {
		if err := c.a.Prepare(); err != nil {
			c.note(kindError, err.Error())
			return nil
		}
		c.prepared = true
	}
	a := c.a
	return c.work(running, func(ctx context.Context, gen int) tea.Msg {
		last, err := a.Run(ctx, prompt)
		return runDoneMsg{gen, last, err}
	})
}

// Init asks the terminal for its background and starts reading the recent
// sessions' prompts for the editor's history.
func (c *Chat) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, c.loadRecent())
}

// Update handles a message.
func (c *Chat) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	msg = typed(msg)
	switch msg := msg.(type) {
	case tea.BackgroundColorMsg:
		c.dark = msg.IsDark()
		c.th = newTheme(c.dark)
		if c.picker != nil {
			c.picker.th = c.th
		}
		if c.tree != nil {
			c.tree.th = c.th
		}
		if c.fork != nil {
			c.fork.th = c.th
		}
		return c, nil
	case tea.ColorProfileMsg:
		c.color = msg.Profile != colorprofile.NoTTY && msg.Profile != colorprofile.Ascii
		return c, nil
	case copiedMsg:
		if msg.err != nil {
			c.note(kindError, "/copy: "+msg.err.Error())
			return c, nil
		}
		c.note(kindNote, "copied the last answer ("+msg.how+")")
		if msg.raw != "" {
			return c, tea.Raw(msg.raw)
		}
		return c, nil
	case tea.WindowSizeMsg:
		c.width, c.height = msg.Width, msg.Height
		c.editor.SetWidth(msg.Width)
		var cmds []tea.Cmd
		if c.picker != nil {
			cmds = append(cmds, c.picker.Update(msg))
		}
		if c.tree != nil {
			cmds = append(cmds, c.tree.Update(msg))
		}
		if c.fork != nil {
			cmds = append(cmds, c.fork.Update(msg))
		}
		return c, tea.Batch(cmds...)
	case agentEventMsg:
		if msg.gen != c.gen {
			return c, nil
		}
		c.event(msg.ev)
		return c, c.next()
	case runDoneMsg:
		if msg.gen != c.gen {
			return c, nil
		}
		return c, c.finished(msg.last, msg.err)
	case compactDoneMsg:
		if msg.gen != c.gen {
			return c, nil
		}
		c.busy = idle
		c.settle()
		switch {
		case errors.Is(msg.err, context.Canceled) || errors.Is(msg.err, agent.ErrAborted):
			c.note(kindNote, "compaction stopped; nothing was appended")
		case errors.Is(msg.err, compaction.ErrNothingToCompact):
			c.note(kindNote, c.nothingToCompact())
		case msg.err != nil:
			c.note(kindError, "compact: "+msg.err.Error())
		default:
			c.reload()
			c.note(kindNote, "compacted: the summary above replaces the older messages in the context (/compact --undo goes back)")
		}
		return c, c.dequeue()
	case doneMsg:
		if msg.gen != c.gen {
			return c, nil
		}
		c.busy = idle
		c.settle()
		if msg.err != nil {
			c.note(kindError, msg.err.Error())
		} else {
			c.note(kindNote, msg.text)
		}
		return c, c.dequeue()
	case spinner.TickMsg:
		var cmds []tea.Cmd
		if c.busy != idle {
			var cmd tea.Cmd
			c.spin, cmd = c.spin.Update(msg)
			cmds = append(cmds, cmd)
		}
		if c.picker != nil {
			cmds = append(cmds, c.picker.Update(msg))
		}
		if c.tree != nil {
			cmds = append(cmds, c.tree.Update(msg))
		}
		return c, tea.Batch(cmds...)
	case listedMsg, searchDueMsg, searchedMsg, renamedMsg, removedMsg, restoredMsg, previewMsg:
		if c.picker == nil {
			return c, nil
		}
		return c, c.picker.Update(msg)
	case treeLoadedMsg, branchedMsg, labeledMsg:
		if c.tree == nil {
			return c, nil
		}
		return c, c.tree.Update(msg)
	case chatCmdMsg:
		return c, msg.f(c)
	case tea.KeyPressMsg:
		return c, c.key(msg)
	case recentLoadedMsg:
		c.recent = msg.sessions
		// Browsing keeps its place counted from the newest prompt: the
		// open session's prompts are the end of the history, unchanged.
		fromEnd := len(c.history) - c.histPos
		c.setHistory(slices.Clone(c.history[c.ownFrom:]))
		c.histPos = max(len(c.history)-fromEnd, 0)
		return c, nil
	case tea.MouseWheelMsg:
		if c.over == noOverlay {
			switch msg.Button {
			case tea.MouseWheelUp:
				c.scrollBy(3)
			case tea.MouseWheelDown:
				c.scrollBy(-3)
			}
			return c, nil
		}
		if c.over == helpOverlay {
			switch msg.Button {
			case tea.MouseWheelUp:
				c.scrollHelp(-3)
			case tea.MouseWheelDown:
				c.scrollHelp(3)
			}
			return c, nil
		}
	case tea.PasteMsg:
		if c.over == noOverlay {
			// Not the textarea's own paste, which turns tabs into spaces.
			c.editor.insert(msg.Content)
			c.compSel = 0
			return c, nil
		}
	}
	return c, c.overlayUpdate(msg)
}

// chatCmdMsg runs f on the chat: how an overlay's callback acts on it.
type chatCmdMsg struct{ f func(*Chat) tea.Cmd }

func (c *Chat) overlayUpdate(msg tea.Msg) tea.Cmd {
	switch c.over {
	case pickerOverlay:
		return c.picker.Update(msg)
	case treeOverlay:
		return c.tree.Update(msg)
	case forkOverlay:
		return c.fork.Update(msg)
	}
	return nil
}

// event shows what the agent did.
func (c *Chat) event(e agent.Event) {
	switch e.Type {
	case "message_update":
		d := e.AssistantMessageEvent
		if d == nil {
			return
		}
		it, ok := c.live[d.ContentIndex]
		if !ok {
			// A block opens with thinking_start, text_start or toolcall_start.
			kind := kindAssistant
			switch {
			case strings.HasPrefix(d.Type, "thinking_"):
				kind = kindThinking
			case strings.HasPrefix(d.Type, "toolcall_"):
				kind = kindTool
			}
			it = &item{kind: kind, streaming: true}
			c.live[d.ContentIndex] = it
			c.liveOrder = append(c.liveOrder, d.ContentIndex)
		}
		if it.kind == kindTool {
			it.args += d.Delta
		} else {
			it.text += d.Delta
		}
		it.dirty()
	case "message_end":
		m, ok := decodeMessage(e.Message)
		if !ok {
			return
		}
		if m.Role == session.RoleAssistant {
			c.live, c.liveOrder = map[int]*item{}, nil
		}
		c.items = appendMessage(c.items, m)
	case "tool_execution_start":
		if it := findTool(c.items, e.ToolCallID); it != nil {
			it.running = true
			it.dirty()
		}
	case "tool_execution_update":
		var p struct {
			Content session.Content `json:"content"`
		}
		if it := findTool(c.items, e.ToolCallID); it != nil && decodeJSON(e.PartialResult, &p) {
			it.partial = contentText(p.Content)
			it.dirty()
		}
	case "tool_execution_end":
		if m, ok := decodeMessage(e.Result); ok {
			c.items = appendMessage(c.items, m)
		}
	case "compaction_start":
		// Progress, not a reply: the summary, or an error, takes its place when the conversation is drawn again.
		c.items = append(c.items, &item{kind: kindNote, text: "compacting the context (" + e.Reason + ")…"})
		c.scroll = 0
	case "compaction_end":
		if e.ErrorMessage != "" {
			if c.busy != compacting { // /compact says so when it returns
				c.note(kindError, "compaction failed: "+e.ErrorMessage)
			}
		} else if e.Result != nil {
			var en struct {
				Summary string `json:"summary"`
			}
			if decodeJSON(e.Result, &en) {
				c.items = append(c.items, &item{kind: kindSummary, title: "compaction", text: en.Summary})
			}
		}
	}
}

// finished ends a run: the error, if any, is shown; the next queued
// message is sent.
func (c *Chat) finished(last *session.Assistant, err error) tea.Cmd {
	c.busy = idle
	c.settle()
	c.live, c.liveOrder = map[int]*item{}, nil
	shown := last != nil && (last.StopReason == session.StopError || last.StopReason == session.StopAborted) // its message said so
	switch {
	case errors.Is(err, agent.ErrAborted):
		if !shown {
			c.note(kindNote, "(stopped; the partial reply is kept)")
		}
		c.queue = nil // pi drops what was queued when a turn is stopped
	case err != nil && !shown:
		c.note(kindError, err.Error())
	}
	c.measure()
	return c.dequeue()
}

func (c *Chat) dequeue() tea.Cmd {
	if len(c.queue) == 0 || c.busy != idle {
		return nil
	}
	p := c.queue[0]
	c.queue = c.queue[1:]
	return c.send(p)
}

// note shows a line of the chat's own (a command's result, an error); it is
// not part of the session, and stays after the leaf it was made at when the
// conversation is drawn again (reload).
func (c *Chat) note(kind itemKind, text string) {
	it := &item{kind: kind, text: text, pending: c.busy != idle}
	if !it.pending {
		it.anchor = c.leafID()
	}
	c.items = append(c.items, it)
	c.notes = append(c.notes, it)
	c.scroll = 0
}

// settle anchors the notes made while the worker appended, now that the log
// may be read: after the run's last entry.
func (c *Chat) settle() {
	id := c.leafID()
	for _, n := range c.notes {
		if n.pending {
			n.anchor, n.pending = id, false
		}
	}
}

func (c *Chat) leafID() string {
	if leaf := c.log.Leaf(); leaf != nil {
		return leaf.ID
	}
	return ""
}

func (c *Chat) scrollBy(d int) {
	c.scroll = max(0, c.scroll+d)
}

// key handles a key press.
func (c *Chat) key(k tea.KeyPressMsg) tea.Cmd {
	switch c.over {
	case helpOverlay:
		switch k.String() {
		case "up", "k":
			c.scrollHelp(-1)
		case "down", "j":
			c.scrollHelp(1)
		case "pgup":
			c.scrollHelp(-c.helpRoom())
		case "pgdown", "space":
			c.scrollHelp(c.helpRoom())
		default:
			c.over, c.helpTop = noOverlay, 0
		}
		return nil
	case pickerOverlay, treeOverlay, forkOverlay:
		if k.String() == "ctrl+c" {
			return tea.Quit
		}
		return c.overlayUpdate(k)
	}
	comps := c.completions()
	switch k.String() {
	case "ctrl+c":
		if c.editor.Value() != "" {
			c.editor.Reset()
			return nil
		}
		return tea.Quit
	case "ctrl+d":
		if c.editor.Value() == "" {
			return tea.Quit
		}
	case "esc":
		switch {
		case c.busy != idle:
			c.cancel()
			return nil
		case len(comps) > 0:
			c.editor.Reset()
			return nil
		}
		return nil
	case "?":
		if c.editor.Value() == "" {
			c.over = helpOverlay
			return nil
		}
	case "tab":
		if len(comps) > 0 {
			c.editor.SetValue("/" + comps[min(c.compSel, len(comps)-1)].name + " ")
			c.compSel = 0
			return nil
		}
		// Nothing to complete: a tab, as in the file the text is for.
		c.editor.insert("\t")
		return nil
	case "up":
		if len(comps) > 0 {
			c.compSel = (c.compSel + len(comps) - 1) % len(comps)
			return nil
		}
		if c.editor.Line() == 0 {
			c.historyMove(-1)
			return nil
		}
	case "down":
		if len(comps) > 0 {
			c.compSel = (c.compSel + 1) % len(comps)
			return nil
		}
		if c.editor.Line() == c.editor.LineCount()-1 {
			c.historyMove(1)
			return nil
		}
	case "pgup":
		c.scrollBy(c.convHeight() - 1)
		return nil
	case "pgdown":
		c.scrollBy(-(c.convHeight() - 1))
		return nil
	case "ctrl+t":
		c.showThinking = !c.showThinking
		return nil
	case "ctrl+o":
		c.showTools = !c.showTools
		return nil
	case "enter":
		text := c.editor.Value()
		if len(comps) > 0 && !strings.Contains(text, " ") {
			sel := comps[min(c.compSel, len(comps)-1)]
			if "/"+sel.name != text {
				text = "/" + sel.name
			}
		}
		return c.submit(text)
	}
	before := c.editor.Value()
	k.Text = toEditor(k.Text)
	var cmd tea.Cmd
	c.editor.Model, cmd = c.editor.Model.Update(k)
	if c.editor.Value() != before {
		c.compSel = 0
	}
	return cmd
}

// submit sends the editor's text: a slash command runs, a prompt goes to the
// agent (or waits in the queue while it works).
func (c *Chat) submit(text string) tea.Cmd {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	c.editor.Reset()
	c.compSel = 0
	c.remember(text)
	if strings.HasPrefix(text, "/") {
		name, arg, _ := strings.Cut(strings.TrimSpace(text[1:]), " ")
		return c.command(name, strings.TrimSpace(arg))
	}
	c.scroll = 0
	if c.busy != idle {
		c.queue = append(c.queue, text)
		return nil
	}
	return c.send(text)
}

func (c *Chat) remember(text string) {
	if n := len(c.history); n == 0 || c.history[n-1] != text {
		c.history = append(c.history, text)
	}
	c.histPos = len(c.history)
	c.draft = ""
}

// historyMove shows the previous (-1) or next (+1) message sent; past the
// newest the text being written comes back.
func (c *Chat) historyMove(d int) {
	if c.histPos == len(c.history) {
		c.draft = c.editor.Value()
	}
	p := c.histPos + d
	if p < 0 || p > len(c.history) {
		return
	}
	c.histPos = p
	if p == len(c.history) {
		c.editor.SetValue(c.draft)
	} else {
		c.editor.SetValue(c.history[p])
	}
}
