// Package gitproject finds what identifies a folder's project beyond its
// path: its git repository's root commit and origin remote. It is asked when
// a session is made, so it must be cheap and never fail: a folder outside any
// repository costs a few stat calls, and git absent, slow or confused gives a
// project with fewer fields, never an error.
package gitproject

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arborlog/arbor/session"
)

// Timeout bounds the git commands together: a huge history (rev-list walks
// it) gives a project without its root commit rather than a slow start.
const Timeout = 2 * time.Second

// Of returns the project of the folder dir (zero outside a repository).
func Of(dir string) session.Project {
	if !inRepository(dir) {
		return session.Project{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var p session.Project
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// Several roots (merged histories): rev-list lists the newest
		// first, so the last is the oldest.
		if out := git(ctx, dir, "rev-list", "--max-parents=0", "HEAD"); len(out) > 0 {
			lines := strings.Fields(string(out))
			p.GitRoot = lines[len(lines)-1]
		}
	}()
	var remote string
	go func() {
		defer wg.Done()
		remote = strings.TrimSpace(string(git(ctx, dir, "config", "--get", "remote.origin.url")))
	}()
	wg.Wait()
	p.Remote = CleanRemote(remote)
	if !isHash(p.GitRoot) {
		p.GitRoot = ""
	}
	return p
}

// inRepository reports whether dir or a folder above it holds a .git entry:
// the cheap test that spares folders outside a repository a git process.
func inRepository(dir string) bool {
	d, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

func git(ctx context.Context, dir string, args ...string) []byte {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	// Never prompt, never take the index lock a running git needs.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	return bytes.TrimSpace(out)
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CleanRemote returns a remote URL without its secrets, for a header that
// may be shared: an http(s) URL loses its whole user part (a token is often
// written as the user name), any other URL its password. A scp-like address
// (user@host:path) keeps its user, which holds no secret, and loses a
// password written as user:password@host:path.
func CleanRemote(remote string) string {
	if remote == "" || strings.ContainsAny(remote, "\n\r") {
		return ""
	}
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil {
			return "" // unparsable: it may hold a secret where it cannot be cut out
		}
		if u.User != nil {
			if u.Scheme == "http" || u.Scheme == "https" {
				u.User = nil
			} else {
				u.User = url.User(u.User.Username())
			}
		}
		return u.String()
	}
	// [user@]host:path, or user:password@host:path: a colon before the
	// first @ with another after it is a password's.
	if at := strings.IndexByte(remote, '@'); at >= 0 {
		if c := strings.IndexByte(remote[:at], ':'); c >= 0 && strings.Contains(remote[at+1:], ":") {
			return remote[:c] + remote[at:]
		}
	}
	return remote
}
