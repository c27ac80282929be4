package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/clipboard"
	"github.com/arborlog/arbor/internal/share"
	"github.com/arborlog/arbor/internal/statusbar"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	arbor "github.com/arborlog/arbor/store"
	"github.com/arborlog/arbor/window"
)

// command is one slash command, as completion and the help list it.
type command struct{ name, args, does string }

// usage is the command as typed: its name and its arguments.
func (cm command) usage() string {
	if cm.args == "" {
		return "/" + cm.name
	}
	return "/" + cm.name + " " + cm.args
}

var commands = []command{
	{"resume", "", "open another session (the session picker)"},
	{"new", "", "start a new session"},
	{"name", "<name>", "name the session"},
	{"session", "", "the session's id, file, name, counts and context"},
	{"tree", "", "the session's tree: enter moves the leaf there, with or without a summary"},
	{"fork", "", "a new session from before one of your messages, with its text in the editor"},
	{"clone", "", "copy the active branch into a new session"},
	{"compact", "[focus]", "summarize the older part of the branch; --undo takes the last compaction back"},
	{"export", "[path]", "write the session as HTML (or JSON lines for a .jsonl path)"},
	{"copy", "", "put the last answer on the clipboard"},
	{"share", "", "export the session to HTML and publish it with the configured shareCommand"},
	{"clear", "", "start again from the beginning; the old branch stays in the tree"},
	{"label", "[text]", "label the last entry (no text clears it)"},
	{"pin", "", "keep the last message in full in the context, whatever compaction does"},
	{"unpin", "", "undo /pin: the latest pinned message of the branch goes back to its default"},
	{"stats", "", "how much of the model's window the context uses"},
	{"cursor", "[new|switch|name]", "list the cursors, make one, switch to one, name the active one"},
	{"model", "[name]", "list the models, or switch to one"},
	{"help", "", "every key and command"},
	{"quit", "", "leave arbor"},
}

// completions are the commands that start with what the editor holds, while
// it holds a slash and a word and nothing else.
func (c *Chat) completions() []command {
	v := c.editor.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return nil
	}
	var out []command
	for _, cm := range commands {
		if strings.HasPrefix(cm.name, v[1:]) {
			out = append(out, cm)
		}
	}
	return out
}

// busyRefusal refuses a command while the agent works.
const busyRefusal = "the agent is working: wait for the turn to end, or press esc to stop it"

// command runs a slash command; its result is a note in the conversation.
func (c *Chat) command(name, arg string) tea.Cmd {
	if c.busy != idle && name != "help" && name != "quit" && name != "copy" {
		c.note(kindError, "/"+name+": "+busyRefusal)
		return nil
	}
	switch name {
	case "help":
		c.over = helpOverlay
	case "quit", "exit":
		return tea.Quit
	case "resume":
		return c.openPicker()
	case "fork":
		return c.openFork()
	case "copy":
		return c.copyAnswer()
	case "share":
		return c.share()
	case "new":
		c.newSession()
	case "name":
		c.name(arg)
	case "session":
		c.sessionInfo()
	case "tree":
		return c.openTree()
	case "clone":
		c.clone()
	case "compact":
		return c.compact(arg)
	case "export":
		return c.export(arg)
	case "clear":
		if err := c.log.Cursor("").ResetLeaf(); err != nil {
			c.note(kindError, "/clear: "+err.Error())
			return nil
		}
		c.reload()
		c.note(kindNote, "started again from the beginning; the old branch stays in the tree (/tree goes back to it)")
	case "label":
		c.label(arg)
	case "pin":
		c.pin()
	case "unpin":
		c.unpin()
	case "stats":
		c.showStats()
	case "cursor":
		c.cursor(arg)
	case "model":
		c.model(arg)
	default:
		c.note(kindError, fmt.Sprintf("no command /%s: /help lists them", oneLine(name)))
	}
	return nil
}

func (c *Chat) path() string {
	if c.sess == nil {
		return ""
	}
	return c.sess.Path()
}

