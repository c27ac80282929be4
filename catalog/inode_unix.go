//go:build unix

package catalog

import (
	"io/fs"
	"syscall"
)

// inode identifies the file behind a path, so a file replaced by a rename is
// read again even when its size and time match the index.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// links is the file's link count (1 when unknown).
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// noFollow makes an open fail on a symlink rather than follow it.
const noFollow = syscall.O_NOFOLLOW
