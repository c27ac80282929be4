package agent

import (
	"github.com/arborlog/arbor/checkpoint"
)

// CheckpointType is the customType of the session entries that record a
// checkpoint of the working folder; pi ignores them. ("arbor." types are
// reserved for markers, which move leaves.)
const CheckpointType = "arbor-checkpoint"

// Checkpoint moments, CheckpointData.When.
const (
	CheckpointUser   = "user"   // as a user message was sent
	CheckpointTool   = "tool"   // before a tool that may change files ran
	CheckpointEnd    = "end"    // when a run that ran such tools ended
	CheckpointRewind = "rewind" // the folder before a rewind replaced it
)

// CheckpointData is the data of an arbor.checkpoint entry.
type CheckpointData struct {
	Snapshot string `json:"snapshot"` // the checkpoint store's snapshot id
	Root     string `json:"root"`
	When     string `json:"when"`
	// EntryID is the entry whose moment this is: the user message, or the
	// assistant message holding the tool call.
	EntryID    string `json:"entryId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Checkpoints records the working folder at a run's moments (see
// CheckpointData.When) in Store, each as a custom entry of the session.
type Checkpoints struct {
	Store        *checkpoint.Store
	Root         string
	MaxFileBytes int64
	// Failed is told of a checkpoint that could not be taken; the run goes on.
	Failed func(error)

	last  checkpoint.Hash
	dirty bool // a tool that may change files ran since the last checkpoint
}

// take snapshots the folder; the zero Hash when it failed (reported).
func (c *Checkpoints) take() checkpoint.Hash {
	m, err := c.Store.Snapshot(c.Root, checkpoint.Options{MaxFileBytes: c.MaxFileBytes, Base: c.last})
	if err != nil {
		if c.Failed != nil {
			c.Failed(err)
		}
		return checkpoint.Hash{}
	}
	c.last = m.ID
	return m.ID
}

// record appends the custom entry of a snapshot taken before.
func (a *Agent) recordCheckpoint(id checkpoint.Hash, when, entryID, toolCallID string) error {
	if id == (checkpoint.Hash{}) {
		return nil
	}
	_, err := a.Log.AppendCustom(CheckpointType, CheckpointData{Snapshot: id.String(), Root: a.Checkpoints.Root,
		When: when, EntryID: entryID, ToolCallID: toolCallID})
	return err
}

// changesFiles reports whether the named tool is marked ChangesFiles; an
// unknown tool (it will fail) is not.
func (a *Agent) changesFiles(name string) bool {
	for _, t := range a.Tools {
		if t.Name == name {
			return t.ChangesFiles
		}
	}
	return false
}
