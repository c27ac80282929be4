package session

import (
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
)

// MainCursor is the id of the default cursor: entries without a cursor field belong to it.
const MainCursor = "main"

// Sentinel errors.
var (
	ErrNotFound = errors.New("session: entry not found")
	ErrIsMarker = errors.New("session: entry is an arbor marker")
	// ErrNeverSent: the entry is metadata (a model change, a label, …) that
	// never reaches the model, so it cannot be pinned or rendered shorter.
	ErrNeverSent = errors.New("session: entry never reaches the model")
	ErrNoCursor  = errors.New("session: cursor not found")
	ErrReadOnly  = errors.New("session: read-only")
	ErrEmptyPath = errors.New("session: empty branch")
)

// Store persists what a Log appends. The jsonl package implements it for files;
// a Log without a store lives in memory only.
type Store interface {
	// Refresh returns entries that other programs appended since the store last
	// wrote or read, so the log can index them before its own append.
	Refresh() ([]*Entry, error)
	// Write makes e durable under the store's policy. If it fails, e is not part of the log.
	Write(e *Entry) error
}

// Log is one session: the header, every entry in file order, and the tree index
// over them, with the cursors that walk it. It does no I/O itself; appends go
// through its Store.
//
// A Log is safe for use by several goroutines.
type Log struct {
	mu      sync.Mutex
	header  Header
	entries []*Entry         // indexed entries, file order
	byID    map[string]*node // the first entry with each id
	roots   []*node
	labels  map[string]labelState
	lorder  []string // label targets in the order pi's Map would iterate them
	name    string
	cursors map[string]*cursor
	corder  []string
	active  string

	hasConversation bool
	readOnly        error
	store           Store
	now             func() time.Time
	report          Report
}

// New starts an empty session with a new header for cwd. Options give the
// header's fields, the store that persists appends and the clock.
func New(cwd string, opts ...Option) *Log {
	c := configure(opts)
	h := c.newHeader(cwd)
	return emptyLog(h, c)
}

func newSessionID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

func encodeHeader(h Header) []byte {
	ms := []member{
		{"type", mustValue(typeHeader)},
		{"version", mustValue(h.Version)},
		{"id", mustValue(h.ID)},
		{"timestamp", mustValue(h.Timestamp)},
		{"cwd", mustValue(h.Cwd)},
	}
	if h.ParentSession != "" {
		ms = append(ms, member{"parentSession", mustValue(h.ParentSession)})
	}
	if !h.Project.IsZero() {
		ms = append(ms, member{"project", mustValue(h.Project)})
	}
	return buildObject(ms)
}

func emptyLog(h Header, c config) *Log {
	l := &Log{
		header:   h,
		byID:     map[string]*node{},
		labels:   map[string]labelState{},
		cursors:  map[string]*cursor{},
		active:   MainCursor,
		now:      c.now,
		store:    c.store,
		readOnly: c.readOnly,
	}
	l.report.Version = h.Version
	l.cursor(MainCursor)
	return l
}

// FormatTime formats t as the ISO-8601 UTC timestamp with milliseconds that entries carry.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ReadOnly returns why the log refuses appends, or nil.
func (l *Log) ReadOnly() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readOnly
}

// Header returns the session's header.
func (l *Log) Header() Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.header
}

// Report returns what loading found (an empty report for a new session).
func (l *Log) Report() Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.report
}

// HasConversation reports whether any message entry is a user or an
// assistant message: what makes pi 1.6.0 (and arbor) write a new session's file.
func (l *Log) HasConversation() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hasConversation
}
