// Package checkpoint records the state of a working folder and puts it back:
// the workspace half of arbor's rewind. It owns the store of snapshots and
// their contents; it knows nothing of sessions (the agent and the arbor
// command keep each snapshot's id in a session's custom entry).
//
// # What a snapshot holds
//
// Store.Snapshot walks a folder and records every folder, regular file and
// symlink under it (path, mode with the executable bit, symlink target,
// size, mtime, inode and, for files, the SHA-256 of the content), except:
// the root's .git, whatever .gitignore files, .git/info/exclude and
// .arborignore files exclude (gitignore syntax; an .arborignore wins over
// the .gitignore of its folder), and files larger than Options.MaxFileBytes,
// which are listed in Manifest.Skipped, never silently dropped. Sockets,
// pipes and devices are not recorded.
//
// Detection is by stat, as git's index does: given the previous snapshot
// (Options.Base), a file whose size, mtime, inode and mode are unchanged
// keeps its hash without being read, unless it was modified within 10 ms of
// that snapshot (git's "racily clean" case). A snapshot equal to its base is
// the base: no object is written.
//
// # The store
//
// Everything lives under one folder (arbor uses $ARBOR_DIR/checkpoints):
// objects/<first two hex digits>/<sha256>, each written once (0600 files,
// 0700 folders, a temporary file renamed into place), one byte of kind then
// zlib. A file under 32 KB is one object; a larger one is a list of chunks
// cut at content-defined boundaries, so a one-line edit of a large file adds
// one chunk, not a copy. A manifest is an object too, in a small binary form
// (manifestMagic, then varint-framed fields); its hash is the snapshot's id.
// Contents are checked against their hash when read (ErrCorrupt).
//
// # Restore
//
// Store.Plan snapshots the folder as it is (Plan.Before, stored first, so a
// restore never loses anything: restoring Before.ID undoes it) and lists the
// changes (Diff: created, modified with +/- lines of text, deleted, mode);
// given the caller's last checkpoint (RestoreOptions.Since) it also lists
// what changed since then outside the checkpoints (Plan.Outside). Store.Apply
// then makes the folder the target: files rewritten or recreated with their
// modes, symlinks, empty and binary files, folders created and removed. It
// never touches .git, never replaces an ignored or too-large file (Result.Kept)
// and writes only through an os.Root, so no symlink leads a write outside the
// folder.
//
// Store.GC removes the objects no kept snapshot refers to.
package checkpoint
