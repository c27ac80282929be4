package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
)

// PickerOptions configure a session picker.
type PickerOptions struct {
	Scope   catalog.Scope // Cwd (and Dir) of the current folder; All opens on every project
	Current string        // the session in use: shown in accent and never deleted
	Rename  bool          // ctrl+r renames (pi offers it in /resume, not in -r)
	// Choose is called with the session picked with Enter.
	Choose func(catalog.Info) tea.Cmd
	// Cancel is called on Esc with an empty query (nil: quit the program).
	Cancel func() tea.Cmd
	Now    func() time.Time // for ages; time.Now when nil
}

type sortMode int

const (
	sortThreaded sortMode = iota
	sortRecent
	sortRelevance
)

func (s sortMode) String() string {
	return [...]string{"threaded", "recent", "relevance"}[s]
}

type pickerMode int

const (
	pickBrowse pickerMode = iota
	pickRename
	pickConfirmDelete
)

// Picker lists sessions (pi's /resume selector): current folder or all,
// search as you type, three sorts, named only, rename, delete to the trash and
// restore, paths on demand, and a preview of the selected session.
type Picker struct {
	opt  PickerOptions
	st   *store
	th   theme
	spin spinner.Model

	width, height int
	all           bool
	scopes        [2]scopeList // current folder, all
	listSeq       int

	query     textinput.Model
	parsed    catalog.Query
	queryErr  bool // an invalid re: pattern: no results, as pi
	sort      sortMode
	named     bool
	showPath  bool
	searchSeq int
	searching bool
	ranks     map[string]int // path → rank of its best full-text hit, for this query and scope

	rows []pickRow
	scroller

	mode    pickerMode
	input   textinput.Model // the new name
	status  string
	failed  bool
	trashed []catalog.Trashed // removed here, the last one first to restore
	want    string            // the path to select once it is listed (a restored session)

	previews *previewCache
}

type scopeList struct {
	loaded  bool
	loading bool
	infos   []catalog.Info
	hay     []string // what the search matches of each session: id, name, first message, folder
	err     error
}

// index prepares the text the search looks in, once per change of the list.
func (sl *scopeList) index() {
	sl.hay = make([]string, len(sl.infos))
	for i, in := range sl.infos {
		sl.hay[i] = in.ID + " " + in.Name + " " + in.FirstMessage + " " + in.Cwd
	}
}

type pickRow struct {
	info   *catalog.Info
	prefix string // threaded: the branch drawing
}

type (
	listedMsg struct {
		all   bool
		seq   int
		infos []catalog.Info
		err   error
	}
	searchDueMsg struct{ seq int }
	searchedMsg  struct {
		seq   int
		ranks map[string]int
		err   error
	}
	renamedMsg struct {
		path, name string
		err        error
	}
	removedMsg struct {
		path    string
		trashed catalog.Trashed
		err     error
	}
	restoredMsg struct {
		trashed catalog.Trashed
		err     error
	}
)

// searchDelay lets typing settle before the full-text index is asked.
const searchDelay = 120 * time.Millisecond

// searchLimit bounds the full-text hits a query ranks sessions by.
const searchLimit = 5000

func newPicker(st *store, th theme, opt PickerOptions) *Picker {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	q := textinput.New()
	q.Prompt = "Search: "
	q.Placeholder = `words, "a phrase" or re:pattern`
	noBlink(&q)
	q.Focus()
	in := textinput.New()
	noBlink(&in)
	in.Prompt = "New name: "
	return &Picker{opt: opt, st: st, th: th, all: opt.Scope.All, query: q, input: in,
		spin: spinner.New(spinner.WithSpinner(spinner.Dot)), previews: newPreviewCache(st)}
}

// Init starts loading the listing of the first scope.
func (p *Picker) Init() tea.Cmd { return p.load() }

func (p *Picker) scope() catalog.Scope {
	s := p.opt.Scope
	s.All = p.all
	return s
}

func (p *Picker) current() *scopeList {
	if p.all {
		return &p.scopes[1]
	}
	return &p.scopes[0]
}

// load lists the current scope in the background (the index answers at once;
// building it reports progress).
func (p *Picker) load() tea.Cmd {
	sl := p.current()
	sl.loading = true
	p.listSeq++
	seq, all, scope := p.listSeq, p.all, p.scope()
	return tea.Batch(p.spin.Tick, func() tea.Msg {
		infos, err := p.st.list(scope)
		return listedMsg{all: all, seq: seq, infos: infos, err: err}
	})
}

