//go:build !unix

package jsonl

// noFollow is not available here: OpenRegular checks the file with Lstat first.
const noFollow = 0
