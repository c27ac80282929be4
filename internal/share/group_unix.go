//go:build unix

package share

import (
	"os/exec"
	"syscall"
)

// ownGroup runs the command in a process group of its own, and stops the
// whole group when its context ends: a shell's children go with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
