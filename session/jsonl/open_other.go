//go:build !unix

package jsonl

// noFollow is not available here: OpenRegular checks the file with Lstat first.
const noFollow = 0

// noWait is not available here: the file is checked with Stat first.
const noWait = 0
