package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/checkpoint"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

type rewindOptions struct {
	io           *IO
	g            *Global
	arg, target  string
	files, conv  bool
	dryRun, diff bool
	undo         bool
}

type rewindChange struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Added   int    `json:"added,omitempty"`
	Removed int    `json:"removed,omitempty"`
	Binary  bool   `json:"binary,omitempty"`
	Patch   string `json:"patch,omitempty"`
}

type rewindResult struct {
	Entry    string         `json:"entry,omitempty"`
	Leaf     string         `json:"leaf"`
	Text     string         `json:"text,omitempty"`
	Changes  []rewindChange `json:"changes"`
	Outside  []rewindChange `json:"outside"`
	Kept     []string       `json:"kept"`
	Before   string         `json:"before,omitempty"` // the snapshot --undo restores
	DryRun   bool           `json:"dryRun"`
	Restored bool           `json:"restored"`
}

func newCmdRewind(ios *IO, g *Global) *cobra.Command {
	o := &rewindOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "rewind <session> (<entry-id> | --undo)",
		Short: "Put the working folder and the conversation back to an entry",
		Long: `Put the files of the session's working folder back to their state when the
entry was written (for a user message: when it was sent), and move the leaf
to before it, printing the message's text. --files or --conversation does
one half. Before anything is restored the folder is checkpointed, so
'arbor rewind <session> --undo' brings back exactly what was there; files
changed since the last checkpoint are named before they are replaced.
--dry-run lists what would change, --diff shows it.`,
		Example: `  arbor rewind my-session 3c9e01aa --dry-run
  arbor rewind my-session 3c9e01aa
  arbor rewind my-session --undo`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			switch {
			case len(args) == 2 && o.undo:
				return usagef("give an entry id or --undo, not both")
			case len(args) == 2:
				o.target = args[1]
			case !o.undo:
				return usagef("which entry? give its id (see 'arbor tree %s'), or --undo", o.arg)
			}
			if o.files && o.conv {
				return usagef("--files and --conversation each do one half; leave both out for both")
			}
			return runRewind(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.files, "files", false, "restore the files only; the leaf stays")
	f.BoolVar(&o.conv, "conversation", false, "move the leaf only; the files stay")
	f.BoolVar(&o.dryRun, "dry-run", false, "list what would change and change nothing")
	f.BoolVar(&o.diff, "diff", false, "show the changes as a diff")
	f.BoolVar(&o.undo, "undo", false, "restore the files as they were before the last rewind")
	return cmd
}

// checkpointsOf lists a session's checkpoint entries in file order.
func checkpointsOf(l *session.Log) []agent.CheckpointData {
	var out []agent.CheckpointData
	for _, e := range l.Entries() {
		if e.Type != session.TypeCustom || e.CustomType() != agent.CheckpointType {
			continue
		}
		var v struct {
			Data agent.CheckpointData `json:"data"`
		}
		if e.Decode(&v) == nil && v.Data.Snapshot != "" {
			out = append(out, v.Data)
		}
	}
	return out
}

func runRewind(o *rewindOptions) error {
	store, err := checkpoint.Open(filepath.Join(catalog.Home(), "checkpoints"))
	if err != nil {
		return err
	}
	var res rewindResult
	res.DryRun = o.dryRun
	err = o.g.edit(o.io, o.arg, func(s *writable) error {
		cps := checkpointsOf(s.Log)
		var target *agent.CheckpointData
		var entry *session.Entry
		if o.undo {
			for i := len(cps) - 1; i >= 0 && target == nil; i-- {
				if cps[i].When == agent.CheckpointRewind {
					target = &cps[i]
				}
			}
			if target == nil {
				return fmt.Errorf("%s has no rewind to undo", s.Path())
			}
		} else {
			if entry, err = targetOrErr(s.Log, s.Path(), o.target); err != nil {
				return err
			}
			res.Entry, res.Leaf = entry.ID, entry.ParentID
			for i := range cps {
				if cps[i].EntryID == entry.ID && cps[i].When != agent.CheckpointEnd && cps[i].When != agent.CheckpointRewind {
					target = &cps[i]
					break // the first: before the entry's first tool
				}
			}
			var m struct {
				Message struct {
					Role    string          `json:"role"`
					Content session.Content `json:"content"`
				} `json:"message"`
			}
			if entry.Decode(&m) == nil && m.Message.Role == "user" {
				res.Text = m.Message.Content.Text("\n")
			}
		}
		if !o.conv {
			if target == nil {
				return fmt.Errorf("entry %s in %s has no checkpoint of the files (checkpoints are taken in print mode as messages are sent and before bash, edit and write); --conversation moves the leaf only", o.target, s.Path())
			}
			if err := o.restoreFiles(store, s, cps, target, &res); err != nil {
				return err
			}
		}
		if o.dryRun || o.undo || o.files {
			return nil
		}
		c := s.Log.Cursor("")
		if entry.ParentID == "" {
			return c.ResetLeaf()
		}
		return c.BranchTo(entry.ParentID)
	})
	if err != nil {
		return err
	}
	return o.print(res)
}