// switchTo opens the session at path and closes the one in use.
func (c *Chat) switchTo(path string) error {
	if path == c.path() {
		return nil
	}
	s, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	if err := c.closeSession(); err != nil {
		c.note(kindError, err.Error())
	}
	c.attach(s)
	return nil
}

// take makes a session just made (a new one, a clone, a fork) the one in use.
func (c *Chat) take(s *jsonl.Session) {
	if err := c.closeSession(); err != nil {
		c.note(kindError, err.Error())
	}
	c.attach(s)
}

// openPicker shows the session picker (/resume).
func (c *Chat) openPicker() tea.Cmd {
	if c.opt.Catalog == nil {
		c.note(kindError, "/resume: no session catalog here")
		return nil
	}
	opt := PickerOptions{Scope: c.opt.Scope, Current: c.path(), Rename: true, Now: c.opt.Now,
		Choose: func(in catalog.Info) tea.Cmd {
			path := in.Path
			return chatCmd(func(c *Chat) tea.Cmd {
				c.closeOverlay()
				if err := c.switchTo(path); err != nil {
					c.note(kindError, err.Error())
				}
				return nil
			})
		},
		Cancel: func() tea.Cmd { return chatCmd(func(c *Chat) tea.Cmd { c.closeOverlay(); return nil }) }}
	c.picker = newPicker(c.st, c.th, opt)
	c.over = pickerOverlay
	return tea.Batch(c.picker.Update(tea.WindowSizeMsg{Width: c.width, Height: c.height}), c.picker.Init())
}

// chatCmd is a command that acts on the chat when it runs: how an overlay's
// callback reaches it.
func chatCmd(f func(*Chat) tea.Cmd) tea.Cmd {
	return func() tea.Msg { return chatCmdMsg{f} }
}

// openFork shows the user messages of the branch (/fork); the one chosen
// starts a new session from its parent, its text in the editor (pi's /fork).
func (c *Chat) openFork() tea.Cmd {
	c.fork = NewForkSelector(c.dark, ForkOptions{Log: c.log, Now: c.opt.Now,
		Choose: func(e *session.Entry, text string) tea.Cmd {
			return chatCmd(func(c *Chat) tea.Cmd {
				c.closeOverlay()
				c.forkBefore(e)
				return nil
			})
		},
		Cancel: func() tea.Cmd { return chatCmd(func(c *Chat) tea.Cmd { c.closeOverlay(); return nil }) }})
	if c.fork.Len() == 0 {
		c.fork = nil
		c.note(kindError, "/fork: no message of yours on this branch to fork from")
		return nil
	}
	c.over = forkOverlay
	return c.fork.Update(tea.WindowSizeMsg{Width: c.width, Height: c.height})
}

func (c *Chat) forkBefore(e *session.Entry) {
	if c.sess == nil {
		l := session.New(c.opt.Cwd)
		if e.ParentID != "" {
			var err error
			if l, err = c.log.Branched(e.ParentID); err != nil {
				c.note(kindError, "/fork: "+err.Error())
				return
			}
		}
		c.attachMemory(l)
		c.editor.SetValue(editable(arbor.MessageText(e)))
		c.note(kindNote, "forked into a new session (in memory); your message is in the editor")
		return
	}
	s, text, err := arbor.ForkBefore(arbor.FilesOf(c.opt.Catalog), arbor.ForkFile, c.sess.Path(), c.log, e.ID, c.opt.Cwd, c.opt.Dir)
	if err != nil {
		c.note(kindError, "/fork: "+err.Error())
		return
	}
	fs, ok := s.(arbor.FileSession)
	if !ok {
		_ = s.Close()
		c.note(kindError, "/fork: the new session is not a file")
		return
	}
	c.take(fs.Session)
	c.editor.SetValue(editable(text))
	c.note(kindNote, "forked into a new session; your message is in the editor:\n  "+clean(shortHome(fs.Path())))
}

