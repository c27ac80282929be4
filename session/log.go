package session

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/arborlog/arbor/internal/js"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
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

type node struct {
	e      *Entry
	parent *node // nil for a root; the parent link after loops are cut
	kid    *node // the first child in file order
	next   *node // the next sibling in file order
	pos    int   // position in Log.entries
}

// appendChild links c as n's last child.
func (n *node) appendChild(c *node) {
	if n.kid == nil {
		n.kid = c
		return
	}
	k := n.kid
	for k.next != nil {
		k = k.next
	}
	k.next = c
}

// kids returns n's children in file order.
func (n *node) kids() []*node {
	var out []*node
	for k := n.kid; k != nil; k = k.next {
		out = append(out, k)
	}
	return out
}

type labelState struct {
	label, timestamp string
}

type cursor struct {
	id    string
	name  string
	last  *node // the cursor's last entry in file order
	leaf  *node // nil: before the first entry
	res   map[string]Resolution
	order int
}

// Report says what loading found wrong with a file. Line numbers count from 1.
type Report struct {
	Version        int      `json:"version"`
	Lines          int      `json:"lines"`
	Entries        int      `json:"entries"`
	BadLines       []int    `json:"badLines"`
	TornTail       bool     `json:"tornTail"`
	MissingNewline bool     `json:"missingNewline"`
	NoHeader       bool     `json:"noHeader"`
	ExtraHeaders   []int    `json:"extraHeaders"`
	DuplicateIDs   []string `json:"duplicateIds"`
	Cycles         []string `json:"cycles"`  // ids whose parent link was cut to break a loop
	Orphans        []string `json:"orphans"` // ids whose parent is unknown
	Migrated       bool     `json:"migrated"`
}

// Clean reports whether the file loaded without any damage.
func (r Report) Clean() bool {
	return len(r.BadLines) == 0 && !r.TornTail && !r.MissingNewline && !r.NoHeader &&
		len(r.ExtraHeaders) == 0 && len(r.DuplicateIDs) == 0 && len(r.Cycles) == 0 && len(r.Orphans) == 0
}

// New starts an empty session with a new header.
func New(cwd string, opts ...HeaderOption) *Log {
	h := Header{Version: CurrentVersion, Cwd: cwd}
	for _, o := range opts {
		o(&h)
	}
	if h.ID == "" {
		h.ID = newSessionID()
	}
	if h.Timestamp == "" {
		h.Timestamp = FormatTime(time.Now())
	}
	h.raw = encodeHeader(h)
	l := emptyLog(h)
	return l
}

// HeaderOption sets a field of a new session's header.
type HeaderOption func(*Header)

// WithID gives a new session this id instead of a new UUID.
func WithID(id string) HeaderOption { return func(h *Header) { h.ID = id } }

// WithParent records the file a new session was forked or cloned from.
func WithParent(path string) HeaderOption { return func(h *Header) { h.ParentSession = path } }

// WithTimestamp sets the header's creation time.
func WithTimestamp(ts string) HeaderOption { return func(h *Header) { h.Timestamp = ts } }

// headerlessNS is the UUID namespace of the ids given to header-less files.
var headerlessNS = uuid.MustParse("6f1c1c55-2c4e-4f4e-9a53-0a5b3c2d7e10")

// firstLine returns data's first line that is not blank.
func firstLine(data []byte) []byte {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if ln := bytes.TrimSpace(data[:i]); len(ln) > 0 {
			return ln
		}
		data = data[min(i+1, len(data)):]
	}
	return nil
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
	return buildObject(ms)
}

func emptyLog(h Header) *Log {
	l := &Log{
		header:  h,
		byID:    map[string]*node{},
		labels:  map[string]labelState{},
		cursors: map[string]*cursor{},
		active:  MainCursor,
		now:     time.Now,
	}
	l.report.Version = h.Version
	l.cursor(MainCursor)
	return l
}

