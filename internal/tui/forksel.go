package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	arbor "github.com/arborlog/arbor/store"
)

// ForkOptions configure a fork selector.
type ForkOptions struct {
	Log *session.Log // the session: the user messages of its active branch are listed
	// Choose is called with the user message picked with Enter and its whole
	// text; the front end then forks before it (arbor.ForkBefore) and puts
	// the text in its editor.
	Choose func(e *session.Entry, text string) tea.Cmd
	// Cancel is called on Esc with an empty filter (nil: quit the program).
	Cancel func() tea.Cmd
	Now    func() time.Time // for ages; time.Now when nil
}

// ForkSelector lists the user messages of a session's active branch (pi's
// /fork selector), oldest first and the newest selected, each as its first
// line and its age; typing filters them (every word must match), Enter
// chooses one, Esc clears the filter or cancels.
type ForkSelector struct {
	opt           ForkOptions
	th            theme
	width, height int
	msgs          []forkMsg
	rows          []int // indexes into msgs that match the filter
	filter        textinput.Model
	scroller
}

type forkMsg struct {
	entry *session.Entry
	text  string // the whole text, for the editor
	first string // its first line that is not blank, cleaned
	lower string // the text the filter matches, lower case
	when  time.Time
}

// NewForkSelector lists the user messages on the active branch of opt.Log.
// Its Update returns only a command; its View draws it at the last
// tea.WindowSizeMsg.
func NewForkSelector(dark bool, opt ForkOptions) *ForkSelector {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	in := textinput.New()
	in.Prompt = "Filter: "
	in.Placeholder = "type words to narrow the list"
	noBlink(&in)
	in.Focus()
	f := &ForkSelector{opt: opt, th: newTheme(dark), filter: in}
	for _, e := range opt.Log.PathTo("") {
		if e.Role() != session.RoleUser {
			continue
		}
		text := arbor.MessageText(e)
		first := ""
		for _, ln := range strings.Split(text, "\n") {
			if strings.TrimSpace(ln) != "" {
				first = oneLine(ln)
				break
			}
		}
		when, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
		f.msgs = append(f.msgs, forkMsg{entry: e, text: text, first: first, lower: strings.ToLower(text), when: when})
	}
	f.refilter()
	return f
}

// SetDark picks the colours for a dark or a light background.
func (f *ForkSelector) SetDark(dark bool) { f.th = newTheme(dark) }

// Init has nothing to load: the session is in memory.
func (f *ForkSelector) Init() tea.Cmd { return nil }

// Len is the number of user messages listed before any filter.
func (f *ForkSelector) Len() int { return len(f.msgs) }

// Selected returns the user message under the cursor, if any.
func (f *ForkSelector) Selected() (*session.Entry, bool) {
	if f.sel < 0 || f.sel >= len(f.rows) {
		return nil, false
	}
	return f.msgs[f.rows[f.sel]].entry, true
}

// refilter keeps the messages every word of the filter is in, and selects
// the newest of them.
func (f *ForkSelector) refilter() {
	tokens := strings.Fields(strings.ToLower(f.filter.Value()))
	f.rows = f.rows[:0]
	for i, m := range f.msgs {
		if matchTokens(m.lower, tokens) {
			f.rows = append(f.rows, i)
		}
	}
	f.sel = len(f.rows) - 1
	f.move(0)
}

func (f *ForkSelector) listHeight() int { return max(f.height-3, 1) }

func (f *ForkSelector) move(d int) { f.scroller.move(d, len(f.rows), f.listHeight()) }

// Update handles a message for the selector.
func (f *ForkSelector) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		f.width, f.height = msg.Width, msg.Height
		f.filter.SetWidth(max(msg.Width-10, 10))
		f.move(0)
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			f.move(-3)
		case tea.MouseWheelDown:
			f.move(3)
		}
	case tea.PasteMsg:
		return f.edit(msg)
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up":
			f.move(-1)
		case "down":
			f.move(1)
		case "pgup":
			f.move(-f.listHeight())
		case "pgdown":
			f.move(f.listHeight())
		case "home":
			f.move(-len(f.rows))
		case "end":
			f.move(len(f.rows))
		case "enter":
			if f.sel >= 0 && f.sel < len(f.rows) && f.opt.Choose != nil {
				m := f.msgs[f.rows[f.sel]]
				return f.opt.Choose(m.entry, m.text)
			}
		case "esc":
			if f.filter.Value() != "" {
				f.filter.SetValue("")
				f.refilter()
				return nil
			}
			if f.opt.Cancel != nil {
				return f.opt.Cancel()
			}
			return tea.Quit
		default:
			return f.edit(msg)
		}
	}
	return nil
}

func (f *ForkSelector) edit(msg tea.Msg) tea.Cmd {
	before := f.filter.Value()
	var cmd tea.Cmd
	f.filter, cmd = f.filter.Update(msg)
	if f.filter.Value() != before {
		f.refilter()
	}
	return cmd
}

// View draws the selector at its size.
func (f *ForkSelector) View() string {
	if f.width == 0 {
		return ""
	}
	var b strings.Builder
	line := func(s string) {
		b.WriteString(fit(s, f.width))
		b.WriteByte('\n')
	}
	title := f.th.title.Render("Fork from a message")
	right := f.th.muted.Render("a new session starts before it, with the message in the editor")
	if lipWidth(title)+lipWidth(right)+1 > f.width {
		right = ""
	}
	line(title + strings.Repeat(" ", max(f.width-lipWidth(title)-lipWidth(right), 1)) + right)
	line(f.filter.View())
	h := f.listHeight()
	shown := 0
	switch {
	case len(f.msgs) == 0:
		line(f.th.muted.Render("No user messages on this branch yet: nothing to fork from"))
		shown++
	case len(f.rows) == 0:
		line(f.th.muted.Render("No message matches (esc clears the filter)"))
		shown++
	}
	for i := f.top; i < len(f.rows) && shown < h; i++ {
		line(f.row(i))
		shown++
	}
	for ; shown < h; shown++ {
		line("")
	}
	status := "enter fork · esc cancel · type to filter"
	if len(f.rows) > 0 {
		status = fmt.Sprintf("Message %d of %d  %s", f.sel+1, len(f.rows), status)
	}
	b.WriteString(fit(f.th.muted.Render(status), f.width))
	return b.String()
}

func (f *ForkSelector) row(i int) string {
	m := f.msgs[f.rows[i]]
	mark := "  "
	ts := f.th.plain
	if i == f.sel {
		mark, ts = f.th.accent.Render("› "), f.th.accent
	}
	text := m.first
	if text == "" {
		text = "(no text)"
	}
	age := fmt.Sprintf("%s %5s", stamp(m.when, f.opt.Now()), catalog.Age(m.when, f.opt.Now()))
	room := f.width - lipWidth(age) - 1
	if room < 10 {
		return fit(mark+ts.Render(text), f.width)
	}
	return fit(mark+ts.Render(text), room) + " " + f.th.muted.Render(age)
}

// stamp is when a message was written, in local time: the clock alone today,
// the day too before.
func stamp(t, now time.Time) string {
	if t.IsZero() {
		return "            "
	}
	t, now = t.Local(), now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return "       " + t.Format("15:04")
	}
	return t.Format("Jan _2 15:04")
}