// copiedMsg is /copy's result: raw is the OSC 52 sequence for the terminal.
type copiedMsg struct {
	raw, how string
	err      error
}

// copyAnswer puts the last answer on the clipboard, in the background (the
// system's tool may be slow to answer).
func (c *Chat) copyAnswer() tea.Cmd {
	text := lastAnswer(c.items)
	if text == "" {
		c.note(kindError, "/copy: no answer to copy yet")
		return nil
	}
	return func() tea.Msg {
		var seq strings.Builder
		r, err := clipboard.Copy(context.Background(), text, clipboard.Options{Terminal: &seq})
		return copiedMsg{raw: seq.String(), how: r.String(), err: err}
	}
}

// share exports the session and runs the configured share command on it.
func (c *Chat) share() tea.Cmd {
	if c.log.Leaf() == nil {
		c.note(kindError, "/share: nothing to share yet")
		return nil
	}
	l, command := c.log, c.opt.ShareCommand
	return c.work(exporting, func(ctx context.Context, gen int) tea.Msg {
		r, err := share.Share(ctx, l, share.Options{Command: command})
		if err != nil {
			return doneMsg{gen, "", fmt.Errorf("/share: %w", err)}
		}
		text := "shared"
		if r.URL != "" {
			text += ": " + r.URL
		}
		if r.Output != "" && r.Output != r.URL {
			text += "\n" + r.Output
		}
		return doneMsg{gen, text, nil}
	})
}

func (c *Chat) closeOverlay() {
	c.over, c.picker, c.tree = noOverlay, nil, nil
}

func (c *Chat) newSession() {
	if c.sess == nil {
		c.attachMemory(session.New(c.opt.Cwd))
		c.note(kindNote, "a new session (in memory)")
		return
	}
	s, err := jsonl.Create(c.opt.Cwd, c.opt.Dir)
	if err != nil {
		c.note(kindError, "/new: "+err.Error())
		return
	}
	c.take(s)
	c.note(kindNote, "a new session, written with the first message:\n  "+clean(shortHome(s.Path())))
}

func (c *Chat) name(arg string) {
	if arg == "" {
		if n := c.log.SessionName(); n != "" {
			c.note(kindNote, "the session is named "+oneLine(n))
		} else {
			c.note(kindNote, "the session has no name: /name <name> gives it one")
		}
		return
	}
	if _, err := c.log.SetSessionName(arg); err != nil {
		c.note(kindError, "/name: "+err.Error())
		return
	}
	c.note(kindNote, "named "+oneLine(arg))
}

func (c *Chat) sessionInfo() {
	h := c.log.Header()
	roles := map[string]int{}
	for _, e := range c.log.Entries() {
		if e.Type == session.TypeMessage {
			roles[e.Role()]++
		}
	}
	file := "(in memory: nothing is written)"
	if c.sess != nil {
		file = shortHome(c.sess.Path())
		if _, err := os.Stat(c.sess.Path()); err != nil {
			file += " (written with the first message)"
		}
	}
	name := c.log.SessionName()
	if name == "" {
		name = "(none)"
	}
	var lines []string
	row := func(k, v string) { lines = append(lines, fmt.Sprintf("%-9s %s", k, v)) }
	row("id", clean(h.ID))
	row("file", clean(file))
	row("name", oneLine(name))
	row("folder", clean(h.Cwd))
	row("cursor", oneLine(cursorName(c.log)))
	row("model", oneLine(c.a.Model.Provider+"/"+c.a.Model.ID))
	row("entries", fmt.Sprintf("%d · messages: %d user, %d assistant, %d tool results", c.log.Len(),
		roles[session.RoleUser], roles[session.RoleAssistant], roles[session.RoleToolResult]))
	row("context", statusbar.Line(c.stats, false))
	c.note(kindNote, strings.Join(lines, "\n"))
}

