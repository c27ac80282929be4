package compaction

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/arborlog/arbor/session"
)

// Kind says what a summary is for; each kind has its own prompt.
type Kind int

const (
	// History is the part of the branch a compaction replaces.
	History Kind = iota
	// TurnPrefix is the start of a turn a compaction cut in two; its end is kept.
	TurnPrefix
	// Branch is the part of a branch the user left for another.
	Branch
)

func (k Kind) String() string {
	switch k {
	case History:
		return "history"
	case TurnPrefix:
		return "turn prefix"
	case Branch:
		return "branch"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Request is one summary to write.
type Request struct {
	Kind     Kind
	Messages []session.ContextMessage
	// PreviousSummary is the last compaction's summary (History only): the new
	// summary updates it rather than starting over.
	PreviousSummary *string
	// Instructions focus the summary ("Additional focus: …"); for a Branch with
	// ReplaceInstructions they replace the prompt instead.
	Instructions        string
	ReplaceInstructions bool
	// MaxTokens bounds the reply: pi's 0.8·reserve for history, 0.5·reserve for
	// a turn prefix and 2,048 for a branch.
	MaxTokens int
}

// A Summarizer writes one summary. Implementations must not return an empty
// summary without an error.
type Summarizer interface {
	Summarize(ctx context.Context, r Request) (string, error)
}

// ErrEmptySummary is returned when a summarizer produced no text.
var ErrEmptySummary = errors.New("compaction: empty summary")

// Result is a compaction ready to append: pi's CompactionResult.
type Result struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int
	ReadFiles        []string
	ModifiedFiles    []string
	// Usage is what the summaries cost, summed over the model calls, when the
	// summarizer reports it (a MeteredSummarizer); the compaction records it
	// as pi 1.6.0 does.
	Usage *session.Usage
}

// A MeteredSummarizer also reports what each summary cost.
type MeteredSummarizer interface {
	Summarizer
	SummarizeMetered(ctx context.Context, r Request) (string, session.Usage, error)
}

// noPriorHistory is what pi puts in place of the history summary of a split
// turn that has nothing before it.
const noPriorHistory = "No prior history."

// Summarize writes the summary for a plan as pi's compact() does: the history
// (updating PreviousSummary) and, for a split turn, the turn's prefix, both at
// once, merged as "<history>\n\n---\n\n**Turn Context (split turn):**\n\n<prefix>";
// then the file lists. reserveTokens sets the replies' budgets.
func Summarize(ctx context.Context, p *Plan, s Summarizer, instructions string, reserveTokens int) (Result, error) {
	if p.FirstKeptEntryID == "" {
		return Result{}, ErrNoIDs
	}
	history := Request{Kind: History, Messages: p.MessagesToSummarize, PreviousSummary: p.PreviousSummary,
		Instructions: instructions, MaxTokens: reserveTokens * 8 / 10}
	var summary string
	var usage meter
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		prefix := Request{Kind: TurnPrefix, Messages: p.TurnPrefixMessages, MaxTokens: reserveTokens / 2}
		var hist, pre string
		var herr, perr error
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wg.Go(func() {
			if len(p.MessagesToSummarize) == 0 {
				hist = noPriorHistory
				return
			}
			if hist, herr = summarizeOne(ctx, s, history, &usage); herr != nil {
				cancel()
			}
		})
		wg.Go(func() {
			if pre, perr = summarizeOne(ctx, s, prefix, &usage); perr != nil {
				cancel()
			}
		})
		wg.Wait()
		if err := errors.Join(herr, perr); err != nil {
			return Result{}, err
		}
		summary = hist + "\n\n---\n\n**Turn Context (split turn):**\n\n" + pre
	} else {
		var err error
		if summary, err = summarizeOne(ctx, s, history, &usage); err != nil {
			return Result{}, err
		}
	}
	return Result{Summary: summary + FormatFiles(p.ReadFiles, p.ModifiedFiles), FirstKeptEntryID: p.FirstKeptEntryID,
		TokensBefore: p.TokensBefore, ReadFiles: p.ReadFiles, ModifiedFiles: p.ModifiedFiles, Usage: usage.total()}, nil
}

// meter sums the usage of summaries written at once.
type meter struct {
	mu  sync.Mutex
	sum *session.Usage
}

func (m *meter) add(u session.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sum == nil {
		m.sum = &session.Usage{}
	}
	m.sum.Input += u.Input
	m.sum.Output += u.Output
	m.sum.CacheRead += u.CacheRead
	m.sum.CacheWrite += u.CacheWrite
	m.sum.TotalTokens += u.TotalTokens
	m.sum.Cost.Input += u.Cost.Input
	m.sum.Cost.Output += u.Cost.Output
	m.sum.Cost.CacheRead += u.Cost.CacheRead
	m.sum.Cost.CacheWrite += u.Cost.CacheWrite
	m.sum.Cost.Total += u.Cost.Total
}

func (m *meter) total() *session.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sum
}

func summarizeOne(ctx context.Context, s Summarizer, r Request, usage *meter) (string, error) {
	var text string
	var err error
	if ms, ok := s.(MeteredSummarizer); ok {
		var u session.Usage
		text, u, err = ms.SummarizeMetered(ctx, r)
		if err == nil {
			usage.add(u)
		}
	} else {
		text, err = s.Summarize(ctx, r)
	}
	if err != nil {
		return "", fmt.Errorf("summarize %s: %w", r.Kind, err)
	}
	if text == "" {
		return "", fmt.Errorf("summarize %s: %w", r.Kind, ErrEmptySummary)
	}
	return text, nil
}
