package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/internal/treeview"
	"github.com/arborlog/arbor/session"
	"github.com/charmbracelet/x/ansi"
)

// TreeOptions configure a tree view.
type TreeOptions struct {
	Path   string          // the session file
	Filter treeview.Filter // the filter it opens with ("" for default)
	// Moved is called after Enter moved the leaf (leaf is the new leaf's id:
	// the branch_summary's when one was written; text is the message to edit
	// again, see Edit). nil: the tree stays open, redrawn from the file.
	Moved func(leaf, text string) tea.Cmd
	// Edit: Enter on a user message moves the leaf to the message's parent
	// and hands its text to Moved, to be edited and sent again (pi's /tree in
	// its agent). Without it the leaf moves to the message itself.
	Edit bool
	// Back is called on Esc with an empty search (nil: quit the program).
	Back func() tea.Cmd
	// Opening is called with Path each time the tree is about to read it
	// (nil: nothing is), in the background.
	Opening func(path string)
}

type treeMode int

const (
	treeBrowse treeMode = iota
	treeLabel
	treeSummaryMenu
	treeInstructions
	treeWorking
)

// Tree shows a session's whole tree (pi's /tree selector): the active path
// marked, filters, search, fold and unfold, labels, other cursors, and Enter
// to move the leaf, with or without a summary of the branch left.
type Tree struct {
	opt  TreeOptions
	st   *store
	th   theme
	spin spinner.Model

	width, height int
	loading       bool
	loadSeq       int
	err           error
	log           *session.Log
	view          *treeview.View
	filter        treeview.Filter
	folded        map[*session.TreeNode]bool
	search        string
	rows          []treeview.Row
	scroller

	mode    treeMode
	input   textinput.Model // label or instructions
	menu    int             // the summary menu's choice
	target  string          // the entry Enter was pressed on
	status  string
	failed  bool
	keepSel string         // the entry to select after a reload
	found   treeview.Query // the search that made rows; nil when rows are not a search's
}

type (
	treeLoadedMsg struct {
		seq  int
		log  *session.Log
		view *treeview.View
		err  error
	}
	branchedMsg struct {
		leaf, text string
		err        error
	}
	labeledMsg struct {
		id, label string
		err       error
	}
)

var summaryChoices = []string{"No summary", "Summarize the branch left", "Summarize with my instructions"}

func newTree(st *store, th theme, opt TreeOptions) *Tree {
	if opt.Filter == "" {
		opt.Filter = treeview.FilterDefault
	}
	in := textinput.New()
	noBlink(&in)
	return &Tree{opt: opt, st: st, th: th, filter: opt.Filter, folded: map[*session.TreeNode]bool{}, input: in,
		spin: spinner.New(spinner.WithSpinner(spinner.Dot))}
}

// Init loads the session in the background.
func (t *Tree) Init() tea.Cmd { return t.reload() }

func (t *Tree) reload() tea.Cmd {
	t.loading = true
	t.loadSeq++
	seq, path, filter, opening := t.loadSeq, t.opt.Path, t.filter, t.opt.Opening
	return tea.Batch(t.spin.Tick, func() tea.Msg {
		if opening != nil {
			opening(path)
		}
		l, err := readSession(path)
		if err != nil {
			return treeLoadedMsg{seq: seq, err: err}
		}
		return treeLoadedMsg{seq: seq, log: l, view: treeview.New(l.Tree(), l, l.Leaf(), filter, 0)}
	})
}

// setFilter draws the tree again with another filter, in the background: the
// file is read again (it may have grown) and the current rows stay on screen
// until the new ones are ready.
func (t *Tree) setFilter(f treeview.Filter) tea.Cmd {
	if f == t.filter {
		return nil
	}
	t.keepSel = t.selectedID()
	t.filter = f
	return t.reload()
}

func (t *Tree) selectedID() string {
	if t.sel >= 0 && t.sel < len(t.rows) {
		return t.rows[t.sel].Node.Entry.ID
	}
	return ""
}

// layout recomputes the rows: folds, then the search, which shows every
// match whatever is folded.
func (t *Tree) layout() {
	if t.view == nil {
		t.rows = nil
		return
	}
	q := treeview.ParseQuery(t.search)
	switch {
	case len(q) == 0:
		t.rows = t.view.AppendRows(t.rows[:0], func(n *session.TreeNode) bool { return t.folded[n] })
	case t.found != nil && q.Narrows(t.found):
		t.rows = t.view.Narrow(t.rows, q)
	default:
		t.rows = t.view.Search(t.rows[:0], q)
	}
	t.found = q
	if len(q) == 0 {
		t.found = nil
	}
	t.sel = 0
	want := t.keepSel
	if want == "" {
		if m := t.view.LeafMark(); m != nil {
			want = m.Entry.ID
		}
	}
	for i, r := range t.rows {
		if r.Node.Entry.ID == want {
			t.sel = i
		}
	}
	t.keepSel = ""
	t.move(0)
	t.top = max(0, min(t.sel-t.listHeight()/2, len(t.rows)-t.listHeight()))
}

