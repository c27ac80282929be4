// Package treeview reduces a session's tree to what a person reads, in the
// words of pi's tree selector: the filters (default, no-tools, user, labeled,
// all), the active path and leaf, other cursors' leaves, labels, and one line
// per entry naming its role, text, tool call or bookkeeping. `arbor tree` and
// the browser's tree view (internal/tui) draw the same View.
//
// Rows carry the session's text as it is: every front end must sanitize a
// Span's text before it reaches a terminal.
package treeview
