// Package jsonl stores sessions in files: it turns a file into a session.Log
// and persists what the log appends.
//
// Create starts a session file in a folder, Open opens one for writing (taking
// the writer lock), ContinueRecent opens the newest of a folder or starts one,
// and Read loads one without the lock. A *Session is a *session.Log: append
// to it as to any log, and Close it to release the lock (Example).
//
// # Guarantees
//
//   - One write(2) per entry, the whole line with its newline, on a descriptor
//     opened with O_APPEND. The file never shrinks by a byte another program
//     could have written: a failed write or fsync takes back this append's
//     bytes only when they still end the file.
//   - Other programs (pi) may append at any time without a lock. Before each
//     append their complete lines are indexed; the store records where each
//     of its own lines landed, so theirs are never mistaken for its own. A
//     tail without its newline is read again for a moment (a write in flight),
//     then ended in place by the newline the store's next line begins with,
//     in the same write(2): never moved, never cut, never glued.
//   - Invariant: an id is acknowledged only when its line is in the file
//     whole with a newline right before it, read back after the write. A
//     line another writer began after the store's last look can still be
//     right before the write(2) (O_APPEND places it, and nothing can be seen
//     in time): the entry is then written again behind a newline of its own,
//     in the same write(2), before it is acknowledged, and the other line is
//     not lost: whole (its writer puts the newline first) it is written
//     again at once; unfinished, once its rest comes (put back together).
//     Once a writer that leaves its lines without their newline was seen,
//     every line of the store begins with a newline of its own (blank lines
//     are nothing to every reader), so none of its lines is landed on again.
//     A line written again never ends another writer's unfinished line: it
//     waits for a later append, or, closing, about a quarter of a second,
//     and is left out (reported in Repairs) rather than split one.
//   - An id is acknowledged only after the store has checked that the path
//     still names the file it wrote to (device and inode, a stat of the path
//     after every write): a file renamed over the session, removed, or in a
//     folder moved away (and replaced by a copy) is reported, and nothing
//     more is written through that session.
//   - Durability policy: Always fsyncs after every entry, Turn (the default)
//     after every assistant message, every compaction and on close, Never
//     leaves it to the operating system.
//   - A new session writes nothing until its first user or assistant message (unless
//     Immediate), then the header and every entry so far, once. A reopened file
//     never gets its header or old entries written twice.
//   - One writer per session: an exclusive flock on the session file itself,
//     so every path to it (symlink, hard link, "..") meets it and nothing is
//     created beside it; the holder records itself under $ARBOR_DIR/locks, and
//     a second writer fails at once naming it (pid from the kernel's lock
//     table, details from the record or the process table). Readers (Read)
//     and the source of a fork (BranchFrom) take no lock and never write.
//   - A file with content but no session line is refused (ErrNotSession) and
//     left unchanged.
//   - Damage is never repaired by deleting a byte: the original is kept as
//     <file>.bak (or <file>.v<N>.bak for a migration) before a whole-file
//     rewrite, which locks the new file before its rename and carries over
//     what others appended meanwhile. Session.Repair (fsck --repair) also
//     moves a torn last line to <file>.torn once the file stopped growing.
//     Rewrites and sidecars are written through a temporary file, fsync,
//     rename and a folder fsync; a sidecar never overwrites another, and a
//     symlink at its name is replaced, never followed. files.go owns every
//     sidecar name. A file of a newer format version opens read-only.
//
// # Testing seams
//
// Every file operation of the store goes through FS and File (WithFS), so
// tests make writes fail part-way, syncs fail and disks fill up, and record the
// order of operations of a whole-file rewrite.
package jsonl
