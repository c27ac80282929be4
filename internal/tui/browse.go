package tui

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/internal/treeview"
)

// BrowseOptions configure `arbor browse`.
type BrowseOptions struct {
	Catalog *catalog.Catalog // the catalog to list and search (its Progress is taken over)
	Scope   catalog.Scope
	Session string          // a session file to open the tree of at once, skipping the picker
	Filter  treeview.Filter // the tree's first filter
	// Summarizer writes branch summaries (nil: the mechanical one, which needs no model).
	Summarizer compaction.Summarizer
	Input      io.Reader
	Output     io.Writer
	Env        []string         // the environment the colour profile is read from (NO_COLOR)
	Now        func() time.Time // for ages; time.Now when nil
	// Opening is called with a session's path before its tree reads it (nil:
	// nothing is), so the command can bound the heap for a large one.
	Opening func(path string)
}

// Browse runs the session browser until the user quits.
func Browse(o BrowseOptions) error {
	_, err := tea.NewProgram(NewBrowser(o), programOptions(o)...).Run()
	return err
}

func programOptions(o BrowseOptions) []tea.ProgramOption {
	opts := []tea.ProgramOption{tea.WithEnvironment(o.Env)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	return opts
}

// Pick runs the session picker alone (`arbor -r`) and returns the path of the
// session chosen with Enter, or "" when the user quit without choosing. As in
// pi's -r, sessions can be deleted and restored there but not renamed; the
// keys are the browser's (? lists them). o.Session and o.Filter are unused.
func Pick(o BrowseOptions) (string, error) {
	o.Session = ""
	b := NewBrowser(o)
	b.title = "arbor: resume a session"
	var chosen string
	b.picker.opt.Rename = false
	b.picker.opt.Choose = func(in catalog.Info) tea.Cmd {
		chosen = in.Path
		return tea.Quit
	}
	_, err := tea.NewProgram(b, programOptions(o)...).Run()
	return chosen, err
}

// Browser is `arbor browse`: the session picker, and the tree of the session
// picked. Esc in the tree goes back to the picker.
type Browser struct {
	st      *store
	th      theme
	dark    bool
	width   int
	height  int
	picker  *Picker
	tree    *Tree // nil while the picker is shown
	filter  treeview.Filter
	help    bool
	direct  bool   // opened on one session: Esc in the tree quits
	title   string // the terminal window's title
	opening func(path string)
}

// NewBrowser builds the browser; Init starts its loading.
func NewBrowser(o BrowseOptions) *Browser {
	b := &Browser{st: newStore(o.Catalog, o.Summarizer), dark: true, filter: o.Filter, title: "arbor browse", opening: o.Opening}
	b.th = newTheme(b.dark)
	b.picker = newPicker(b.st, b.th, PickerOptions{Scope: o.Scope, Rename: true, Choose: b.open, Now: o.Now})
	if o.Session != "" {
		b.direct = true
		b.tree = b.newTree(o.Session)
	}
	return b
}

type openTreeMsg struct{ path string }
type backMsg struct{}

func (b *Browser) open(in catalog.Info) tea.Cmd {
	return func() tea.Msg { return openTreeMsg{in.Path} }
}

func (b *Browser) newTree(path string) *Tree {
	return newTree(b.st, b.th, TreeOptions{Path: path, Filter: b.filter, Opening: b.opening, Back: func() tea.Cmd {
		if b.direct {
			return tea.Quit
		}
		return func() tea.Msg { return backMsg{} }
	}})
}

// Init asks the terminal for its background and starts loading.
func (b *Browser) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if b.tree != nil {
		cmds = append(cmds, b.tree.Init())
	} else {
		cmds = append(cmds, b.picker.Init())
	}
	return tea.Batch(cmds...)
}

// Update routes a message to the view on screen.
func (b *Browser) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	msg = typed(msg)
	switch msg := msg.(type) {
	case tea.BackgroundColorMsg:
		b.dark = msg.IsDark()
		b.th = newTheme(b.dark)
		b.picker.th = b.th
		if b.tree != nil {
			b.tree.th = b.th
		}
		return b, nil
	case tea.WindowSizeMsg:
		b.width, b.height = msg.Width, msg.Height
		cmd := b.picker.Update(msg)
		if b.tree != nil {
			b.tree.Update(msg)
		}
		return b, cmd
	case openTreeMsg:
		b.tree = b.newTree(msg.path)
		b.tree.Update(tea.WindowSizeMsg{Width: b.width, Height: b.height})
		return b, b.tree.Init()
	case backMsg:
		b.tree = nil
		b.picker.previews.forget(b.picker.selectedPath())
		return b, b.picker.previewCmd()
	case tea.KeyPressMsg:
		if b.help {
			b.help = false
			return b, nil
		}
		switch msg.String() {
		case "ctrl+c":
			return b, tea.Quit
		case "?":
			if b.typing() {
				break
			}
			b.help = true
			return b, nil
		}
	case treeLoadedMsg, branchedMsg, labeledMsg:
		if b.tree == nil {
			return b, nil
		}
		return b, b.tree.Update(msg)
	case spinner.TickMsg: // each spinner takes its own ticks, and stops when idle
		cmd := b.picker.Update(msg)
		if b.tree != nil {
			cmd = tea.Batch(cmd, b.tree.Update(msg))
		}
		return b, cmd
	case listedMsg, searchDueMsg, searchedMsg, renamedMsg, removedMsg, restoredMsg, previewMsg:
		return b, b.picker.Update(msg)
	}
	if b.tree != nil {
		return b, b.tree.Update(msg)
	}
	return b, b.picker.Update(msg)
}