// matchTokens reports whether text holds every token (the fork selector's
// filter, over texts it lowered once).
func matchTokens(text string, tokens []string) bool {
	for _, tok := range tokens {
		if !strings.Contains(text, tok) {
			return false
		}
	}
	return true
}

func (t *Tree) setStatus(failed bool, format string, args ...any) {
	t.status, t.failed = oneLine(fmt.Sprintf(format, args...)), failed // errors can quote a file
}

// Update handles a message for the tree.
func (t *Tree) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		t.width, t.height = msg.Width, msg.Height
		t.input.SetWidth(max(msg.Width-40, 10))
		t.move(0)
		return nil
	case spinner.TickMsg:
		if !t.loading && t.mode != treeWorking {
			return nil
		}
		var cmd tea.Cmd
		t.spin, cmd = t.spin.Update(msg)
		return cmd
	case treeLoadedMsg:
		if msg.seq != t.loadSeq {
			return nil
		}
		t.loading = false
		t.err = msg.err
		if msg.err == nil {
			// rows is not reused for another view: what is past its length
			// would keep the last session read alive.
			t.log, t.view, t.found, t.rows = msg.log, msg.view, nil, nil
			t.folded = map[*session.TreeNode]bool{}
			t.layout()
		}
		return nil
	case branchedMsg:
		t.mode = treeBrowse
		if msg.err != nil {
			t.setStatus(true, "%v", msg.err)
			return nil
		}
		t.setStatus(false, "the leaf is now %s", orDefault(msg.leaf, "before the first entry"))
		t.keepSel = msg.leaf
		if t.opt.Moved != nil {
			return tea.Batch(t.opt.Moved(msg.leaf, msg.text), t.reload())
		}
		return t.reload()
	case labeledMsg:
		if msg.err != nil {
			t.setStatus(true, "label: %v", msg.err)
			return nil
		}
		if msg.label == "" {
			t.setStatus(false, "label cleared")
		} else {
			t.setStatus(false, "labeled %s", msg.label)
		}
		t.keepSel = msg.id
		return t.reload()
	case tea.KeyPressMsg:
		return t.key(msg)
	case tea.PasteMsg:
		if t.mode == treeLabel || t.mode == treeInstructions {
			var cmd tea.Cmd
			t.input, cmd = t.input.Update(msg)
			return cmd
		}
		t.search += oneLine(msg.Content)
		t.layout()
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			t.scroll(-3)
		case tea.MouseWheelDown:
			t.scroll(3)
		}
	}
	return nil
}

// filterKeys are pi's: each toggles its filter, back to default when on.
var filterKeys = map[string]treeview.Filter{
	"ctrl+d": treeview.FilterDefault, "ctrl+t": treeview.FilterNoTools, "ctrl+u": treeview.FilterUser,
	"ctrl+l": treeview.FilterLabeled, "ctrl+a": treeview.FilterAll,
}

