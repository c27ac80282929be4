// Package session is arbor's domain: a coding-agent session as an append-only
// tree of entries, in the pi agent's JSONL format (version 3), with no I/O.
//
// # Use
//
// A Log is one session: New makes one in memory, package session/jsonl keeps
// it in a file. An agent appends its conversation with the typed appends,
// which write each message in the shape pi's own code writes (Example):
//
//	l.AppendUser("Fix the test.")
//	l.AppendAssistant(session.Assistant{Content: []session.Block{
//		session.ToolCallBlock("call_1", "bash", map[string]string{"command": "go test ./..."})},
//		StopReason: session.StopToolUse})
//	l.AppendToolResult(session.ToolResult{ToolCallID: "call_1", ToolName: "bash",
//		Content: []session.Block{session.TextBlock("ok")}})
//
// and asks Context for what to send the model next. AppendBashExecution,
// AppendCustomMessage, AppendCustom, AppendModelChange and
// AppendThinkingLevelChange write the other kinds of entry; CustomState and
// CustomMessages read an extension's entries back by type. NewCursor opens a
// second position in the same log whose appends form their own branch; every
// append and read exists on a Cursor as on the Log (which uses the active
// cursor). Package window fits a context into a budget, package compaction
// summarizes the older part of a branch.
//
// # Format
//
// A session file is UTF-8 JSONL. Line 1 is the header
//
//	{"type":"session","version":3,"id":"<uuid>","timestamp":"<ISO>","cwd":"/abs","parentSession":"/abs/p.jsonl"}
//
// and every other line is an entry whose first fields are
// "type","id","parentId","timestamp" (and "cursor" for entries written through
// a cursor other than main). Entry types: message, thinking_level_change,
// model_change, compaction, branch_summary, custom, custom_message, label,
// session_info, and pi 1.6.0's usage and context_edit; unknown types and fields
// are kept exactly as read.
//
// # Guarantees
//
//   - Reading never changes a byte. Each Entry keeps the raw JSON it was read as
//     and message bodies are decoded only when used; raw JSON passes through to
//     output unchanged.
//   - Load never fails: bad lines are skipped and reported (Report), the first
//     entry with an id wins over later duplicates, parent loops are cut at the
//     loop's first entry in the file, entries with unknown parents become roots,
//     and versions 1 and 2 are migrated in memory.
//   - Building a context from a leaf (Log.Context, Log.ContextAt) gives exactly
//     what pi 1.6.0's buildSessionContext gives on the same file: the
//     projection (Log.Projection) of the path after the latest compaction, with
//     its system checkpoint and context edits applied. ForModel is pi's
//     convertToLlm; SystemPrompt replays the system messages.
//
// # Cursors
//
// A cursor is a named position in the one shared log (from the rho agent). The
// default cursor is main. Log.NewCursor creates one at the active leaf,
// Cursor.Rename names it, Cursor.BranchTo and Cursor.ResetLeaf move its leaf,
// Log.Switch makes it the active one; the session's own name is
// Log.SetSessionName's. Moving, creating, renaming or switching a cursor, and
// setting an entry's resolution for a cursor, append arbor marker entries
// (custom entries with customType arbor.leaf, arbor.cursor, arbor.resolution),
// so the state survives a restart while pi, which ignores them, still builds the
// same context from the file's last line. The active cursor is the one that
// wrote the last line: appending or moving through a cursor makes it active;
// creating or renaming a cursor or setting its resolutions does not (a marker
// written through another cursor is followed by one that marks the active
// leaf again).
//
// A Log does no I/O: appends go through the Store it was made with
// (WithStore, given to New, Load, Copy or Branched; nothing switches it off
// later); package session/jsonl provides the file store, package pgstore the
// database one.
package session
