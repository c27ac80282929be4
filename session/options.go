package session

import "time"

// Option configures a Log when it is made (New, Load, Copy, Branched): the
// fields of the header it makes, the store that persists its appends, its
// clock. A log's persistence is fixed when it is made: nothing switches it
// off later.
type Option func(*config)

type config struct {
	id, timestamp, parent string
	cwd                   *string
	store                 Store
	now                   func() time.Time
	readOnly              error
	source                string
	project               Project
}

func configure(opts []Option) config {
	c := config{now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// newHeader is the header of a new session for cwd under c's options.
func (c config) newHeader(cwd string) Header {
	if c.cwd != nil {
		cwd = *c.cwd
	}
	h := Header{Version: CurrentVersion, ID: c.id, Timestamp: c.timestamp, Cwd: cwd, ParentSession: c.parent, Project: c.project}
	if h.ID == "" {
		h.ID = newSessionID()
	}
	if h.Timestamp == "" {
		h.Timestamp = FormatTime(time.Now())
	}
	h.raw = encodeHeader(h)
	return h
}

// WithID gives a new session this id instead of a new UUID.
func WithID(id string) Option { return func(c *config) { c.id = id } }

// WithParent records the file a new session was forked or cloned from.
func WithParent(path string) Option { return func(c *config) { c.parent = path } }

// WithTimestamp sets the header's creation time.
func WithTimestamp(ts string) Option { return func(c *config) { c.timestamp = ts } }

// WithCwd sets the working folder of the header a log makes: New's, Copy's,
// and, for Load, the one it makes up for a file that has none.
func WithCwd(cwd string) Option { return func(c *config) { c.cwd = &cwd } }

// WithStore persists every append through s (package session/jsonl's files,
// package pgstore's database). A log made without a store lives in memory.
func WithStore(s Store) Option { return func(c *config) { c.store = s } }

// WithClock timestamps new entries with now instead of the system clock (for
// tests and replays).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithReadOnly makes every append fail with err: for a session that must not
// be written, such as another agent's file read in place.
func WithReadOnly(err error) Option { return func(c *config) { c.readOnly = err } }

// WithSource names where a loaded session was read from (a path, a database
// id); the errors the log gives for it start with the name.
func WithSource(name string) Option { return func(c *config) { c.source = name } }
