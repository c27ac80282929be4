package tui

import (
	"charm.land/lipgloss/v2"
	"github.com/arborlog/arbor/internal/treeview"
)

// theme holds the styles of every view. Colours are picked for the terminal's
// background; the program's colour profile drops them for NO_COLOR or a
// terminal without colour.
type theme struct {
	plain, title, accent, dim, muted, warning, failure, success, special, selected, key lipgloss.Style
	tree                                                                                map[treeview.Style]lipgloss.Style
}

func newTheme(dark bool) theme {
	ld := lipgloss.LightDark(dark)
	c := func(light, dark string) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(ld(lipgloss.Color(light), lipgloss.Color(dark)))
	}
	t := theme{
		plain:    lipgloss.NewStyle(),
		title:    lipgloss.NewStyle().Bold(true),
		accent:   c("#005f87", "#5fd7ff"),
		dim:      lipgloss.NewStyle().Faint(true),
		muted:    c("#6c6c6c", "#8a8a8a"),
		warning:  c("#875f00", "#ffd75f"),
		failure:  c("#af0000", "#ff5f5f"),
		success:  c("#005f00", "#87d787"),
		special:  c("#87005f", "#d787ff"),
		selected: lipgloss.NewStyle().Reverse(true),
		key:      c("#005f87", "#5fd7ff").Bold(true),
	}
	t.tree = map[treeview.Style]lipgloss.Style{
		treeview.Plain: lipgloss.NewStyle(), treeview.Dim: t.dim, treeview.Accent: t.accent, treeview.Success: t.success,
		treeview.Warning: t.warning, treeview.Muted: t.muted, treeview.Failure: t.failure, treeview.Special: t.special,
	}
	return t
}
