// Package rpc drives an arbor session from another program: one Engine holds
// the session and the agent and implements every operation once; two
// protocols speak it. Serve is JSON-RPC 2.0 over newline-delimited JSON (rho's
// method names and result shapes, plus tree navigation, search and following a
// live session); Pi is pi's RPC mode (JSON lines of {type, id} commands,
// responses and streamed events).
//
// Use: New(Config{...}, emit) gives an Engine to call from Go (ExampleEngine);
// Serve(cfg, in, out) and Pi(cfg, in, out) put it on a pipe.
//
// One prompt runs at a time. While it runs, abort and steering are served at
// once; an operation that would read or change the session the run is
// appending to is refused with a busy error rather than made to wait.
package rpc
