// Package compaction summarizes the older part of a session's branch so the
// context fits the model's window again, and does it the way pi 0.73.1 does so
// that arbor and pi read each other's compactions.
//
// Use: Compact(ctx, cursor, Options{}) plans, summarizes (mechanically unless
// Options.Summarizer asks a model) and appends the compaction in one call;
// NeedsCompaction says when to; Undo takes the last one back (ExampleCompact).
//
// # What it promises
//
//   - Prepare plans exactly as pi's prepareCompaction on the same branch: the
//     boundary after a previous compaction (what it kept is summarized again),
//     cut points that are never a tool result, KeepRecentTokens, split turns and
//     their prefix, TokensBefore from pi's chars/4 estimator, and the files read
//     and modified.
//   - No compaction keeps a tool result without the assistant message that
//     called it: pi's cut, a caller's own firstKeptEntryId (SafeFirstKept, used
//     by Append) and an older file's compaction are all moved back to the call.
//   - Compactions are appended, never rewritten: Undo moves the leaf back to
//     where it was before the last compaction on the branch, restoring the exact
//     context it had, and the summarized entries stay in the tree (Covers).
//   - Summarizers sit behind one interface: Mechanical, deterministic and
//     offline (the default), and Model, which sends pi's prompts to any
//     OpenAI-compatible chat-completions endpoint. A failed summary appends
//     nothing.
//   - Branch summaries (pi's /tree with a summary) describe the entries left
//     behind when the leaf moves to another branch.
package compaction
