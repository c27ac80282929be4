package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/arborlog/arbor/importers"
)

// Other agents' sessions are listed and searched in place, read-only, through
// the same index: each file is read by package importers as the pi session an
// import would write, and that is what the listing folds and the text index
// holds. Offsets into such a file are offsets into that conversion, and a
// changed file is read whole again.

// SourcesEnv names the configured folders of other agents' sessions, a path
// list. Unset, the usual folders that exist are read; set and empty, none.
const SourcesEnv = "ARBOR_SOURCES"

// ForeignRoots returns the folders of rho, Claude Code and Codex sessions that
// listings include: $ARBOR_SOURCES, else ~/.claude/projects, ~/.codex/sessions
// and ~/.rho/sessions where they exist.
func ForeignRoots() []string {
	if v, ok := os.LookupEnv(SourcesEnv); ok {
		var out []string
		for _, p := range filepath.SplitList(v) {
			if p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range []string{filepath.Join(h, ".claude", "projects"), filepath.Join(h, ".codex", "sessions"), filepath.Join(h, ".rho", "sessions")} {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// foreignDepth is how deep a foreign root is walked: Codex keeps
// sessions/YYYY/MM/DD/rollout-*.jsonl, Claude Code <project>/<session>/subagents/.
const foreignDepth = 5

// foreignHead converts the file at path when its first bytes say it is another
// agent's session; ok is false for any other file.
func foreignFile(path string) (pi []byte, ok bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	head := make([]byte, 4096)
	n, _ := fh.ReadAt(head, 0)
	var mtime time.Time
	if fi, err := fh.Stat(); err == nil {
		mtime = fi.ModTime()
	}
	fh.Close()
	if n == 0 {
		return nil, false, nil
	}
	return foreign(path, head[:n], mtime)
}

func isForeignRoot(root string) bool { return slices.Contains(ForeignRoots(), root) }

// foreign converts the file at path when it is a rho, Claude Code or Codex
// session (from its first bytes, head); ok is false for any other file.
func foreign(path string, head []byte, mtime time.Time) (pi []byte, ok bool, err error) {
	f, err := importers.Detect(path, head)
	if err != nil {
		return nil, false, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, true, err
	}
	s, err := importers.Read(f, importers.Input{Path: path, Data: data, ModTime: mtime})
	if err != nil {
		return nil, true, err
	}
	return s.Bytes(), true, nil
}
