package agent

import (
	"context"
	"fmt"
	"net/http"
	"sync"
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
}

// start begins a request: the returned context is cancelled by abort while
// the client waits to retry.
func (g *retryGate) start(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	g.mu.Lock()
	g.cancel, g.waiting, g.last, g.aborted = cancel, false, "", false
	g.mu.Unlock()
	return ctx
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
	g.mu.Unlock()
	return res, err
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
