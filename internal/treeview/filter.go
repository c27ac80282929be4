package treeview

import (
	"fmt"
	"strings"

	"github.com/arborlog/arbor/session"
)

// Filter names the entries a tree view shows, after pi's tree selector.
type Filter string

const (
	FilterDefault Filter = "default" // hides bookkeeping entries and tool-call-only assistant messages
	FilterNoTools Filter = "no-tools"
	FilterUser    Filter = "user"
	FilterLabeled Filter = "labeled"
	FilterAll     Filter = "all"
)

// Filters lists every filter, in the order a user cycles through them.
var Filters = []Filter{FilterDefault, FilterNoTools, FilterUser, FilterLabeled, FilterAll}

// ParseFilter returns the filter named s; the error lists the names.
func ParseFilter(s string) (Filter, error) {
	for _, f := range Filters {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Filters))
	for i, f := range Filters {
		names[i] = string(f)
	}
	return "", fmt.Errorf("--filter must be one of %s, not %q", strings.Join(names, ", "), s)
}

// visible applies the filter to one entry.
func (v *View) visible(n *session.TreeNode) bool {
	var msg msgView
	return v.visibleMsg(n, v.message(n.Entry, &msg, nil))
}

// visibleMsg is visible with the entry's message already decoded (nil when it
// has none or it is unreadable).
func (v *View) visibleMsg(n *session.TreeNode, m *msgView) bool {
	e := n.Entry
	switch v.filter {
	case FilterAll:
		return true
	case FilterLabeled:
		return n.Label != ""
	case FilterUser:
		return e.Role() == session.RoleUser
	}
	switch e.Type {
	case session.TypeLabel, session.TypeCustom, session.TypeModelChange, session.TypeThinkingLevelChange, session.TypeSessionInfo,
		session.TypeContextEdit, session.TypeUsage: // as pi 1.6.0 hides them (usage entries even more: everywhere but --filter all)
		return false
	}
	if v.filter == FilterNoTools && e.Role() == session.RoleToolResult {
		return false
	}
	if e.Role() == session.RoleAssistant && (v.leaf == nil || e.ID != v.leaf.ID) {
		if m != nil && !hasText(m.content) && !failed(m.StopReason) {
			return false
		}
	}
	return true
}

func hasText(c session.Content) bool {
	if c.IsString {
		return strings.TrimSpace(c.String) != ""
	}
	for _, b := range c.Blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			return true
		}
	}
	return false
}

// failed reports an assistant message that ended other than by stopping or
// calling a tool: an error, an abort, or running out of output tokens.
func failed(stopReason string) bool {
	return stopReason != "" && stopReason != "stop" && stopReason != "toolUse"
}