// FormatTime formats t as the ISO-8601 UTC timestamp with milliseconds that entries carry.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Load parses a whole session file. It never fails on damage: bad lines are
// skipped and reported, loops are cut, a missing header is replaced by a new one
// (Report.NoHeader). A file newer than version 3 loads read-only.
func Load(data []byte) *Log {
	lines := splitLines(data)
	parsed := parseAll(lines)

	var rep Report
	rep.Lines = len(lines)
	var h *Header
	var entries []*Entry
	// pos[i] is entries[i]'s index among the lines JSON.parse accepts (the
	// header being 0): what a version 1 compaction's firstKeptEntryIndex counts.
	var pos []int
	parsedBefore := 0
	complete := bytes.HasSuffix(data, []byte("\n"))
	for i, p := range parsed {
		ln := lines[i]
		switch {
		case p.blank:
			continue
		case p.err != nil:
			if i == len(lines)-1 && !complete && !IsCompleteJSON(bytes.TrimSpace(ln.b)) {
				// A partial last line: the tail of an interrupted write.
				rep.TornTail = true
			} else {
				rep.BadLines = append(rep.BadLines, ln.num)
			}
		case p.header != nil:
			if h == nil && len(entries) == 0 && p.header.ID != "" {
				h = p.header
			} else {
				rep.ExtraHeaders = append(rep.ExtraHeaders, ln.num)
			}
		default:
			p.entry.Line = ln.num
			entries = append(entries, p.entry)
			pos = append(pos, parsedBefore)
		}
		if p.err == nil || IsCompleteJSON(bytes.TrimSpace(ln.b)) {
			parsedBefore++
		}
	}
	if len(data) > 0 && !complete && !rep.TornTail {
		rep.MissingNewline = true
	}
	if h == nil {
		rep.NoHeader = true
		v := CurrentVersion
		for _, e := range entries {
			if e.ID == "" {
				v = 1
				break
			}
		}
		nh := New("")
		h = &nh.header
		h.Version = v
		// The same file gets the same header on every load: an id derived from
		// its first line, the time of its first entry.
		if first := firstLine(data); len(first) > 0 {
			h.ID = uuid.NewSHA1(headerlessNS, first).String()
		}
		for _, e := range entries {
			if e.Timestamp != "" {
				h.Timestamp = e.Timestamp
				break
			}
		}
	}
	rep.Version = h.Version
	l := emptyLog(*h)
	if h.Version > CurrentVersion {
		l.readOnly = fmt.Errorf("%w: file is format version %d; this arbor writes version %d, so it opens the file read-only (upgrade arbor to append)", ErrReadOnly, h.Version, CurrentVersion)
	}
	if h.Version < CurrentVersion {
		entries = migrate(h, entries, pos, h.Version)
		rep.Migrated = true
	}
	l.report = rep
	l.index(entries)
	return l
}

type line struct {
	b   []byte
	num int
}

func splitLines(data []byte) []line {
	lines := make([]line, 0, bytes.Count(data, []byte("\n"))+1)
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, line{data, n})
			break
		}
		lines = append(lines, line{data[:i], n})
		data = data[i+1:]
	}
	return lines
}

type parsedLine struct {
	header *Header
	entry  *Entry
	err    error
	blank  bool
}

// parseAll parses lines on every core: validation dominates loading.
func parseAll(lines []line) []parsedLine {
	out := make([]parsedLine, len(lines))
	workers := runtime.GOMAXPROCS(0)
	if len(lines) < 256 {
		workers = 1
	}
	var wg sync.WaitGroup
	chunk := (len(lines) + workers - 1) / workers
	for start := 0; start < len(lines); start += chunk {
		end := min(start+chunk, len(lines))
		wg.Go(func() {
			for i := start; i < end; i++ {
				b := lines[i].b
				if len(bytes.TrimSpace(b)) == 0 {
					out[i].blank = true
					continue
				}
				out[i].header, out[i].entry, out[i].err = parseLine(b)
			}
		})
	}
	wg.Wait()
	return out
}

// index builds the tree over entries read from a file. Called once, before the log is shared.
func (l *Log) index(entries []*Entry) {
	if len(l.byID) == 0 {
		l.byID = make(map[string]*node, len(entries))
	}
	nodes := make([]*node, 0, len(entries))
	slab := make([]node, len(entries)) // one allocation for every node
	for _, e := range entries {
		if e.ID == "" {
			l.report.BadLines = append(l.report.BadLines, e.Line)
			continue
		}
		if _, dup := l.byID[e.ID]; dup {
			l.report.DuplicateIDs = append(l.report.DuplicateIDs, e.ID)
			continue
		}
		n := &slab[len(nodes)]
		n.e, n.pos = e, len(l.entries)
		l.entries = append(l.entries, e)
		l.byID[e.ID] = n
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		switch p := n.e.ParentID; {
		case p == "":
		case p == n.e.ID:
			l.report.Cycles = append(l.report.Cycles, n.e.ID) // a loop of one: a root, as in pi
		default:
			if pn, ok := l.byID[p]; ok {
				n.parent = pn
			} else {
				l.report.Orphans = append(l.report.Orphans, n.e.ID)
			}
		}
	}
	l.cutLoops(nodes)
	slices.Sort(l.report.BadLines)
	// Children are linked last to first, so each list is in file order
	// without walking it.
	for i := len(nodes) - 1; i >= 0; i-- {
		if n := nodes[i]; n.parent != nil {
			n.next, n.parent.kid = n.parent.kid, n
		}
	}
	for _, n := range nodes {
		if n.parent == nil {
			l.roots = append(l.roots, n)
		}
		l.replay(n)
	}
	l.report.Entries = len(l.entries)
	sortByPosition(l.report.Orphans, l)
	sortByPosition(l.report.Cycles, l)
	for _, c := range l.cursors {
		c.leaf = resolveLeaf(c.last)
	}
}

