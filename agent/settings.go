package agent

import "sync"

// Change is a change of an agent's settings: each field that is set replaces
// the agent's (Provider and Model go together when a model is switched).
type Change struct {
	Provider       Provider
	Model          *Model
	Thinking       *string
	AutoCompaction *bool
	NoRetry        *bool
}

// Current is the model, thinking level and switches the agent's next
// request uses.
type Current struct {
	Model          Model
	Thinking       string
	AutoCompaction bool
	NoRetry        bool
}

// changes holds the settings changed while a run works. The run's goroutine
// reads the agent's fields without a lock; a change sent meanwhile waits here
// until the start of the next turn (pi applies a model or thinking level set
// during a run to its next request).
type changes struct {
	mu      sync.Mutex
	holds   int // runs and Holds working: changes wait while it is above 0
	pending []Change
}

// Apply changes the agent's settings; it is safe from any goroutine. While a
// run (or Compact) works the change waits for the start of its next turn,
// where it is applied and a model or thinking level change is recorded in the
// log (as Prepare does); a change still waiting when the run ends is applied
// and recorded then. Otherwise it is applied at once, and recording it is the
// caller's (Prepare).
func (a *Agent) Apply(c Change) {
	a.changes.mu.Lock()
	defer a.changes.mu.Unlock()
	if a.changes.holds > 0 {
		a.changes.pending = append(a.changes.pending, c)
		return
	}
	a.apply(c)
}

// Current is what the agent's next request uses, waiting changes
// included; it is safe from any goroutine.
func (a *Agent) Current() Current {
	a.changes.mu.Lock()
	defer a.changes.mu.Unlock()
	cp := &Agent{Model: a.Model, Thinking: a.Thinking, Compaction: a.Compaction, NoRetry: a.NoRetry}
	for _, c := range a.changes.pending {
		cp.apply(c)
	}
	return Current{Model: cp.Model, Thinking: cp.Thinking, AutoCompaction: cp.settings().Enabled, NoRetry: cp.NoRetry}
}

// apply sets c's fields; the caller holds a.changes.mu or is the run.
func (a *Agent) apply(c Change) {
	if c.Provider != nil {
		a.Provider = c.Provider
	}
	if c.Model != nil {
		a.Model = *c.Model
	}
	if c.Thinking != nil {
		a.Thinking = *c.Thinking
	}
	if c.AutoCompaction != nil {
		a.SetAutoCompaction(*c.AutoCompaction)
	}
	if c.NoRetry != nil {
		a.NoRetry = *c.NoRetry
	}
}

// Hold makes changes wait, as during a run, until release is called: a
// caller that reads or records the agent's settings outside Run (Prepare
// before a run) holds it from before it starts. release applies and records
// what waits once no run or Hold is left.
func (a *Agent) Hold() (release func() error) {
	a.changes.mu.Lock()
	a.changes.holds++
	a.changes.mu.Unlock()
	return a.end
}

// end ends a run or Hold; the last one applies and records what waits.
func (a *Agent) end() error {
	a.changes.mu.Lock()
	defer a.changes.mu.Unlock()
	a.changes.holds--
	if a.changes.holds > 0 || len(a.changes.pending) == 0 {
		return nil
	}
	for _, c := range a.changes.pending {
		a.apply(c)
	}
	a.changes.pending = nil
	return a.Prepare()
}

// applyPending applies the waiting changes at the start of a turn and records
// a model or thinking level that changed; it runs on the run's goroutine.
func (a *Agent) applyPending() error {
	a.changes.mu.Lock()
	pending := a.changes.pending
	a.changes.pending = nil
	for _, c := range pending {
		a.apply(c)
	}
	a.changes.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	return a.Prepare()
}
