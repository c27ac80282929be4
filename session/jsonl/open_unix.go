//go:build unix

package jsonl

import "syscall"

// noFollow makes an open fail on a symlink and not wait on a FIFO.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// noWait makes an open not wait on a FIFO (a session path may name one);
// symlinks are followed.
const noWait = syscall.O_NONBLOCK
