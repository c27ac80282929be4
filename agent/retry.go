package agent

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// retryGate follows one request through the provider client's retries (429,
// 5xx, lost connections, each after a wait) so that AbortRetry can cut the
// wait short, as pi's abort_retry does.
type retryGate struct {
	mu      sync.Mutex
	cancel  context.CancelFunc
	waiting bool   // the last attempt failed in a way the client retries
	last    string // what that attempt got
	aborted bool

	// pi's auto_retry events: emit receives them (nil: none); retries counts
	// the retries announced for this request, of at most max.
	emit    func(Event)
	max     int
	retries int
}

// watch sends the next request's auto_retry events to emit.
func (g *retryGate) watch(emit func(Event)) {
	g.mu.Lock()
	g.emit = emit
	g.mu.Unlock()
}

// start begins a request the client retries up to max times: the returned
// context is cancelled by abort while the client waits to retry.
func (g *retryGate) start(ctx context.Context, max int) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	g.mu.Lock()
	g.cancel, g.waiting, g.last, g.aborted = cancel, false, "", false
	g.max, g.retries = max, 0
	g.mu.Unlock()
	return ctx
}

// end is the request's auto_retry_end when the client retried it (nil
// otherwise): a success, a cancelled retry or the last failure, as pi's.
func (g *retryGate) end(ctx context.Context, err error) *Event {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.retries
	g.retries, g.emit = 0, nil
	if n == 0 {
		return nil
	}
	ev := &Event{Type: "auto_retry_end", Success: ptr(err == nil), Attempt: ptr(n)}
	switch {
	case err == nil:
	case g.aborted || ctx.Err() != nil:
		ev.FinalError = "Retry cancelled"
	default:
		ev.FinalError = err.Error()
	}
	return ev
}

// observe is the clients' middleware: it notes each attempt's outcome.
func (g *retryGate) observe(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	g.mu.Lock()
	g.waiting = false
	g.mu.Unlock()
	res, err := next(req)
	retryable, last := false, ""
	switch {
	case err != nil && req.Context().Err() == nil:
		retryable, last = true, err.Error()
	case res != nil && (res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusConflict ||
		res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500):
		retryable, last = true, fmt.Sprintf("%d %s", res.StatusCode, http.StatusText(res.StatusCode))
	}
	g.mu.Lock()
	g.waiting, g.last = retryable, last
	var start *Event
	if retryable && g.emit != nil && g.retries < g.max {
		g.retries++
		start = &Event{Type: "auto_retry_start", Attempt: ptr(g.retries), MaxAttempts: ptr(g.max),
			DelayMs: ptr(retryDelay(res, g.retries).Milliseconds()), ErrorMessage: last}
	}
	emit := g.emit
	g.mu.Unlock()
	if start != nil {
		emit(*start)
	}
	return res, err
}

// retryDelay is how long the provider clients wait before retry n (from 1):
// the response's Retry-After-Ms or Retry-After, else their backoff of
// 0.5 s·2^(n−1) up to 8 s (from which their jitter takes up to a quarter).
func retryDelay(res *http.Response, n int) time.Duration {
	if res != nil {
		if ms, err := strconv.ParseFloat(res.Header.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
		ra := res.Header.Get("Retry-After")
		if s, err := strconv.ParseFloat(ra, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(ra); err == nil {
			return max(time.Until(t), 0)
		}
	}
	d := 500 * time.Millisecond << min(n-1, 5)
	return min(d, 8*time.Second)
}

// abort cancels the request if the client is waiting to retry it.
func (g *retryGate) abort() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.waiting || g.cancel == nil {
		return false
	}
	g.aborted = true
	g.cancel()
	return true
}

// abortedAfter says whether abort ended the request, and what the last
// attempt got.
func (g *retryGate) abortedAfter() (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.aborted, g.last
}

// AbortRetry stops the provider client's retries of the running request
// while it waits before one (pi's abort_retry): the run ends with the last
// failure. It reports whether a retry was waiting; safe from any goroutine.
func (a *Agent) AbortRetry() bool { return a.retry.abort() }
