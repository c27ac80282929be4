package agent

import (
	"fmt"
	"slices"
	"sync"
)

// The modes of a Queue (pi's steeringMode and followUpMode).
const (
	OneAtATime = "one-at-a-time" // one message each time the loop looks (pi's default)
	All        = "all"           // every queued message at once
)

// Queue holds the messages a person sends while a run works, as pi's agent
// does. A steering message is delivered mid-run: after the tool calls of the
// current reply have all run and before the next request. A follow-up waits
// until the run would stop (no tool calls and no steering left), then starts
// the next turn of the same run. Messages queued while no run works are
// delivered by the next one, steering right after its prompt. Abort leaves
// the queue as it is (Clear empties it).
//
// Every method is safe from any goroutine; a nil *Queue is empty and takes
// nothing.
type Queue struct {
	// OnChange, if set, is called with what is queued after every change
	// (pi's queue_update event); it must not call back into the Queue.
	OnChange func(steering, followUp []string)

	mu                         sync.Mutex
	steering, followUp         []string
	steeringMode, followUpMode string
}

// Steer queues a steering message.
func (q *Queue) Steer(text string) { q.push(&q.steering, text) }

// FollowUp queues a follow-up message.
func (q *Queue) FollowUp(text string) { q.push(&q.followUp, text) }

func (q *Queue) push(list *[]string, text string) {
	q.mu.Lock()
	*list = append(*list, text)
	q.mu.Unlock()
	q.changed()
}

func (q *Queue) changed() {
	if q.OnChange != nil {
		s, f := q.Pending()
		q.OnChange(s, f)
	}
}

// Pending returns copies of the queued steering and follow-up messages, in
// the order they were queued.
func (q *Queue) Pending() (steering, followUp []string) {
	if q == nil {
		return []string{}, []string{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string{}, q.steering...), append([]string{}, q.followUp...)
}

// Len counts the queued messages of both kinds.
func (q *Queue) Len() int {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.steering) + len(q.followUp)
}

// Clear empties the queue and returns what it held (pi's clear_queue).
func (q *Queue) Clear() (steering, followUp []string) {
	if q == nil {
		return []string{}, []string{}
	}
	q.mu.Lock()
	steering, followUp = append([]string{}, q.steering...), append([]string{}, q.followUp...)
	q.steering, q.followUp = nil, nil
	q.mu.Unlock()
	q.changed()
	return steering, followUp
}

// Modes returns the steering and follow-up modes.
func (q *Queue) Modes() (steering, followUp string) {
	if q == nil {
		return OneAtATime, OneAtATime
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return orDefault(q.steeringMode), orDefault(q.followUpMode)
}

func orDefault(mode string) string {
	if mode == "" {
		return OneAtATime
	}
	return mode
}

// SetModes sets how many messages each kind delivers at a time: All or
// OneAtATime; "" leaves a mode as it is.
func (q *Queue) SetModes(steering, followUp string) error {
	for _, m := range []string{steering, followUp} {
		if m != "" && m != All && m != OneAtATime {
			return fmt.Errorf("queue mode %q: want %q or %q", m, All, OneAtATime)
		}
	}
	if q == nil {
		return fmt.Errorf("no queue to set the modes of")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if steering != "" {
		q.steeringMode = steering
	}
	if followUp != "" {
		q.followUpMode = followUp
	}
	return nil
}

// take removes what the mode delivers now from one of the lists.
func (q *Queue) take(follow bool) []string {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	list, mode := &q.steering, q.steeringMode
	if follow {
		list, mode = &q.followUp, q.followUpMode
	}
	n := len(*list)
	if n > 1 && orDefault(mode) == OneAtATime {
		n = 1
	}
	out := slices.Clone((*list)[:n])
	*list = (*list)[n:]
	q.mu.Unlock()
	if n > 0 {
		q.changed()
	}
	return out
}
