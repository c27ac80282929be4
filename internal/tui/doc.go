// Package tui is arbor's terminal interface (bubbletea v2): the session picker,
// the tree view and the browser that joins them (`arbor browse`), and the chat
// of the interactive agent (`arbor` on a terminal, RunChat), built on the same
// models: Picker chooses a session and hands it to a callback (`/resume`; Pick
// runs it alone for `arbor -r`), Tree moves a cursor's leaf and hands back what
// it did (`/tree`), and ForkSelector picks a user message of the active branch
// to fork before (`/fork`, with store.ForkBefore).
//
// The chat runs the agent in a goroutine whose events reach Update as
// messages; only that goroutine appends to the session while a turn runs,
// and the chat reads the session (its conversation, its statistics) only
// between turns. Commands that change the session wait for the turn (Esc
// stops it). The chat holds the session's writer lock, and lets go of it
// while the tree, which writes through its own handle, is open.
//
// Promises:
//   - Nothing blocks the interface: listing, indexing, full-text search,
//     loading a session and every write run as commands in the background;
//     the view shows a spinner (and the indexer's progress) meanwhile.
//   - Text from a session (names, messages, paths, ids, labels) reaches the
//     screen only through clean, which escapes control characters, ESC, C1,
//     bidirectional controls and line separators. What the user types or
//     pastes into a text field (the editor, a search, a label) goes in
//     through typed, escaped the same way: the fields drop control characters
//     themselves but would draw a pasted U+202E as it is.
//   - The editor keeps what is pasted or typed byte for byte, tabs included
//     (the textarea would make them spaces; the editor holds a noncharacter
//     for each and draws it as ⇥). Tab completes a command after a slash and
//     is a tab elsewhere.
//   - The chat's own notes (a command's reply, an error) stay in the
//     conversation when it is drawn again from the session, each after the
//     entry that was the leaf when it was made.
//   - Writes go through the same libraries as the commands: a rename appends a
//     session_info (jsonl), delete and restore are the catalog's trash, a
//     branch moves the active cursor through the jsonl store, with a branch
//     summary from compaction when asked.
//   - Colours follow the terminal's background (light or dark); NO_COLOR and
//     terminals without colour get none (bubbletea's colour profile).
package tui
