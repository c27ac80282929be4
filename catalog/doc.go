// Package catalog finds sessions: where they live, listing them, searching
// their text, resolving what a user typed to a file, and renaming, removing,
// restoring and archiving them.
//
// Use: Open(home) gives a Catalog; List, Latest and Search take a Scope (a
// folder, a project's cwd, or every project) and Resolve turns what a user
// typed into a file (Example).
//
// Sessions live in $ARBOR_DIR/sessions (default ~/.arbor) and in pi's folder
// (~/.pi/agent/sessions or $PI_CODING_AGENT_DIR/sessions), one folder per
// project; --session-dir names any other folder. A project's sessions are those
// whose header cwd is the project's folder: the folder names collide.
//
// Other agents' sessions (rho, Claude Code, Codex) in the folders $ARBOR_SOURCES
// names, by default ~/.claude/projects, ~/.codex/sessions and ~/.rho/sessions
// where they exist, are listed and searched too, read in place through package
// importers (see foreign.go).
//
// Listing reproduces pi's SessionManager.list() field for field (SPEC §9). Its
// cold path reads files in parallel with a scanner that validates each line
// (pi skips what JSON.parse rejects) while it finds the few fields a listing
// needs, so nothing is decoded that is not printed.
//
// The index ($ARBOR_DIR/index.db, SQLite in WAL mode, see index.go) is a cache:
// a file whose path, size, modification time and inode are unchanged is never
// read again; a file that only grew is read from where the index stopped (after
// checking that its first bytes and its last indexed line are still there); any
// other change reads it whole. A missing, damaged or outdated index is rebuilt
// silently, and several processes may use it at once. The full-text index
// (FTS5) follows the same offsets; it keeps no copy of the text.
//
// Removing moves a session and its sidecars to $ARBOR_DIR/trash; only Purge
// deletes. Archiving records the session in $ARBOR_DIR/archive.json, which,
// unlike the index, is not a cache.
package catalog
