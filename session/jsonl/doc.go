// Package jsonl stores sessions in files: it turns a file into a session.Log
// and persists what the log appends.
//
// # Guarantees
//
//   - One write(2) per entry, the whole line with its newline, on a descriptor
//     opened with O_APPEND. A failed or short write, or a failed fsync, cuts the
//     file back to its last acknowledged line, so it stays valid.
//   - Durability policy: Always fsyncs after every entry, Turn (the default)
//     after every assistant message, every compaction and on close, Never
//     leaves it to the operating system.
//   - A new session writes nothing until its first assistant message (unless
//     Immediate), then the header and every entry so far, once. A reopened file
//     never gets its header or old entries written twice.
//   - One writer per session: an exclusive advisory lock on <file>.lock,
//     recording pid, host and start time, held while the session is open for
//     writing; a second writer fails at once naming the holder. Readers (Read)
//     take no lock and never write.
//   - Before each append, entries another program appended since the last write
//     are indexed first.
//   - Damage is repaired only at the first append and never by deleting a
//     byte: a torn last line is copied to <file>.torn, a file where nothing
//     parses is renamed to <file>.corrupt, the original is kept as <file>.bak (or
//     <file>.v<N>.bak for a migration) before any whole-file rewrite. Rewrites
//     and sidecars are written through a temporary file, fsync, rename and a
//     folder fsync, so a sidecar that exists holds every byte it keeps; a
//     crash at worst leaves a stray <name>.tmp beside it.
//     A file of a newer format version opens read-only.
//   - Session.Repair applies those repairs at once, without an append (what
//     `arbor fsck --repair` does).
//
// # Testing seams
//
// Every file operation of the store goes through FS and File (WithFS), so
// tests make writes fail part-way, syncs fail and disks fill up, and record the
// order of operations of a whole-file rewrite.
package jsonl
