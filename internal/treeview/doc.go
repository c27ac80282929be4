// Package treeview reduces a session's tree to what a person reads, in the
// words of pi's tree selector: the filters (default, no-tools, user, labeled,
// all), the active path and leaf, other cursors' leaves, labels, and one line
// per entry naming its role, text, tool call or bookkeeping. `arbor tree` and
// the browser's tree view (internal/tui) draw the same View.
//
// A View is bounded: one small row per shown entry, each text kept only as far
// as a row of the View's width shows it (a large user message is read only that
// far), so `arbor tree` on a session of a million entries or of a 50 MB message
// costs what it prints. Width 0 keeps whole texts, for a front end that redraws
// at any width and searches them.
//
// Rows carry the session's text as it is: every front end prints a Span's text
// through internal/termtext before it reaches a terminal.
package treeview
