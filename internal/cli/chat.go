package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/internal/tui"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/arborlog/arbor/window/blob"
	"github.com/spf13/cobra"
)

// runChat is `arbor` on a terminal: the interactive agent on the session the
// flags choose (-c, --session, --fork, --no-session, --name), or on the one
// picked first with -r (the picker alone, tui.Pick; quitting it ends arbor).
func runChat(c *cobra.Command, o *agentOptions) error {
	if db, err := o.g.database(); err != nil || db != nil {
		if err != nil {
			return err
		}
		return usagef("the interactive agent works on session files; with --store use arbor -p or --mode rpc")
	}
	mk, err := o.factory(c)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir := o.g.SessionDir
	if dir == "" {
		dir = jsonl.Dir(catalog.SessionsRoot(), cwd)
	}
	cat := catalog.Open("")
	defer cat.Close()
	var s *agentSession
	if o.resume {
		path, err := tui.Pick(tui.BrowseOptions{Catalog: cat, Scope: o.g.scope(), Input: o.io.In, Output: o.io.Out, Env: os.Environ()})
		if err != nil || path == "" {
			return err // quit without choosing
		}
		f, err := jsonl.Open(path)
		if err != nil {
			return err
		}
		s = &agentSession{log: f.Log, store: f, blobs: blob.Store{Dir: filepath.Join(catalog.Home(), "blobs")}}
		o.warnCwd(f.Log.Header().Cwd, cwd)
	} else if s, err = o.openSession(cwd); err != nil {
		return err
	}
	if o.name != "" {
		if _, err := s.log.SetSessionName(o.name); err != nil {
			s.close()
			return err
		}
	}
	opt := tui.ChatOptions{NewAgent: mk, Models: o.models(), Cwd: cwd, Dir: dir,
		Scope: o.g.scope(), Export: chatExport, ShareCommand: o.shareCommand, Catalog: cat,
		Input: o.io.In, Output: o.io.Out, Env: os.Environ()}
	opt.Blobs = s.blobs
	if f, ok := s.store.(*jsonl.Session); ok {
		opt.Session = f
	}
	return tui.RunChat(opt)
}

// chatExport is the chat's /export: arbor export's rules (a new file, never
// the session itself), HTML unless the name ends in .jsonl, which writes the
// active branch as pi's /export does.
func chatExport(l *session.Log, path, out string) (string, error) {
	f := export.FormatHTML
	opts := export.Options{}
	if strings.HasSuffix(out, ".jsonl") {
		f, opts.BranchOnly = export.FormatJSONL, true
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	opts.Source = abs
	written, _, err := exportFile(l, path, out, f, opts, false, path)
	return written, err
}