// typing reports whether keys go into a text field where ? and q are text.
func (b *Browser) typing() bool {
	if b.tree != nil {
		return b.tree.search != "" || b.tree.mode == treeLabel || b.tree.mode == treeInstructions
	}
	return b.picker.query.Value() != "" || b.picker.mode == pickRename
}

func (p *Picker) selectedPath() string {
	if r := p.selected(); r != nil {
		return r.info.Path
	}
	return ""
}

// View draws the view on screen, or the keys of that view.
func (b *Browser) View() tea.View {
	var s string
	switch {
	case b.help:
		s = b.helpView()
	case b.tree != nil:
		s = b.tree.View()
	default:
		s = b.picker.View()
	}
	v := tea.NewView(s)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = b.title
	return v
}

// key is one line of the help screen.
type key struct{ keys, does string }

var pickerKeys = []key{
	{"↑ ↓ pgup pgdn home end", "move; the mouse wheel scrolls"},
	{"type", `search: words, "a phrase", re:pattern (titles, names and the full text)`},
	{"esc", "clear the search; with none, quit"},
	{"enter", "open the session's tree"},
	{"tab", "current folder or all projects"},
	{"ctrl+s", "sort: threaded, recent, relevance"},
	{"ctrl+n", "named sessions only"},
	{"ctrl+p", "show the paths"},
	{"ctrl+r", "rename the session"},
	{"ctrl+d", "move the session to the trash (asks first)"},
	{"ctrl+backspace", "the same, when the search is empty"},
	{"ctrl+z", "restore the last session moved to the trash here"},
	{"?", "these keys (when the search is empty)"},
	{"ctrl+c", "quit"},
}

var treeKeys = []key{
	{"↑ ↓", "move (wraps around)"},
	{"← → pgup pgdn home end", "page; the mouse wheel scrolls"},
	{"ctrl+← alt+←", "fold below the entry, or go to the start of the branch"},
	{"ctrl+→ alt+→", "unfold"},
	{"type", "search the rows (every word must match); backspace edits"},
	{"ctrl+d ctrl+t ctrl+u ctrl+l ctrl+a", "filter: default, no tools, user only, labeled, all (again: back to default)"},
	{"ctrl+o ctrl+shift+o", "next or previous filter"},
	{"shift+l", "set or clear the entry's label"},
	{"enter", "move the leaf here: no summary, a summary of the branch left, or one with your instructions"},
	{"esc", "clear the search; with none, back to the sessions"},
	{"?", "these keys (when the search is empty)"},
	{"ctrl+c", "quit"},
}

func (b *Browser) helpView() string {
	keys, title := pickerKeys, "Keys of the session picker"
	if b.tree != nil {
		keys, title = treeKeys, "Keys of the tree"
	}
	w := 0
	if b.tree == nil && !b.picker.opt.Rename {
		keys = slices.DeleteFunc(slices.Clone(keys), func(k key) bool { return k.keys == "ctrl+r" })
	}
	for _, k := range keys {
		w = max(w, lipWidth(k.keys))
	}
	var s strings.Builder
	s.WriteString(fit(b.th.title.Render(title), b.width) + "\n")
	s.WriteString(fit("", b.width) + "\n")
	n := 2
	for _, k := range keys {
		s.WriteString(fit(fmt.Sprintf("  %s  %s", b.th.key.Render(k.keys+strings.Repeat(" ", w-lipWidth(k.keys))), k.does), b.width) + "\n")
		n++
	}
	for ; n < b.height-1; n++ {
		s.WriteString(fit("", b.width) + "\n")
	}
	s.WriteString(fit(b.th.muted.Render("any key closes this"), b.width))
	return s.String()
}

// NewPicker returns a session picker over cat for a front end that embeds it
// (the agent's /resume and -r): it calls opt.Choose with the session picked.
// Its Update returns only a command; its View draws it at the last
// tea.WindowSizeMsg. cat is used from the picker's background commands only.
func NewPicker(cat *catalog.Catalog, dark bool, opt PickerOptions) *Picker {
	return newPicker(newStore(cat, nil), newTheme(dark), opt)
}

// NewTree returns the tree of the session at opt.Path for a front end that
// embeds it (the agent's /tree): Enter moves the active cursor's leaf, with a
// branch summary written by summarizer (nil: the mechanical one), and calls
// opt.Moved.
func NewTree(summarizer compaction.Summarizer, dark bool, opt TreeOptions) *Tree {
	return newTree(newStore(nil, summarizer), newTheme(dark), opt)
}

// SetDark picks the colours for a dark or a light background.
func (p *Picker) SetDark(dark bool) { p.th = newTheme(dark) }

// SetDark picks the colours for a dark or a light background.
func (t *Tree) SetDark(dark bool) { t.th = newTheme(dark) }