func (t *Tree) key(k tea.KeyPressMsg) tea.Cmd {
	switch t.mode {
	case treeWorking:
		return nil
	case treeLabel, treeInstructions:
		switch k.String() {
		case "esc":
			t.mode = treeBrowse
			return nil
		case "enter":
			return t.submitInput()
		}
		var cmd tea.Cmd
		t.input, cmd = t.input.Update(k)
		return cmd
	case treeSummaryMenu:
		switch k.String() {
		case "up", "k":
			t.menu = (t.menu + len(summaryChoices) - 1) % len(summaryChoices)
		case "down", "j":
			t.menu = (t.menu + 1) % len(summaryChoices)
		case "esc":
			t.mode = treeBrowse
		case "enter":
			if Summary(t.menu) == SummarizeAsked {
				t.mode = treeInstructions
				t.input.Prompt = "Focus the summary on: "
				t.input.SetValue("")
				return t.input.Focus()
			}
			return t.branch(Summary(t.menu), "")
		}
		return nil
	}
	t.status = ""
	if f, ok := filterKeys[k.String()]; ok {
		if t.filter == f {
			f = treeview.FilterDefault
		}
		return t.setFilter(f)
	}
	switch k.String() {
	case "up":
		t.moveWrap(-1)
	case "down":
		t.moveWrap(1)
	case "left", "pgup":
		t.move(-t.listHeight())
	case "right", "pgdown":
		t.move(t.listHeight())
	case "home":
		t.move(-len(t.rows))
	case "end":
		t.move(len(t.rows))
	case "ctrl+o":
		return t.setFilter(treeview.Filters[(filterIndex(t.filter)+1)%len(treeview.Filters)])
	case "ctrl+shift+o":
		n := len(treeview.Filters)
		return t.setFilter(treeview.Filters[(filterIndex(t.filter)+n-1)%n])
	case "ctrl+left", "alt+left":
		t.fold(true)
	case "ctrl+right", "alt+right":
		t.fold(false)
	case "L", "shift+l":
		if r := t.selectedRow(); r != nil {
			t.mode = treeLabel
			t.target = r.Node.Entry.ID
			t.input.Prompt = "Label (empty to remove): "
			t.input.SetValue(clean(r.Node.Label))
			t.input.CursorEnd()
			return t.input.Focus()
		}
	case "enter":
		r := t.selectedRow()
		if r == nil {
			return nil
		}
		leaf := t.log.Leaf()
		switch {
		case leaf != nil && leaf.ID == r.Node.Entry.ID:
			t.setStatus(false, "Already at this point")
		case r.Node.Entry.IsMarker():
			t.setStatus(true, "%v", errMarker)
		default:
			t.target = r.Node.Entry.ID
			t.mode = treeSummaryMenu
			t.menu = 0
		}
	case "backspace":
		if t.search != "" {
			_, n := lastRune(t.search)
			t.search = t.search[:len(t.search)-n]
			t.layout()
		}
	case "esc":
		if t.search != "" {
			t.search = ""
			t.layout()
			return nil
		}
		if t.opt.Back != nil {
			return t.opt.Back()
		}
		return tea.Quit
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			t.search += k.Text
			t.folded = map[*session.TreeNode]bool{} // searching clears folds, as pi
			t.layout()
		}
	}
	return nil
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, 0
}

func filterIndex(f treeview.Filter) int {
	for i, g := range treeview.Filters {
		if g == f {
			return i
		}
	}
	return 0
}

// fold hides (or shows again) what is below the selected entry; on an entry
// with nothing to fold, left goes up to the entry it hangs from.
func (t *Tree) fold(fold bool) {
	r := t.selectedRow()
	if r == nil || t.search != "" {
		return
	}
	if r.Kids > 0 && t.folded[r.Node] != fold {
		t.keepSel = r.Node.Entry.ID
		if fold {
			t.folded[r.Node] = true
		} else {
			delete(t.folded, r.Node)
		}
		top := t.top
		t.layout()
		t.top = top
		t.move(0)
		return
	}
	if fold { // jump to the start of this branch segment
		for i := t.sel - 1; i >= 0; i-- {
			if t.rows[i].Kids > 1 {
				t.move(i - t.sel)
				return
			}
		}
	}
}

func (t *Tree) submitInput() tea.Cmd {
	value := strings.TrimSpace(t.input.Value())
	path, target := t.opt.Path, t.target
	if t.mode == treeLabel {
		t.mode = treeBrowse
		return func() tea.Msg { return labeledMsg{id: target, label: value, err: setLabel(path, target, value)} }
	}
	return t.branch(SummarizeAsked, value)
}

func (t *Tree) branch(sum Summary, instructions string) tea.Cmd {
	t.mode = treeWorking
	path, target, edit := t.opt.Path, t.target, t.opt.Edit
	return tea.Batch(t.spin.Tick, func() tea.Msg {
		leaf, text, err := t.st.branch(path, target, sum, instructions, edit)
		return branchedMsg{leaf: leaf, text: text, err: err}
	})
}

func (t *Tree) selectedRow() *treeview.Row {
	if t.sel < 0 || t.sel >= len(t.rows) {
		return nil
	}
	return &t.rows[t.sel]
}

func (t *Tree) moveWrap(d int) {
	if len(t.rows) == 0 {
		return
	}
	t.sel = (t.sel + d + len(t.rows)) % len(t.rows)
	t.move(0)
}

func (t *Tree) move(d int) { t.scroller.move(d, len(t.rows), t.listHeight()) }

// scroll moves the window (the mouse wheel), keeping the selection in it.
func (t *Tree) scroll(d int) {
	h := t.listHeight()
	t.top = max(0, min(t.top+d, len(t.rows)-h))
	t.sel = min(max(t.sel, t.top), t.top+h-1)
	t.sel = min(max(t.sel, 0), max(len(t.rows)-1, 0))
}

