package compaction

import (
	"context"
	"fmt"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// BranchOptions configure a branch summary (pi's branchSummary settings).
type BranchOptions struct {
	Summarizer          Summarizer // nil means Mechanical
	Instructions        string     // focus for the summary
	ReplaceInstructions bool       // Instructions replace pi's prompt instead of adding to it
	ContextWindow       int        // the model's window; 0 means 128,000 as in pi
	ReserveTokens       int        // 0 means 16,384
}

// noContent is pi's summary of a branch with nothing to summarize.
const noContent = "No content to summarize"

// CollectBranch returns the entries a move from oldLeafID to targetID ("" for
// before the first entry) leaves behind: from the old leaf back to, not including, the deepest entry both
// branches share, oldest first (pi's collectEntriesForBranchSummary; it does not
// stop at compactions, whose summaries become part of what is summarized).
func CollectBranch(l *session.Log, oldLeafID, targetID string) (entries []*session.Entry, commonAncestorID string) {
	if oldLeafID == "" {
		return nil, ""
	}
	onOld := map[string]bool{}
	for _, e := range l.PathTo(oldLeafID) {
		onOld[e.ID] = true
	}
	var target []*session.Entry
	if targetID != "" {
		target = l.PathTo(targetID)
	}
	for i := len(target) - 1; i >= 0; i-- {
		if onOld[target[i].ID] {
			commonAncestorID = target[i].ID
			break
		}
	}
	old := l.PathTo(oldLeafID)
	for i := len(old) - 1; i >= 0 && old[i].ID != commonAncestorID; i-- {
		entries = append(entries, old[i])
	}
	for i, j := 0, len(entries)-1; i < j; i, j = i+1, j-1 {
		entries[i], entries[j] = entries[j], entries[i]
	}
	return entries, commonAncestorID
}

// BranchMessages is pi's prepareBranchEntries: the messages of entries (oldest
// first) that fit tokenBudget (0: no limit), taken newest first and skipping tool
// results (the call says enough); a compaction or branch summary that does not
// fit is still taken while under 90% of the budget. The file lists come from
// every entry, including earlier branch summaries made by pi or arbor.
func BranchMessages(entries []*session.Entry, tokenBudget int) (msgs []session.ContextMessage, read, modified []string, tokens int) {
	ops := newFileOps()
	for _, e := range entries {
		if e.Type == session.TypeBranchSummary {
			ops.addDetails(compactionOf(e)) // same details and fromHook fields
		}
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Type == session.TypeMessage && e.Role() == session.RoleToolResult {
			continue
		}
		m, ok := e.AsMessage()
		if !ok {
			continue
		}
		ops.addMessage(m)
		t := EstimateTokens(m)
		if tokenBudget > 0 && tokens+t > tokenBudget {
			if (e.Type == session.TypeCompaction || e.Type == session.TypeBranchSummary) && float64(tokens) < float64(tokenBudget)*0.9 {
				msgs = append(msgs, m)
				tokens += t
			}
			break
		}
		msgs = append(msgs, m)
		tokens += t
	}
	for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
		msgs[i], msgs[j] = msgs[j], msgs[i]
	}
	read, modified = ops.lists()
	return msgs, read, modified, tokens
}

// BranchSummary is a summary of a branch left behind.
type BranchSummary struct {
	Summary       string
	ReadFiles     []string
	ModifiedFiles []string
}

// SummarizeBranch writes the summary of entries left behind (pi's
// generateBranchSummary): BranchSummaryPreamble, the summary, then the file
// lists; "No content to summarize" when no message fits.
func SummarizeBranch(ctx context.Context, entries []*session.Entry, o BranchOptions) (BranchSummary, error) {
	window, reserve := o.ContextWindow, o.ReserveTokens
	if window <= 0 {
		window = 128000
	}
	if reserve <= 0 {
		reserve = DefaultSettings.ReserveTokens
	}
	msgs, read, modified, _ := BranchMessages(entries, window-reserve)
	if len(msgs) == 0 {
		return BranchSummary{Summary: noContent, ReadFiles: []string{}, ModifiedFiles: []string{}}, nil
	}
	s := o.Summarizer
	if s == nil {
		s = Mechanical{}
	}
	text, err := summarizeOne(ctx, s, Request{Kind: Branch, Messages: msgs, Instructions: o.Instructions,
		ReplaceInstructions: o.ReplaceInstructions, MaxTokens: 2048}, &meter{})
	if err != nil {
		return BranchSummary{}, err
	}
	return BranchSummary{Summary: BranchSummaryPreamble + text + FormatFiles(read, modified), ReadFiles: read, ModifiedFiles: modified}, nil
}

// Moved describes what BranchWithSummary did.
type Moved struct {
	From, To string         // the leaf before and after
	Left     int            // entries left behind and summarized
	Summary  *session.Entry // the branch_summary appended, nil when nothing was left behind
}

// BranchWithSummary moves a cursor's leaf to targetID ("" for before
// the first entry), as pi's /tree
// does when asked to summarize: the entries left behind are summarized and the
// summary is appended as a branch_summary child of the target, which becomes
// the leaf. When nothing is left behind (the target is on the current branch
// below the leaf) the leaf just moves; when the target is the leaf nothing
// happens. A failed summary leaves the log unchanged.
func BranchWithSummary(ctx context.Context, c *session.Cursor, targetID string, o BranchOptions) (Moved, error) {
	l := c.Log()
	if targetID != "" && l.Entry(targetID) == nil {
		return Moved{}, fmt.Errorf("%w: %s", session.ErrNotFound, targetID)
	}
	m := Moved{To: targetID}
	if leaf := c.Leaf(); leaf != nil {
		m.From = leaf.ID
	}
	if m.From == targetID {
		return m, nil
	}
	entries, _ := CollectBranch(l, m.From, targetID)
	m.Left = len(entries)
	if len(entries) == 0 {
		if targetID == "" {
			return m, c.ResetLeaf()
		}
		return m, c.BranchTo(targetID)
	}
	bs, err := SummarizeBranch(ctx, entries, o)
	if err != nil {
		return Moved{}, err
	}
	details, err := json.Marshal(struct {
		ReadFiles     []string `json:"readFiles"`
		ModifiedFiles []string `json:"modifiedFiles"`
	}{nonNil(bs.ReadFiles), nonNil(bs.ModifiedFiles)})
	if err != nil {
		return Moved{}, fmt.Errorf("compaction: encode details: %w", err)
	}
	e, err := c.BranchWithSummary(targetID, bs.Summary, jsontext.Value(details), false)
	if err != nil {
		return Moved{}, err
	}
	m.Summary = e
	return m, nil
}
