//go:build !unix

package jsonl

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// fileKey names a file by its base name here (no inodes): a record found
// through another path to the same file is not recognised.
func fileKey(info fs.FileInfo) string {
	sum := sha256.Sum256([]byte(info.Name()))
	return fmt.Sprintf("%x", sum[:8])
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}

// lockHolderPID is unknown without a kernel lock table: records name the holder.
func lockHolderPID(string) (int, bool) { return 0, false }

func processHolder(pid int) Holder { return Holder{PID: pid} }

// lockTableReadable: there is no kernel lock table to read here.
func lockTableReadable() bool { return false }

// sameProgram is not known here.
func sameProgram(int) bool { return false }
