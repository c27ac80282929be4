//go:build unix

package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osuser "os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileKey names a file by its device and inode: every path to it (symlinks,
// hard links, "..") gives the same key.
func fileKey(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%x-%d", uint64(st.Dev), uint64(st.Ino))
	}
	return "unknown"
}

// alive reports whether a process with pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// commandLine is this process's command line, for other writers' errors.
// lockHolderPID finds, in the kernel's table of file locks (/proc/locks on
// Linux), the process holding a flock on the file with key. listed is false
// when the table cannot be read or does not list the lock. The table names
// the process that took the lock; when that one has exited and the lock lives
// on in a descriptor a child inherited, the holder is a live process whose
// descriptor holds it (its /proc/<pid>/fdinfo lists the lock), or 0 when none
// can be seen: never a process that is gone.
func lockHolderPID(key string) (pid int, listed bool) {
	var dev, ino uint64
	if _, err := fmt.Sscanf(key, "%x-%d", &dev, &ino); err != nil {
		return 0, false
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if pid, ok := flockLine(sc.Text(), want); ok {
			if pid > 0 && alive(pid) {
				return pid, true
			}
			return inheritedHolder(dev, ino, want), true
		}
	}
	return 0, false
}

// flockLine reads a line of the lock table ("1: FLOCK  ADVISORY  WRITE 19478
// fe:00:9977938 0 EOF"; a waiter's line has "->" after the number, and
// fdinfo's lines start with "lock:"): the pid of a write flock on want.
func flockLine(line, want string) (int, bool) {
	f := strings.Fields(strings.TrimPrefix(line, "lock:"))
	if len(f) < 6 || f[1] != "FLOCK" || f[3] != "WRITE" || f[5] != want {
		return 0, false
	}
	pid, err := strconv.Atoi(f[4])
	return pid, err == nil
}

// inheritedHolder looks through the processes' open descriptors for one on
// the file (dev, ino) that holds its flock, and returns that process.
func inheritedHolder(dev, ino uint64, want string) int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid <= 0 {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()), &st) != nil || uint64(st.Dev) != dev || uint64(st.Ino) != ino {
				continue
			}
			info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
			if err != nil {
				continue
			}
			for ln := range strings.Lines(string(info)) {
				if _, ok := flockLine(strings.TrimSpace(ln), want); ok && alive(pid) {
					return pid
				}
			}
		}
	}
	return 0
}

// lockTableReadable reports whether the kernel's lock table can be read: then
// a lock it does not list is free.
func lockTableReadable() bool {
	_, err := os.Stat("/proc/locks")
	return err == nil
}

// processHolder describes a process from the process table, for a holder that
// left no arbor record.
func processHolder(pid int) Holder {
	h := Holder{PID: pid}
	h.Host, _ = os.Hostname()
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		h.Program = ProgramOf(strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"))
	}
	if st, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			h.User = userName(sys.Uid)
		}
	}
	if t, ok := processStart(pid); ok {
		h.Started = t.UTC().Format(time.RFC3339)
	}
	return h
}

// processStart reads when pid started: field 22 of /proc/<pid>/stat, in clock
// ticks after the boot time in /proc/stat.
func processStart(pid int) (time.Time, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, false
	}
	// The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return time.Time{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, ln := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(ln, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			const hz = 100 // USER_HZ, fixed at 100 in the kernel's user interface
			return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / hz), true
		}
	}
	return time.Time{}, false
}

// sameProgram reports whether pid runs this process's own executable.
func sameProgram(pid int) bool {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	a, err := os.Stat(self)
	if err != nil {
		return false
	}
	b, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil && os.SameFile(a, b)
}

// userName names the user with uid, or gives the number.
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := osuser.LookupId(id); err == nil {
		return u.Username
	}
	return id
}
