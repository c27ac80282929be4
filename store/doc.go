// Package store is what arbor needs from a place that keeps sessions: create
// and open them for writing (one writer per session, appends made durable
// under a policy), read them without a lock, resolve what a user typed, list
// and search them, and close. Files (the default) keeps them as JSONL files
// through session/jsonl and catalog; pgstore keeps them in PostgreSQL. Both
// return the same records (catalog.Info, catalog.Hit) and the same
// session.Log, so every command works on either.
//
// Use: OpenFiles(home) or pgstore.Open(url) gives a Store; Create and Open
// return a Session whose Log you append to, Close makes it durable and
// releases the lock (Example).
//
// ForkBefore is pi's /fork on any store (the chat and pi's RPC mode share it):
// a new session from the branch that ends at the parent of a user message,
// and that message's text for the editor.
package store