func (t *Tree) listHeight() int { return max(t.height-3, 1) }

// View draws the tree at its size.
func (t *Tree) View() string {
	if t.width == 0 {
		return ""
	}
	var b strings.Builder
	line := func(s string) {
		b.WriteString(fit(s, t.width))
		b.WriteByte('\n')
	}
	title := t.th.title.Render("Session tree")
	if t.log != nil {
		name := t.log.SessionName()
		if name == "" {
			name = t.log.Header().ID
		}
		title += " " + t.th.warning.Render(oneLine(name))
	}
	info := "filter: " + string(t.filter)
	if t.view != nil {
		info = fmt.Sprintf("%s · %d of %d entries", info, t.view.Shown, t.view.Total)
	}
	if t.loading && t.view != nil {
		info = t.spin.View() + " " + info
	}
	right := t.th.muted.Render(info)
	line(title + strings.Repeat(" ", max(t.width-lipWidth(title)-lipWidth(right), 1)) + right)
	switch t.mode {
	case treeLabel, treeInstructions:
		line(t.input.View())
	default:
		if t.search != "" {
			line("Search: " + clean(t.search))
		} else {
			line(t.th.muted.Render("Type to search · ? keys"))
		}
	}
	h := t.listHeight()
	shown := 0
	switch {
	case t.err != nil:
		line(t.th.failure.Render(oneLine(t.err.Error())))
		shown++
	case t.view == nil:
		line(t.spin.View() + " Loading " + clean(shortHome(t.opt.Path)))
		shown++
	case len(t.rows) == 0 && t.view.Total == 0:
		line(t.th.muted.Render("No entries yet"))
		shown++
	case len(t.rows) == 0:
		line(t.th.muted.Render("Nothing matches (esc clears the search, ctrl+a shows every entry)"))
		shown++
	}
	menuAt := -1
	if t.mode == treeSummaryMenu || t.mode == treeWorking {
		menuAt = t.sel
	}
	for i := t.top; i < len(t.rows) && shown < h; i++ {
		line(t.row(i))
		shown++
		if i == menuAt {
			for _, m := range t.menuLines() {
				if shown < h {
					line(m)
					shown++
				}
			}
		}
	}
	for ; shown < h; shown++ {
		line("")
	}
	b.WriteString(fit(t.statusLine(), t.width))
	return b.String()
}

func (t *Tree) menuLines() []string {
	if t.mode == treeWorking {
		return []string{"      " + t.spin.View() + " " + t.th.muted.Render("Moving the leaf")}
	}
	out := []string{"      " + t.th.title.Render("Summarize the branch you leave?")}
	for i, c := range summaryChoices {
		if i == t.menu {
			out = append(out, "      "+t.th.accent.Render("› "+c))
		} else {
			out = append(out, "        "+c)
		}
	}
	return out
}

func (t *Tree) row(i int) string {
	r := t.rows[i]
	ln := t.view.Line(r)
	s := t.th.line(ln)
	if r.Kids > 0 && t.folded[r.Node] {
		s += t.th.muted.Render(" [+]")
	}
	if i == t.sel {
		return t.th.accent.Render("▸") + t.th.selected.Render(ansi.Strip(fit(s, t.width-1)))
	}
	return " " + s
}

func (t *Tree) statusLine() string {
	switch {
	case t.status != "" && t.failed:
		return t.th.failure.Render(t.status)
	case t.status != "":
		return t.th.success.Render(t.status)
	case t.mode == treeSummaryMenu:
		return t.th.muted.Render("↑↓ choose · enter moves the leaf · esc back")
	case t.mode == treeLabel || t.mode == treeInstructions:
		return t.th.muted.Render("enter confirms · esc cancels")
	}
	var parts []string
	if len(t.rows) > 0 {
		parts = append(parts, fmt.Sprintf("(%d/%d)", t.sel+1, len(t.rows)))
	}
	if t.log != nil {
		if leaf := t.log.Leaf(); leaf != nil {
			parts = append(parts, "› leaf "+clean(leaf.ID)+" of cursor "+clean(cursorName(t.log)))
		}
	}
	parts = append(parts, "enter branch here · shift+l label · ? keys")
	return t.th.muted.Render(strings.Join(parts, "  "))
}

func cursorName(l *session.Log) string {
	for _, c := range l.Cursors() {
		if c.Active {
			return treeview.CursorName(c)
		}
	}
	return l.Active()
}
