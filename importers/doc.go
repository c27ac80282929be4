// Package importers reads other coding agents' session files (rho, Claude Code,
// Codex) into arbor's session model: each file becomes a pi session (format v3)
// that arbor reads in place and 'arbor import' writes out, so pi and arbor can
// continue it.
//
// Use: ReadFile(path) detects the format and reads a file; Read(format,
// Input{...}) reads bytes; Session.Log gives the pi session, Session.Bytes its
// file (ExampleRead).
//
// # Guarantees
//
//   - A source file is only ever read.
//   - Nothing is dropped silently: a line a reader understands becomes entries or
//     is counted as skipped (interface records, duplicates, telemetry); a line it
//     does not understand is kept as a custom entry holding the original line; a
//     line that is not JSON is reported with its number (Session.Damage).
//   - Every entry records its origin (source line, source id) and the header
//     records the source file, format and session id ("importedFrom").
//   - Reading the same source twice gives the same bytes: session and entry ids
//     are derived from the source, so a re-import is idempotent and a source
//     that grew only adds entries (ids are assigned in source order).
//   - An imported session belongs to one source file, the one its header
//     names: another file claiming the same session id (a copy, a reused or
//     forged id) is never merged into it but becomes a session of its own, and
//     Write reports the conflict (Written.Conflict).
//   - Every tool result follows the assistant message with its call; the leaf
//     the source continues from is the last line, which is where pi continues.
//
// # Mapping
//
// Claude Code: one API response written one block a line (same message id) is
// one assistant message; tool results and other lines that hang off single
// lines of it are chained, so only real rewinds (two prompts under one parent)
// are branches; progress, attachment and system lines in the chain are skipped
// and their children re-linked to the nearest kept ancestor; compact_boundary
// plus its summary is a compaction (a preserved tail is its kept part); summary
// lines are titles of other sessions and skipped; the session's own name
// (agent-name, custom-title over ai-title) is a session_info entry; lines
// outside the chain go in before the next prompt or response, never between a
// response and its tool results; a subagent transcript is a
// session whose parentSession is its parent's file and whose header names the
// tool call that started it; usage is counted once per message and request.
//
// Codex: the first session_meta is the identity; response items are the
// history (event_msg copies of messages are imported only when no response item
// has them); turn_context model changes become model_change entries; injected
// context and developer messages are custom_message entries (in the context,
// not shown as prompts); thread_rolled_back moves the position back before the
// dropped turns, which stay as an abandoned branch ended by a marker; compacted
// is a compaction whose summary is the message or the replacement history.
//
// rho: Entry payloads map one to one (system messages and LeafMoved are kept as
// custom entries); the leaf is the continued cursor's; cursors and the
// per-cursor resolution overlays, which pi has no form for, are listed in the
// header with the entries' imported ids.
package importers