func (p *Picker) busy() bool {
	return p.current().loading || p.searching || p.previews.busy()
}

// Update handles a message for the picker.
func (p *Picker) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.width, p.height = msg.Width, msg.Height
		p.query.SetWidth(max(msg.Width-10, 10))
		p.input.SetWidth(max(msg.Width-12, 10))
		return nil
	case spinner.TickMsg:
		if !p.busy() {
			return nil
		}
		var cmd tea.Cmd
		p.spin, cmd = p.spin.Update(msg)
		return cmd
	case listedMsg:
		sl := &p.scopes[0]
		if msg.all {
			sl = &p.scopes[1]
		}
		if msg.seq != p.listSeq && sl.loaded {
			return nil // a newer listing is on its way
		}
		sl.loading, sl.loaded, sl.infos, sl.err = false, true, msg.infos, msg.err
		sl.index()
		p.refilter()
		if msg.all == p.all && p.query.Value() != "" {
			return p.searchNow()
		}
		return p.previewCmd()
	case searchDueMsg:
		if msg.seq != p.searchSeq {
			return nil
		}
		return p.searchNow()
	case searchedMsg:
		if msg.seq != p.searchSeq {
			return nil
		}
		p.searching = false
		if msg.err != nil {
			p.setStatus(true, "full-text search: %v", msg.err)
		}
		p.ranks = msg.ranks
		p.refilter()
		return p.previewCmd()
	case renamedMsg:
		if msg.err != nil {
			p.setStatus(true, "rename: %v", msg.err)
			return nil
		}
		for i := range p.scopes {
			sl := &p.scopes[i]
			for j := range sl.infos {
				if sl.infos[j].Path == msg.path {
					sl.infos[j].Name = msg.name
				}
			}
			sl.index()
		}
		p.previews.forget(msg.path)
		p.setStatus(false, "renamed to %s", msg.name)
		p.refilter()
		return p.previewCmd()
	case removedMsg:
		if msg.err != nil {
			p.setStatus(true, "delete: %v", msg.err)
			return nil
		}
		for i := range p.scopes {
			p.scopes[i].infos = slices.DeleteFunc(p.scopes[i].infos, func(in catalog.Info) bool { return in.Path == msg.path })
			p.scopes[i].index()
		}
		p.trashed = append(p.trashed, msg.trashed)
		p.setStatus(false, "moved %s to the trash; ctrl+z restores it", filepath.Base(msg.path))
		p.refilter()
		return p.previewCmd()
	case restoredMsg:
		if msg.err != nil {
			p.setStatus(true, "restore: %v", msg.err)
			return nil
		}
		p.setStatus(false, "restored %s", shortHome(msg.trashed.Path))
		p.want = msg.trashed.Path
		p.scopes = [2]scopeList{}
		return p.load()
	case previewMsg:
		p.previews.done(msg)
		return nil
	case tea.KeyPressMsg:
		return p.key(msg)
	case tea.PasteMsg:
		return p.edit(msg)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			p.move(-3)
		case tea.MouseWheelDown:
			p.move(3)
		}
		return p.previewCmd()
	}
	return nil
}

func (p *Picker) setStatus(failed bool, format string, args ...any) {
	p.status, p.failed = oneLine(fmt.Sprintf(format, args...)), failed // errors can quote a file
}