// openTree shows the session's tree. The chat lets go of the file while it
// is open (the tree writes through its own handle), and opens it again after.
func (c *Chat) openTree() tea.Cmd {
	path := c.path()
	if path == "" {
		c.note(kindError, "/tree: this session is kept in memory; the tree view reads session files")
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		c.note(kindError, "/tree: nothing is written yet; send a message first")
		return nil
	}
	if err := c.closeSession(); err != nil {
		c.note(kindError, err.Error())
	}
	back := func(moved bool, text string) tea.Cmd {
		return chatCmd(func(c *Chat) tea.Cmd {
			c.closeOverlay()
			s, err := jsonl.Open(path)
			if err != nil {
				c.attachMemory(session.New(c.opt.Cwd))
				c.note(kindError, fmt.Sprintf("reopen %s: %v; a new session in memory is open instead (/resume)", path, err))
				return nil
			}
			c.attach(s)
			switch {
			case moved && text != "" && c.editor.Value() == "":
				c.editor.SetValue(editable(text))
				c.note(kindNote, "the leaf moved to before your message; its text is in the editor to edit and send again")
			case moved:
				c.note(kindNote, "the leaf moved; the conversation above is the new branch")
			}
			return nil
		})
	}
	summ := c.opt.Summarizer
	if summ == nil {
		summ = c.a.BranchSummarizer()
	}
	st := newStore(nil, summ)
	st.contextWindow = c.a.Model.Window
	c.tree = newTree(st, c.th, TreeOptions{Path: path, Filter: treeview.FilterDefault, Edit: true,
		Moved: func(_, text string) tea.Cmd { return back(true, text) },
		Back:  func() tea.Cmd { return back(false, "") }})
	c.over = treeOverlay
	c.tree.Update(tea.WindowSizeMsg{Width: c.width, Height: c.height})
	return c.tree.Init()
}

func (c *Chat) clone() {
	leaf := c.log.Leaf()
	if leaf == nil {
		c.note(kindError, "/clone: nothing to clone yet")
		return
	}
	if c.sess == nil {
		l, err := c.log.Branched(leaf.ID)
		if err != nil {
			c.note(kindError, "/clone: "+err.Error())
			return
		}
		c.attachMemory(l)
		c.note(kindNote, "cloned the branch into a new session (in memory)")
		return
	}
	s, err := jsonl.BranchFrom(c.sess.Path(), c.log, leaf.ID)
	if err != nil {
		c.note(kindError, "/clone: "+err.Error())
		return
	}
	c.take(s)
	c.note(kindNote, "cloned the branch into a new session:\n  "+clean(shortHome(s.Path())))
}

func (c *Chat) compact(arg string) tea.Cmd {
	if arg == "--undo" {
		u, err := compaction.Undo(c.log.Cursor(""))
		if errors.Is(err, compaction.ErrNoCompaction) {
			c.note(kindError, "/compact --undo: no compaction on this branch")
			return nil
		}
		if err != nil {
			c.note(kindError, "/compact --undo: "+err.Error())
			return nil
		}
		c.reload()
		c.note(kindNote, fmt.Sprintf("undid compaction %s: the context is again what it was before it (the compaction stays in the tree)", clean(u.Compaction.ID)))
		return nil
	}
	if c.log.Leaf() == nil {
		c.note(kindError, "/compact: nothing to compact yet")
		return nil
	}
	a := c.a
	return c.work(compacting, func(ctx context.Context, gen int) tea.Msg {
		return compactDoneMsg{gen, a.Compact(ctx, arg)}
	})
}

