package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	arbor "github.com/arborlog/arbor/store"
)

// store runs the catalog and the session files for the views, from the
// commands bubbletea runs in the background. A Catalog is for one goroutine,
// so every use of it holds mu; the indexer's progress is kept where the view
// can read it while a listing runs.
type store struct {
	mu            sync.Mutex
	cat           *catalog.Catalog
	closed        bool // its owner is done with the catalog: nothing more uses it
	done, total   atomic.Int64
	indexing      atomic.Bool
	summarizer    compaction.Summarizer
	contextWindow int
}

func newStore(cat *catalog.Catalog, summarizer compaction.Summarizer) *store {
	s := &store{cat: cat, summarizer: summarizer}
	if cat == nil {
		return s // a tree alone needs no catalog
	}
	cat.Progress = func(done, total int) {
		s.done.Store(int64(done))
		s.total.Store(int64(total))
		s.indexing.Store(done < total)
	}
	return s
}

// progress is the indexer's "read n of N files", when it is reading.
func (s *store) progress() (done, total int, ok bool) {
	if !s.indexing.Load() {
		return 0, 0, false
	}
	return int(s.done.Load()), int(s.total.Load()), true
}

func (s *store) list(scope catalog.Scope) ([]catalog.Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errStoreClosed
	}
	defer s.indexing.Store(false)
	return s.cat.List(scope, catalog.ListOptions{})
}

// errStoreClosed answers a background listing that starts after its owner
// let go of the catalog (a command still queued when the program ends).
var errStoreClosed = errors.New("the session catalog is closed")

// close waits for the catalog's use in progress to end; after it the store
// lists nothing, so its owner may close the catalog.
func (s *store) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *store) search(scope catalog.Scope, q catalog.Query, limit int) ([]catalog.Hit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errStoreClosed
	}
	defer s.indexing.Store(false)
	return s.cat.Search(scope, q, catalog.SearchOptions{Limit: limit})
}

func (s *store) remove(path string) (catalog.Trashed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.Remove(path)
}

func (s *store) restore(id string) (catalog.Trashed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat.Restore(id)
}

// edit opens a session for writing (its writer lock), runs f and closes it,
// as the commands do.
func edit(path string, f func(s *jsonl.Session) error) error {
	s, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	err = f(s)
	if cerr := s.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close %s: %w", path, cerr)
	}
	return err
}

// rename gives the session at path a name (a session_info entry, as pi's /name).
func rename(path, name string) error {
	return edit(path, func(s *jsonl.Session) error {
		_, err := s.SetSessionName(name)
		return err
	})
}

// readSession loads a session without a lock and without writing.
func readSession(path string) (*session.Log, error) {
	l, err := jsonl.ReadSession(path)
	if errors.Is(err, jsonl.ErrNotSession) {
		return nil, fmt.Errorf("%w ('arbor fsck' shows what it holds)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return l, nil
}

// Summary says whether moving the leaf summarizes the branch left behind.
type Summary int

const (
	NoSummary      Summary = iota // just move the leaf
	Summarize                     // a branch_summary of what is left behind, at the target
	SummarizeAsked                // the same, with the user's instructions
)

// errMarker refuses to move the leaf onto one of arbor's markers.
var errMarker = errors.New("that entry is an arbor marker, not part of the conversation; pick another")

// branch moves the active cursor's leaf of the session at path to target, as
// `arbor branch` does, and returns the new leaf's id (the branch_summary's
// when one was written).
func (s *store) branch(path, target string, sum Summary, instructions string, toEdit bool) (leaf, text string, err error) {
	leaf = target
	err = edit(path, func(f *jsonl.Session) error {
		e := f.Entry(target)
		if e == nil {
			return fmt.Errorf("no entry %s in %s (the file changed?)", target, path)
		}
		if e.IsMarker() {
			return errMarker
		}
		if toEdit && e.Type == session.TypeMessage && e.Role() == session.RoleUser {
			// pi's /tree: the leaf goes to before the message, whose text
			// the user edits and sends again.
			leaf, text = e.ParentID, arbor.MessageText(e)
		}
		c := f.Cursor("")
		if sum == NoSummary {
			if leaf == "" {
				return c.ResetLeaf()
			}
			return c.BranchTo(leaf)
		}
		m, err := compaction.BranchWithSummary(context.Background(), c, leaf, compaction.BranchOptions{
			Summarizer: s.summarizer, Instructions: instructions, ContextWindow: s.contextWindow})
		if err != nil {
			return fmt.Errorf("summarize the branch left behind in %s: %w; nothing was written", path, err)
		}
		if m.Summary != nil {
			leaf = m.Summary.ID
		}
		return nil
	})
	return leaf, text, err
}

// label sets (or, when empty, clears) an entry's label.
func setLabel(path, target, label string) error {
	return edit(path, func(f *jsonl.Session) error {
		_, err := f.Cursor("").SetLabel(target, label)
		return err
	})
}
