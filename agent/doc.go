// Package agent is arbor's coding agent: model providers behind one small
// interface, pi's tools, and the loop that runs a prompt on a session. It
// knows nothing about terminals; the arbor command (arbor -p) drives it.
//
// An Agent is a session's Log, a Provider (NewAnthropic, NewOpenAI or any
// implementation) with its Model, and Tools (Tools(nil) gives pi's). Run sends
// a prompt and returns the model's last reply once it stops calling tools;
// every message is appended to the log as it completes, with session's typed
// messages (session.Assistant, session.ToolResult), and Emit sees pi's events
// (Example). An Event's JSON is pi 1.6.0's (toJsonEvent's shapes), the one
// encoding of arbor -p --mode json and pi's RPC mode.
//
// # Providers
//
// OpenAI (chat completions: OpenAI, OpenRouter, vLLM, llama.cpp, Ollama) and
// Anthropic (Messages), both streaming, through the vendors' official Go SDKs.
// A reply is mapped to pi's assistant message: text, thinking (with its
// signature, so it can be sent back) and toolCall blocks, tool-call arguments
// assembled from the pieces they arrive in, usage, and pi's stop reasons
// (stop, length, toolUse, error, aborted). The SDKs retry 429, 5xx and
// connection failures with backoff, honouring Retry-After; other 4xx fail at
// once with the provider's message (ProviderError). Request.NoRetry sends a
// request once; Agent.AbortRetry cuts the wait before a retry short. Each
// retry is announced with pi's auto_retry_start event and the request closed
// with auto_retry_end. A stream that sends nothing for Options.IdleTimeout is
// given up (ErrStalled).
// IsOverflow recognises each provider's context-overflow error.
//
// A Request holds its messages as pi's JSON (Request.Messages, the log's own
// bytes where it can); Request.Decoded yields them decoded one at a time,
// without what providers refuse. The agent's own requests without a budget
// hold none: each message is made from the log as the body is written
// (window.Stream) and read once, for both (Request.Raw gives them as JSON). The two providers write the body a message
// at a time, each encoded with the SDK's own types into the body the SDK
// encodes for the rest of the request, so a request of a million messages is
// never held whole; a body over 8 MB is streamed (chunked), a shorter one is
// sent with its length, and a retry sends the same body again.
//
// # Tools
//
// read, bash, edit, write, ls, grep and find, with pi's names and argument
// shapes, so sessions read the same in pi. Paths resolve against the working
// folder; bash runs in its own process group, killed on timeout or abort.
// Failures are results with isError, never a stopped run. Before a result is
// appended (and so before it is written or sent) its secrets are redacted
// (package redact, counted in details.arborRedacted) and, past MaxResultBytes,
// it is cut with the full text kept as a blob (window.BoundToolResult).
//
// # The loop
//
// Agent.Run appends the prompt and makes the file exist (Flush) before the
// request goes out; the history is the active cursor's context at its
// resolutions, fitted to window − reserve by package window (which closes tool
// calls left unanswered by a crash), without replies that failed or were
// aborted. Each assistant message is appended once, complete, with its usage
// and cost; each tool result as it completes. Cancelling the context (Ctrl-C)
// keeps the partial reply with stop reason aborted and answers the calls that
// did not run, so the next request is valid. Compaction (package compaction,
// pi's plan and prompts, summarized by the same model) runs before a request
// whose context passes window − reserve, and once after a context-overflow
// error, after which the request is sent again. Prepare records model and
// thinking-level changes as pi does.
//
// # Steering and follow-up
//
// A Queue (Agent.Queue, safe from any goroutine) holds what a person sends
// while a run works, with pi's semantics: Steer delivers a message after the
// tool calls of the current reply have all run, before the next request;
// FollowUp waits until the run would stop. Each delivers one message a time
// or all at once (SetModes, pi's steeringMode and followUpMode). What is
// queued between runs goes with the next Run (or Continue).
//
// # Settings during a run
//
// A run reads the agent's Provider, Model, Thinking, Compaction and NoRetry
// without a lock, so another goroutine changes them with Apply (safe from any
// goroutine): during a run (or a Hold) the change waits for the start of the
// next turn, as pi applies a model or thinking level set mid-run to its next
// request, and the run records it (model_change, thinking_level_change).
// Current reads them, waiting changes included.
package agent