// nothingToCompact says why the planner found nothing to summarize, read as
// compaction.Prepare reads the branch: it summarizes only what comes before
// the last KeepRecentTokens of the part not yet summarized (after the latest
// compaction), and cuts only where a context may start.
func (c *Chat) nothingToCompact() string {
	const nothing = "nothing to compact: "
	leaf := c.log.Leaf()
	if leaf == nil {
		return nothing + "the branch is empty"
	}
	if leaf.Type == session.TypeCompaction {
		return nothing + "the branch ends in a compaction; nothing was added since (/compact --undo takes it back)"
	}
	keep := c.a.CompactionSettings().KeepRecentTokens
	proj := session.ProjectPath(c.log.PathTo(leaf.ID))
	tokens, since := 0, "the messages"
	for _, p := range proj.Entries {
		if p.Entry.Type == session.TypeCompaction {
			since = "the messages since the last compaction"
			continue
		}
		for _, m := range p.Messages {
			tokens += compaction.EstimateTokens(m)
		}
	}
	th := statusbar.Thousands
	if tokens < keep {
		return fmt.Sprintf(nothing+"%s come to ~%s tokens (compaction's estimate), and it keeps the last %s tokens whole (keepRecentTokens); nothing older to summarize",
			since, th(tokens), th(keep))
	}
	return fmt.Sprintf(nothing+"%s come to ~%s tokens (compaction's estimate), but the last %s it keeps whole (keepRecentTokens) reach back to the first message a context may start with; nothing before it to summarize",
		since, th(tokens), th(keep))
}

// export writes the session in the background (a long session takes a moment).
func (c *Chat) export(arg string) tea.Cmd {
	if c.sess == nil {
		c.note(kindError, "/export: this session is kept in memory and has no file to export")
		return nil
	}
	if c.opt.Export == nil {
		c.note(kindError, "/export: not available here")
		return nil
	}
	if err := c.sess.Flush(); err != nil {
		c.note(kindError, "/export: "+err.Error())
		return nil
	}
	l, path, out, export := c.log, c.sess.Path(), strings.Trim(arg, `"'`), c.opt.Export
	return c.work(exporting, func(ctx context.Context, gen int) tea.Msg {
		written, err := export(l, path, out)
		if err != nil {
			return doneMsg{gen, "", fmt.Errorf("/export: %w", err)}
		}
		return doneMsg{gen, "exported to " + clean(written), nil}
	})
}

func (c *Chat) label(arg string) {
	leaf := c.log.Leaf()
	if leaf == nil {
		c.note(kindError, "/label: nothing to label yet")
		return
	}
	if _, err := c.log.Cursor("").SetLabel(leaf.ID, arg); err != nil {
		c.note(kindError, "/label: "+err.Error())
		return
	}
	if arg == "" {
		c.note(kindNote, "label of "+clean(leaf.ID)+" cleared")
	} else {
		c.note(kindNote, "labeled "+clean(leaf.ID)+" "+oneLine(arg)+" (the tree shows it)")
	}
}

// pin pins the last message of the branch.
func (c *Chat) pin() {
	leaf := c.log.Leaf()
	if leaf == nil {
		c.note(kindError, "/pin: nothing to pin yet")
		return
	}
	branch := c.log.PathTo(leaf.ID)
	for i := len(branch) - 1; i >= 0; i-- {
		e := branch[i]
		if e.Type != session.TypeMessage {
			continue
		}
		if err := c.log.Cursor("").Pin(e.ID); err != nil {
			c.note(kindError, "/pin: "+err.Error())
			return
		}
		c.measure()
		c.note(kindNote, fmt.Sprintf("pinned the %s message %s: it stays in full in the context", clean(e.Role()), clean(e.ID)))
		return
	}
	c.note(kindError, "/pin: no message on this branch")
}

// unpin returns the latest pinned message of the branch to its default
// level: right after /pin, the one it pinned.
func (c *Chat) unpin() {
	leaf := c.log.Leaf()
	if leaf == nil {
		c.note(kindError, "/unpin: nothing is pinned")
		return
	}
	cur := c.log.Cursor("")
	branch := c.log.PathTo(leaf.ID)
	for i := len(branch) - 1; i >= 0; i-- {
		e := branch[i]
		if r, ok := cur.Resolution(e.ID); !ok || r.Level != session.Pinned {
			continue
		}
		if err := cur.Unpin(e.ID); err != nil {
			c.note(kindError, "/unpin: "+err.Error())
			return
		}
		c.measure()
		c.note(kindNote, fmt.Sprintf("unpinned the %s message %s: compaction may shorten it again", clean(e.Role()), clean(e.ID)))
		return
	}
	c.note(kindError, "/unpin: no pinned message on this branch (/pin pins the last one)")
}

