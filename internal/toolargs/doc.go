// Package toolargs is the one table of tool-argument shapes: for a tool's
// name (pi's, Claude Code's or Codex's, in any case) it says what kind of tool
// it is and which argument fields hold the command, the path, the pattern or
// the subject a one-line view of the call shows. The tree, the Markdown
// export, the chat and the HTML page (which gets the table in its data) all
// read calls through it, so a call reads the same everywhere.
//
// It promises that pi's seven tools (read, write, edit, bash, grep, find,
// ls; Pi reports them) read as they always have, that a name is in one row
// only, and that reading never fails: arguments that do not have the shape
// the table says (not an object, a path that is a number) show nothing, and
// the caller falls back to the arguments as written. Results have two
// helpers beside the table: ImageNote for an image a text view cannot draw,
// and SourceNotes for blocks an importer kept beside a message (a Claude
// Code tool_reference).
package toolargs