func (o *rewindOptions) restoreFiles(store *checkpoint.Store, s *writable, cps []agent.CheckpointData, target *agent.CheckpointData, res *rewindResult) error {
	id, err := checkpoint.ParseHash(target.Snapshot)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Path(), err)
	}
	var since checkpoint.Hash
	if n := len(cps); n > 0 {
		since, _ = checkpoint.ParseHash(cps[n-1].Snapshot)
	}
	plan, err := store.Plan(target.Root, id, checkpoint.RestoreOptions{Since: since})
	if errors.Is(err, checkpoint.ErrNotFound) {
		return fmt.Errorf("the checkpoint of %s in %s is no longer stored (%s): only the conversation can be rewound (--conversation)", o.target, s.Path(), target.Snapshot)
	}
	if err != nil {
		return err
	}
	if res.Changes, err = o.changes(store, plan.Changes); err != nil {
		return err
	}
	if res.Outside, err = o.changes(store, plan.Outside); err != nil {
		return err
	}
	res.Before = plan.Before.ID.String()
	if o.dryRun {
		return nil
	}
	if !o.g.JSON {
		for _, c := range res.Outside {
			o.io.Warnf("%s changed since the last checkpoint (%s); kept in checkpoint %s", c.Path, c.Kind, res.Before[:12])
		}
	}
	// The state being replaced is recorded first: --undo finds it.
	if _, err := s.Log.AppendCustom(agent.CheckpointType, agent.CheckpointData{Snapshot: res.Before, Root: plan.Root,
		When: agent.CheckpointRewind, EntryID: res.Entry}); err != nil {
		return err
	}
	if err := s.Flush(); err != nil {
		return err
	}
	r, err := store.Apply(plan)
	if r != nil {
		res.Kept = r.Kept
	}
	res.Restored = err == nil
	return err
}

func (o *rewindOptions) changes(store *checkpoint.Store, cs []checkpoint.Change) ([]rewindChange, error) {
	out := []rewindChange{}
	for _, c := range cs {
		rc := rewindChange{Path: c.Path, Kind: string(c.Kind), Added: c.Added, Removed: c.Removed, Binary: c.Binary}
		if o.diff {
			p, err := store.Patch(c)
			if err != nil {
				return nil, err
			}
			rc.Patch = p
		}
		out = append(out, rc)
	}
	return out, nil
}

func (o *rewindOptions) print(res rewindResult) error {
	if res.Kept == nil {
		res.Kept = []string{}
	}
	if o.g.JSON {
		return o.io.JSON(res)
	}
	verb := "restored"
	if res.DryRun {
		verb = "would restore"
	}
	for _, c := range res.Changes {
		switch {
		case c.Binary:
			o.io.Printf("%s %-8s %s (binary)\n", verb, c.Kind, c.Path)
		case c.Kind == string(checkpoint.Modified) || c.Kind == string(checkpoint.Created) || c.Kind == string(checkpoint.Deleted):
			o.io.Printf("%s %-8s %s +%d -%d\n", verb, c.Kind, c.Path, c.Added, c.Removed)
		default:
			o.io.Printf("%s %-8s %s\n", verb, c.Kind, c.Path)
		}
		if c.Patch != "" {
			o.io.Printf("%s", c.Patch)
		}
	}
	for _, k := range res.Kept {
		o.io.Printf("kept %s (ignored or too large now)\n", k)
	}
	if res.Text != "" && !res.DryRun && !o.files && !o.undo {
		o.io.Printf("%s\n", res.Text)
	}
	return nil
}