func (c *Chat) showStats() {
	s := window.Measure(c.log.Cursor(""), window.StatsOptions{Window: c.modelWindow(), Reserve: c.a.Model.Reserve})
	th := statusbar.Thousands
	lines := []string{
		statusbar.Line(s, false), // a note is text, shown as it is: the footer has the colours
		fmt.Sprintf("window %s − reserve %s = prompt budget %s · used ~%s · remaining %s", th(s.ContextWindow), th(s.CompletionReserve), th(s.PromptBudget), th(s.EstimatedUsed), th(s.EstimatedRemaining)),
		fmt.Sprintf("by role: user %s · assistant %s · tool %s · system %s", th(s.RoleTokens.User), th(s.RoleTokens.Assistant), th(s.RoleTokens.Tool), th(s.RoleTokens.System)),
		fmt.Sprintf("API usage: %s · input %s · output %s · $%.4f", statusbar.Count(s.APIUsage.Requests, "request"), th(int(s.APIUsage.Input)), th(int(s.APIUsage.Output)), s.APIUsage.Cost),
	}
	c.note(kindNote, strings.Join(lines, "\n"))
}

func (c *Chat) cursor(arg string) {
	verb, rest, _ := strings.Cut(arg, " ")
	rest = strings.TrimSpace(rest)
	switch verb {
	case "":
		var lines []string
		for _, ci := range c.log.Cursors() {
			mark := "  "
			if ci.Active {
				mark = "› "
			}
			lines = append(lines, fmt.Sprintf("%s%s  leaf %s", mark, oneLine(treeview.CursorName(ci)), clean(orDefault(ci.Leaf, "(none)"))))
		}
		c.note(kindNote, "cursors:\n"+strings.Join(lines, "\n"))
	case "new":
		cur, err := c.log.NewCursor(rest)
		id := ""
		if err == nil {
			id = cur.ID()
			err = c.log.Switch(id)
		}
		if err != nil {
			c.note(kindError, "/cursor new: "+err.Error())
			return
		}
		c.reload()
		c.note(kindNote, "a new cursor "+oneLine(orDefault(rest, id))+" at the leaf, now the active one")
	case "switch":
		if rest == "" {
			c.note(kindError, "/cursor switch <id or name>")
			return
		}
		if err := c.log.Switch(rest); err != nil {
			c.note(kindError, "/cursor switch: "+err.Error())
			return
		}
		c.reload()
		c.note(kindNote, "cursor "+oneLine(cursorName(c.log))+" is active")
	case "name":
		if err := c.log.Cursor("").Rename(rest); err != nil {
			c.note(kindError, "/cursor name: "+err.Error())
			return
		}
		c.note(kindNote, "the active cursor is named "+oneLine(orDefault(rest, "(none)")))
	default:
		c.note(kindError, "/cursor: new [name], switch <id or name>, name <name>, or nothing to list them")
	}
}

func (c *Chat) model(arg string) {
	if arg == "" {
		var lines []string
		for _, m := range c.opt.Models {
			mark := "  "
			if m == c.a.Model.ID {
				mark = "› "
			}
			lines = append(lines, mark+oneLine(m))
		}
		if !slices.Contains(c.opt.Models, c.a.Model.ID) {
			lines = append([]string{"› " + oneLine(c.a.Model.ID)}, lines...)
		}
		c.note(kindNote, "models (/model <name> switches):\n"+strings.Join(lines, "\n"))
		return
	}
	a, err := c.opt.NewAgent(arg)
	if err != nil {
		c.note(kindError, "/model: "+err.Error())
		return
	}
	a.Log, a.Flush, a.Blobs = c.a.Log, c.a.Flush, c.a.Blobs
	c.a, c.prepared = a, false
	c.measure()
	c.note(kindNote, "model "+oneLine(a.Model.ID)+" (recorded with the next message)")
}