// cutLoops breaks every parent cycle at the entry of the cycle that comes first in
// the file: in an append-only log a parent precedes its child, so that entry's
// parent link is the one that cannot be right. nodes are in file order, and
// pos indexes them.
func (l *Log) cutLoops(nodes []*node) {
	const onWalk, done = 1, 2
	state := make([]uint8, len(l.entries))
	var walk []*node
	for _, start := range nodes {
		walk = walk[:0]
		n := start
		for n != nil && state[n.pos] == 0 {
			state[n.pos] = onWalk
			walk = append(walk, n)
			n = n.parent
		}
		if n != nil && state[n.pos] == onWalk { // n is on this walk: a loop from n back to n
			first := n
			for m := n.parent; m != n; m = m.parent {
				if m.pos < first.pos {
					first = m
				}
			}
			first.parent = nil
			l.report.Cycles = append(l.report.Cycles, first.e.ID)
		}
		for _, w := range walk {
			state[w.pos] = done
		}
	}
}

// sortByPosition orders ids by file position, so reports are stable.
func sortByPosition(ids []string, l *Log) {
	slices.SortStableFunc(ids, func(a, b string) int { return l.byID[a].pos - l.byID[b].pos })
}

// resolveLeaf returns the nearest entry at or above n that is not a marker.
func resolveLeaf(n *node) *node {
	for n != nil && n.e.IsMarker() {
		n = n.parent
	}
	return n
}

// replay applies an indexed entry's effect on labels, the name and cursors, in file order.
func (l *Log) replay(n *node) {
	e := n.e
	switch e.Type {
	case TypeLabel:
		// As pi replays them: a label that is not truthy clears, any other sets
		// (a label that is not a string is kept as JavaScript would print it).
		var v struct {
			TargetID jsontext.Value `json:"targetId"`
			Label    jsontext.Value `json:"label"`
		}
		if unmarshal(e.raw, &v) != nil {
			break
		}
		if target, ok := jsonString(v.TargetID); ok {
			label := ""
			if js.Truthy(v.Label) {
				label = jsTemplate(v.Label)
			}
			l.setLabel(target, label, e.Timestamp)
		}
	case TypeSessionInfo:
		var v struct {
			Name string `json:"name"`
		}
		_ = unmarshal(e.raw, &v) // a name that is not a string clears it, as in pi
		l.name = strings.TrimSpace(v.Name)
	case TypeMessage:
		if e.msgRole() == RoleAssistant || e.msgRole() == RoleUser {
			l.hasConversation = true
		}
	}
	c := l.cursor(cursorID(e))
	c.last = n
	if e.IsMarker() {
		l.replayMarker(c, e)
	}
	if !(e.IsMarker() && e.customType() == MarkerCursor) {
		l.active = c.id
	}
}

func (l *Log) setLabel(target, label, ts string) {
	if label == "" {
		if _, ok := l.labels[target]; ok {
			delete(l.labels, target)
			l.lorder = slices.DeleteFunc(l.lorder, func(t string) bool { return t == target })
		}
		return
	}
	if _, ok := l.labels[target]; !ok {
		l.lorder = append(l.lorder, target)
	}
	l.labels[target] = labelState{label, ts}
}

// Arbor marker types (SPEC §6.2, §6.3): the customType of the custom entries
// that record cursors, leaf moves and resolutions.
const (
	MarkerCursor     = "arbor.cursor"
	MarkerLeaf       = "arbor.leaf"
	MarkerResolution = "arbor.resolution"
)

// Marker is what one of arbor's marker entries records.
type Marker struct {
	Kind   string // MarkerCursor, MarkerLeaf or MarkerResolution
	Cursor string // the cursor it belongs to (MainCursor for the main one)
	// A cursor marker: the name it gives the cursor, if any.
	Name *string
	// A leaf marker: where the leaf was (nil if not recorded), and whether
	// it moved to before the first entry.
	From    *string
	Cleared bool
	// A resolution marker: the entry and the level it sets.
	Target, Level string
}

