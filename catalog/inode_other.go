//go:build !unix

package catalog

import "io/fs"

// inode is unknown here: files are told apart by size and time only.
func inode(fs.FileInfo) uint64 { return 0 }

// links is unknown here.
func links(fs.FileInfo) uint64 { return 1 }

// noFollow is not available here (the name was checked with Lstat).
const noFollow = 0
