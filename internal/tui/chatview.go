package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/arborlog/arbor/internal/statusbar"
)

// tail is the end of the conversation drawn at the current width: at least
// need lines when there are that many. Only the blocks it takes are drawn
// (each is kept until the width or the toggles change), so a frame costs
// what the screen shows, however long the chat.
func (c *Chat) tail(need int) []string {
	w := max(c.width, 20)
	var blocks [][]string
	n := 0
	add := func(it *item) bool {
		ls := c.render(it, w)
		blocks = append(blocks, ls)
		n += len(ls) + 1 // and the blank line above it
		return n >= need
	}
	done := false
	for i := len(c.liveOrder) - 1; i >= 0 && !done; i-- {
		done = add(c.live[c.liveOrder[i]])
	}
	for i := len(c.items) - 1; i >= 0 && !done; i-- {
		done = add(c.items[i])
	}
	out := make([]string, 0, n)
	for i := len(blocks) - 1; i >= 0; i-- {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, blocks[i]...)
	}
	return out
}

// bottom is what goes under the conversation: the working line, the queue,
// the editor, the completion list and the footer.
func (c *Chat) bottom() []string {
	var out []string
	if c.busy != idle {
		what := busyText[c.busy]
		el := time.Since(c.ran).Round(time.Second)
		out = append(out, c.spin.View()+" "+c.th.muted.Render(fmt.Sprintf("%s… %s · esc stops", what, el)))
	}
	for _, q := range c.queue {
		out = append(out, c.th.warning.Render("queued ")+c.th.muted.Render(oneLine(q)))
	}
	out = append(out, c.th.muted.Render(strings.Repeat("─", c.width)))
	out = append(out, strings.Split(c.editor.View(), "\n")...)
	comps := c.completions()
	w := usageWidth()
	for i, cm := range comps {
		row := fmt.Sprintf("  %-*s  %s", w, cm.usage(), cm.does)
		if i == min(c.compSel, len(comps)-1) {
			row = c.th.accent.Render("› " + row[2:])
		} else {
			row = c.th.muted.Render(row)
		}
		out = append(out, row)
	}
	out = append(out, c.footer()...)
	return out
}

// footer is the session's name, the model and the cursor, and the context
// status bar.
func (c *Chat) footer() []string {
	name := c.log.SessionName()
	if name == "" {
		name = "(unnamed)"
	}
	first := c.th.warning.Render(oneLine(name)) + c.th.muted.Render(" · "+oneLine(c.a.Model.ID)+" · cursor "+oneLine(cursorName(c.log)))
	if c.sess == nil {
		first += c.th.muted.Render(" · in memory")
	}
	// The bar's colour is dropped by the program's colour profile for NO_COLOR.
	return []string{first, statusbar.Fit(c.stats, true, c.width)}
}

func (c *Chat) convHeight() int {
	return max(c.height-len(c.bottom()), 1)
}

// View draws the chat, or the overlay over it.
func (c *Chat) View() tea.View {
	var s string
	switch c.over {
	case helpOverlay:
		s = c.helpView()
	case pickerOverlay:
		s = c.picker.View()
	case treeOverlay:
		s = c.tree.View()
	case forkOverlay:
		s = c.fork.View()
	default:
		s = c.chatView()
	}
	v := tea.NewView(s)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "arbor"
	return v
}

func (c *Chat) chatView() string {
	if c.width == 0 {
		return ""
	}
	bottom := c.bottom()
	h := max(c.height-len(bottom), 1)
	all := c.tail(c.scroll + h)
	c.scroll = min(c.scroll, max(len(all)-h, 0))
	end := len(all) - c.scroll
	start := max(end-h, 0)
	var b strings.Builder
	n := 0
	for ; n < h-(end-start); n++ {
		b.WriteString(fit("", c.width))
		b.WriteByte('\n')
	}
	for _, l := range all[start:end] {
		b.WriteString(fit(l, c.width))
		b.WriteByte('\n')
	}
	for i, l := range bottom {
		b.WriteString(fit(l, c.width))
		if i < len(bottom)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var chatKeys = []key{
	{"enter", "send the message (while the agent works it is queued and sent after the turn)"},
	{"shift+enter alt+enter ctrl+j", "a new line"},
	{"↑ ↓", "earlier and later messages, at the first or last line of the editor"},
	{"esc", "stop the agent's turn (the partial reply is kept)"},
	{"/", "commands: tab completes, ↑ ↓ choose"},
	{"tab", "a tab, where no command completes (pasted tabs are kept too)"},
	{"pgup pgdn", "scroll the conversation; the mouse wheel scrolls"},
	{"ctrl+t", "show or hide thinking"},
	{"ctrl+o", "show tool output in full, or cut"},
	{"ctrl+c", "clear the editor; when it is empty, quit"},
	{"ctrl+d", "quit, when the editor is empty"},
	{"?", "these keys (when the editor is empty); /help too"},
}

// usageWidth is the width of the longest command's usage: the completion
// list's first column, the same whichever commands it shows.
func usageWidth() int {
	w := 0
	for _, cm := range commands {
		w = max(w, lipWidth(cm.usage()))
	}
	return w
}

// helpRows are the rows of the help: the keys, then the commands.
func helpRows() []key {
	rows := slices.Clone(chatKeys)
	for _, cm := range commands {
		rows = append(rows, key{cm.usage(), cm.does})
	}
	return rows
}

// helpRoom is how many rows the help shows at once.
func (c *Chat) helpRoom() int { return max(c.height-2, 1) }

// scrollHelp moves the help by d rows, within its rows.
func (c *Chat) scrollHelp(d int) {
	c.helpTop = max(min(c.helpTop+d, len(helpRows())-c.helpRoom()), 0)
}

func (c *Chat) helpView() string {
	rows := helpRows()
	w := 0
	for _, k := range rows {
		w = max(w, lipWidth(k.keys))
	}
	// The rows between the title and the last line; taller than the
	// terminal, they scroll (helpTop, kept in range here).
	room := c.helpRoom()
	top := max(min(c.helpTop, len(rows)-room), 0) // the terminal may have grown
	var s strings.Builder
	s.WriteString(fit(c.th.title.Render("Keys and commands of the chat"), c.width) + "\n")
	for i := top; i < top+room; i++ {
		if i < len(rows) {
			k := rows[i]
			s.WriteString(fit(fmt.Sprintf("  %s  %s", c.th.key.Render(k.keys+strings.Repeat(" ", w-lipWidth(k.keys))), k.does), c.width) + "\n")
		} else {
			s.WriteString(fit("", c.width) + "\n")
		}
	}
	if len(rows) > room {
		s.WriteString(fit(c.th.muted.Render(fmt.Sprintf("rows %d–%d of %d · ↑↓ pgup pgdown scroll · any other key closes this",
			top+1, min(top+room, len(rows)), len(rows))), c.width))
		return s.String()
	}
	s.WriteString(fit(c.th.muted.Render("any key closes this"), c.width))
	return s.String()
}