// Marker decodes a marker entry (IsMarker); ok is false for any other entry.
func (e *Entry) Marker() (m Marker, ok bool) {
	if !e.IsMarker() {
		return Marker{}, false
	}
	var v struct {
		Data struct {
			Name   *string `json:"name"`
			From   *string `json:"from"`
			Target string  `json:"target"`
			Level  string  `json:"level"`
		} `json:"data"`
	}
	_ = unmarshal(e.raw, &v)
	m = Marker{Kind: e.customType(), Cursor: e.Cursor, Target: v.Data.Target, Level: v.Data.Level}
	if m.Cursor == "" {
		m.Cursor = MainCursor
	}
	switch m.Kind {
	case MarkerCursor:
		m.Name = v.Data.Name
	case MarkerLeaf:
		m.From, m.Cleared = v.Data.From, e.ParentID == ""
	}
	return m, true
}

func (l *Log) replayMarker(c *cursor, e *Entry) {
	var v struct {
		Data struct {
			Name   *string `json:"name"`
			Target string  `json:"target"`
			Level  string  `json:"level"`
			Text   string  `json:"text"`
		} `json:"data"`
	}
	if unmarshal(e.raw, &v) != nil {
		return
	}
	switch e.customType() {
	case MarkerCursor:
		if v.Data.Name != nil {
			c.name = strings.TrimSpace(*v.Data.Name)
		}
	case MarkerResolution:
		if v.Data.Target != "" {
			c.setResolution(v.Data.Target, Resolution{Level: Level(v.Data.Level), Text: v.Data.Text})
		}
	}
}

func cursorID(e *Entry) string {
	if e.Cursor == "" {
		return MainCursor
	}
	return e.Cursor
}

// cursor returns the cursor with this id, adding it to the roster if it is new.
func (l *Log) cursor(id string) *cursor {
	c, ok := l.cursors[id]
	if !ok {
		c = &cursor{id: id, order: len(l.corder)}
		l.cursors[id] = c
		l.corder = append(l.corder, id)
	}
	return c
}

// SetStore attaches the store that persists appends.
func (l *Log) SetStore(s Store) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.store = s
}

// SetClock replaces the clock that timestamps new entries (for tests).
func (l *Log) SetClock(now func() time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = now
}

// SetReadOnly makes every later append fail with err (nil makes the log writable again).
func (l *Log) SetReadOnly(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readOnly = err
}

// ReadOnly returns why the log refuses appends, or nil.
func (l *Log) ReadOnly() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readOnly
}

// SetHeader replaces the header (the store does this for a file that had none).
func (l *Log) SetHeader(h Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.raw == nil {
		h.raw = encodeHeader(h)
	}
	l.header = h
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

// ingest indexes entries another program appended to the file (read by the
// store's Refresh), as a reopen would: each moves its cursor's leaf.
func (l *Log) ingest(entries []*Entry) {
	for _, e := range entries {
		if e.ID == "" {
			continue
		}
		if _, dup := l.byID[e.ID]; dup {
			l.report.DuplicateIDs = append(l.report.DuplicateIDs, e.ID)
			continue
		}
		l.add(e)
	}
}

// add links a new entry into the index and applies its effects. Appended
// entries always have a known or null parent, so no loop can form.
func (l *Log) add(e *Entry) *node {
	n := &node{e: e, pos: len(l.entries)}
	l.entries = append(l.entries, e)
	l.byID[e.ID] = n
	if p, ok := l.byID[e.ParentID]; ok && e.ParentID != e.ID {
		n.parent = p
		p.appendChild(n)
	} else {
		if e.ParentID != "" {
			l.report.Orphans = append(l.report.Orphans, e.ID)
		}
		l.roots = append(l.roots, n)
	}
	l.replay(n)
	c := l.cursors[cursorID(e)]
	c.leaf = resolveLeaf(c.last)
	l.report.Entries = len(l.entries)
	return n
}

// ParseEntries parses complete lines appended to a file (each ending in '\n'),
// skipping those that are not entries.
func ParseEntries(data []byte) []*Entry {
	var out []*Entry
	for _, ln := range splitLines(data) {
		if len(bytes.TrimSpace(ln.b)) == 0 {
			continue
		}
		if _, e, err := parseLine(ln.b); err == nil && e != nil {
			out = append(out, e)
		}
	}
	return out
}

// ParseHeader parses the first line of a file. It reports false when the line
// is not a session header with a string id.
func ParseHeader(line []byte) (Header, bool) {
	h, _, err := parseLine(line)
	if err != nil || h == nil || h.ID == "" {
		return Header{}, false
	}
	return *h, true
}

// ParseLine parses one line as an entry (false for headers and bad lines).
func ParseLine(b []byte) (*Entry, bool) {
	_, e, err := parseLine(b)
	return e, err == nil && e != nil
}

// rawValue returns the JSON value of a top-level member of e, or nil.
func (e *Entry) rawValue(name string) jsontext.Value {
	ms, err := objectMembers(e.raw)
	if err != nil {
		return nil
	}
	v, _ := find(ms, name)
	return v
}