func (p *Picker) key(k tea.KeyPressMsg) tea.Cmd {
	switch p.mode {
	case pickRename:
		switch k.String() {
		case "esc":
			p.mode = pickBrowse
			return nil
		case "enter":
			p.mode = pickBrowse
			name := strings.TrimSpace(p.input.Value())
			r := p.selected()
			if name == "" || r == nil {
				return nil // pi ignores an empty name
			}
			path := r.info.Path
			return func() tea.Msg { return renamedMsg{path: path, name: name, err: rename(path, name)} }
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(k)
		return cmd
	case pickConfirmDelete:
		p.mode = pickBrowse
		r := p.selected()
		if r == nil || (k.String() != "y" && k.String() != "enter") {
			p.setStatus(false, "kept")
			return nil
		}
		path := r.info.Path
		return func() tea.Msg {
			t, err := p.st.remove(path)
			return removedMsg{path: path, trashed: t, err: err}
		}
	}
	p.status = ""
	switch k.String() {
	case "up":
		p.move(-1)
	case "down":
		p.move(1)
	case "pgup":
		p.move(-p.listHeight())
	case "pgdown":
		p.move(p.listHeight())
	case "home":
		p.move(-len(p.rows))
	case "end":
		p.move(len(p.rows))
	case "tab":
		p.all = !p.all
		p.sel, p.top, p.ranks = 0, 0, nil
		if sl := p.current(); !sl.loaded && !sl.loading {
			p.refilter()
			return tea.Batch(p.load(), p.searchLater())
		}
		p.refilter()
		return tea.Batch(p.searchLater(), p.previewCmd())
	case "ctrl+s":
		p.sort = (p.sort + 1) % 3
		p.refilter()
	case "ctrl+n":
		p.named = !p.named
		p.refilter()
	case "ctrl+p":
		p.showPath = !p.showPath
	case "ctrl+r":
		if !p.opt.Rename {
			return nil
		}
		if r := p.selected(); r != nil {
			p.mode = pickRename
			p.input.SetValue(clean(r.info.Name))
			p.input.CursorEnd()
			return p.input.Focus()
		}
	case "ctrl+d":
		return p.askDelete()
	case "ctrl+backspace":
		if p.query.Value() == "" {
			return p.askDelete()
		}
		return p.edit(k)
	case "ctrl+z":
		if len(p.trashed) == 0 {
			p.setStatus(false, "nothing deleted here to restore")
			return nil
		}
		t := p.trashed[len(p.trashed)-1]
		p.trashed = p.trashed[:len(p.trashed)-1]
		return func() tea.Msg {
			r, err := p.st.restore(t.ID)
			return restoredMsg{trashed: r, err: err}
		}
	case "enter":
		if r := p.selected(); r != nil && p.opt.Choose != nil {
			return p.opt.Choose(*r.info)
		}
		return nil
	case "esc":
		if p.query.Value() != "" {
			p.query.SetValue("")
			return p.queryChanged()
		}
		if p.opt.Cancel != nil {
			return p.opt.Cancel()
		}
		return tea.Quit
	default:
		return p.edit(k)
	}
	return p.previewCmd()
}

func (p *Picker) askDelete() tea.Cmd {
	r := p.selected()
	if r == nil {
		return nil
	}
	if p.opt.Current != "" && r.info.Path == p.opt.Current {
		p.setStatus(true, "cannot delete the session in use")
		return nil
	}
	p.mode = pickConfirmDelete
	return nil
}

// edit gives a key or a paste to the search field.
func (p *Picker) edit(msg tea.Msg) tea.Cmd {
	before := p.query.Value()
	var cmd tea.Cmd
	p.query, cmd = p.query.Update(msg)
	if p.query.Value() == before {
		return cmd
	}
	return tea.Batch(cmd, p.queryChanged())
}

func (p *Picker) queryChanged() tea.Cmd {
	p.sel, p.top, p.ranks = 0, 0, nil
	p.refilter()
	return tea.Batch(p.searchLater(), p.previewCmd())
}

// searchLater asks the full-text index once typing settles.
func (p *Picker) searchLater() tea.Cmd {
	p.searchSeq++
	p.searching = false
	if strings.TrimSpace(p.query.Value()) == "" || p.queryErr {
		return nil
	}
	seq := p.searchSeq
	return tea.Tick(searchDelay, func(time.Time) tea.Msg { return searchDueMsg{seq} })
}

func (p *Picker) searchNow() tea.Cmd {
	if strings.TrimSpace(p.query.Value()) == "" || p.queryErr {
		return nil
	}
	p.searching = true
	seq, q, scope := p.searchSeq, p.parsed, p.scope()
	return tea.Batch(p.spin.Tick, func() tea.Msg {
		hits, err := p.st.search(scope, q, searchLimit)
		ranks := map[string]int{}
		for i, h := range hits {
			if _, ok := ranks[h.Path]; !ok {
				ranks[h.Path] = i
			}
		}
		return searchedMsg{seq: seq, ranks: ranks, err: err}
	})
}

// refilter applies the query, the named filter and the sort to the listing.
func (p *Picker) refilter() {
	keep := p.want
	if r := p.selected(); r != nil && keep == "" {
		keep = r.info.Path
	}
	text := strings.TrimSpace(p.query.Value())
	p.queryErr = false
	if text != "" {
		q, err := catalog.ParseQuery(text)
		switch {
		case errors.Is(err, catalog.ErrEmptyQuery):
			text = ""
		case err != nil:
			p.queryErr = true
		default:
			p.parsed = q
		}
	}
	infos, hay := p.current().infos, p.current().hay
	type scored struct {
		in   *catalog.Info
		rank int // -1 for a match in the title, name, id or folder
	}
	var list []scored
	for i := range infos {
		in := &infos[i]
		if p.named && strings.TrimSpace(in.Name) == "" {
			continue
		}
		if text == "" {
			list = append(list, scored{in, 0})
			continue
		}
		if p.queryErr {
			continue
		}
		if _, ok := p.parsed.Match(hay[i]); ok {
			list = append(list, scored{in, -1})
		} else if r, ok := p.ranks[in.Path]; ok {
			list = append(list, scored{in, r})
		}
	}
	p.rows = p.rows[:0]
	switch {
	case p.sort == sortThreaded && text == "":
		ins := make([]*catalog.Info, len(list))
		for i, s := range list {
			ins[i] = s.in
		}
		p.rows = threaded(ins)
	default:
		if p.sort != sortRecent && text != "" {
			slices.SortStableFunc(list, func(a, b scored) int { return a.rank - b.rank }) // ties stay newest first
		}
		for _, s := range list {
			p.rows = append(p.rows, pickRow{info: s.in})
		}
	}
	p.sel = 0
	for i, r := range p.rows {
		if r.info.Path == keep {
			p.sel = i
			if keep == p.want {
				p.want = ""
			}
		}
	}
	p.move(0)
}

// threaded orders sessions as a tree of forks (parentSessionPath), newest
// first at each level, as pi's threaded sort does.
func threaded(ins []*catalog.Info) []pickRow {
	byPath := map[string]*catalog.Info{}
	for _, in := range ins {
		byPath[filepath.Clean(in.Path)] = in
	}
	kids := map[*catalog.Info][]*catalog.Info{}
	var roots []*catalog.Info
	for _, in := range ins {
		parent := byPath[filepath.Clean(in.ParentSessionPath)]
		if in.ParentSessionPath == "" || parent == nil || parent == in {
			roots = append(roots, in)
			continue
		}
		kids[parent] = append(kids[parent], in)
	}
	rows := make([]pickRow, 0, len(ins))
	seen := map[*catalog.Info]bool{}
	var walk func(list []*catalog.Info, indent string, top bool)
	walk = func(list []*catalog.Info, indent string, top bool) {
		for i, in := range list {
			if seen[in] {
				continue // a cycle of parents: each session once
			}
			seen[in] = true
			prefix, next := "", ""
			if !top {
				last := i == len(list)-1
				prefix, next = indent+"├─ ", indent+"│  "
				if last {
					prefix, next = indent+"└─ ", indent+"   "
				}
			}
			rows = append(rows, pickRow{info: in, prefix: prefix})
			walk(kids[in], next, false)
		}
	}
	walk(roots, "", true)
	for _, in := range ins { // sessions caught in a cycle of parents
		if !seen[in] {
			rows = append(rows, pickRow{info: in})
		}
	}
	return rows
}

func (p *Picker) selected() *pickRow {
	if p.sel < 0 || p.sel >= len(p.rows) {
		return nil
	}
	return &p.rows[p.sel]
}

// Selected returns the session under the cursor, if any.
func (p *Picker) Selected() (catalog.Info, bool) {
	if r := p.selected(); r != nil {
		return *r.info, true
	}
	return catalog.Info{}, false
}

func (p *Picker) move(d int) { p.scroller.move(d, len(p.rows), p.listHeight()) }

// previewHeight is the rows the preview takes, when the window has room.
func (p *Picker) previewHeight() int {
	if p.height < 16 {
		return 0
	}
	return min(10, p.height/3)
}

// listHeight is the rows left for sessions: title, search, preview, status.
func (p *Picker) listHeight() int {
	return max(p.height-4-p.previewHeight(), 1)
}

func (p *Picker) previewCmd() tea.Cmd {
	if p.previewHeight() == 0 {
		return nil
	}
	r := p.selected()
	if r == nil {
		return nil
	}
	if cmd := p.previews.want(r.info.Path); cmd != nil {
		return tea.Batch(cmd, p.spin.Tick)
	}
	return nil
}

// View draws the picker at its size.
func (p *Picker) View() string {
	if p.width == 0 {
		return ""
	}
	var b strings.Builder
	line := func(s string) {
		b.WriteString(fit(s, p.width))
		b.WriteByte('\n')
	}
	scopeName := "Current Folder"
	if p.all {
		scopeName = "All"
	}
	sl := p.current()
	var right []string
	right = append(right, "sort: "+p.sort.String())
	if p.named {
		right = append(right, "named only")
	}
	if p.showPath {
		right = append(right, "paths")
	}
	title := p.th.title.Render("Sessions (" + scopeName + ")")
	r := p.th.muted.Render(strings.Join(right, " · "))
	line(title + strings.Repeat(" ", max(p.width-lipWidth(title)-lipWidth(r), 1)) + r)
	if p.mode == pickRename {
		line(p.input.View())
	} else {
		line(p.query.View())
	}
	lh := p.listHeight()
	shown := 0
	switch {
	case sl.err != nil:
		line(p.th.failure.Render(oneLine(fmt.Sprintf("cannot list the sessions: %v", sl.err))))
		shown++
	case !sl.loaded:
		line(p.spin.View() + " " + p.loadingText())
		shown++
	case len(p.rows) == 0:
		msg := "No sessions"
		switch {
		case p.queryErr:
			msg = "No sessions: the regular expression does not compile"
		case p.query.Value() != "":
			msg = "No sessions match"
		case p.named:
			msg = "No named sessions (ctrl+n shows all)"
		}
		if !p.all {
			msg += " · press Tab to view all"
		}
		line(p.th.muted.Render(msg))
		shown++
	default:
		for i := p.top; i < len(p.rows) && i < p.top+lh; i++ {
			line(p.row(i))
			shown++
		}
	}
	for ; shown < lh; shown++ {
		line("")
	}
	if ph := p.previewHeight(); ph > 0 {
		line(p.th.dim.Render(strings.Repeat("─", p.width)))
		pl := p.previewLines(ph - 1)
		for i := range ph - 1 {
			if i < len(pl) {
				line(pl[i])
			} else {
				line("")
			}
		}
	}
	b.WriteString(fit(p.statusLine(), p.width))
	return b.String()
}

func (p *Picker) loadingText() string {
	if done, total, ok := p.st.progress(); ok {
		return fmt.Sprintf("Indexing sessions %d/%d", done, total)
	}
	return "Loading sessions"
}

func (p *Picker) statusLine() string {
	switch {
	case p.mode == pickConfirmDelete:
		r := p.selected()
		return p.th.failure.Render(fmt.Sprintf("Move \"%s\" to the trash? y to confirm, any other key keeps it", p.title(r.info)))
	case p.mode == pickRename:
		return p.th.muted.Render("enter saves the name · esc cancels")
	case p.status != "" && p.failed:
		return p.th.failure.Render(p.status)
	case p.status != "":
		return p.th.success.Render(p.status)
	}
	var parts []string
	if len(p.rows) > 0 {
		parts = append(parts, fmt.Sprintf("(%d/%d)", p.sel+1, len(p.rows)))
	}
	if p.searching {
		parts = append(parts, p.spin.View()+" searching the full text")
	} else if p.current().loading && p.current().loaded {
		parts = append(parts, p.spin.View()+" "+p.loadingText())
	}
	parts = append(parts, "tab scope · ctrl+s sort · enter open · ? keys")
	return p.th.muted.Render(strings.Join(parts, "  "))
}

// title is what a row calls a session: its name, else its first message.
func (p *Picker) title(in *catalog.Info) string {
	if n := strings.TrimSpace(in.Name); n != "" {
		return oneLine(n)
	}
	if in.FirstMessage == "" {
		return "(no messages)"
	}
	return oneLine(in.FirstMessage)
}

func (p *Picker) row(i int) string {
	r := p.rows[i]
	in := r.info
	mark := "  "
	if i == p.sel {
		mark = p.th.accent.Render("› ")
	}
	title := p.title(in)
	ts := p.th.plain
	switch {
	case p.mode == pickConfirmDelete && i == p.sel:
		ts = p.th.failure
	case in.Path == p.opt.Current:
		ts = p.th.accent
	case strings.TrimSpace(in.Name) != "":
		ts = p.th.warning
	}
	right := fmt.Sprintf("%4d msgs %10s", in.MessageCount, catalog.Age(in.Modified.Time(), p.opt.Now()))
	where := ""
	switch {
	case p.showPath:
		where = clean(shortHome(in.Path))
	case p.all:
		where = clean(shortHome(in.Cwd))
	}
	if where != "" {
		// a column of its own, at most a third of the row (paths: a half)
		ww := min(28, p.width/3)
		if p.showPath {
			ww = p.width / 2
		}
		right = fit(where, ww) + " " + right
	}
	rightW := lipWidth(right)
	left := mark + p.th.dim.Render(r.prefix) + ts.Render(title)
	room := p.width - rightW - 1
	if room < 10 {
		return fit(left, p.width)
	}
	return fit(left, room) + " " + p.th.muted.Render(right)
}
