package session

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
)

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

// Load parses a whole session file. It never fails on damage: bad lines are
// skipped and reported, loops are cut, a missing header is replaced by a new one
// (Report.NoHeader) of the current version, for WithCwd's folder. A file newer
// than version 3 loads read-only.
func Load(data []byte, opts ...Option) *Log {
	c := configure(opts)
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
	if h == nil && len(entries) > 0 && !slices.ContainsFunc(entries, sessionShaped) {
		// No header, and no object shaped like a session entry: a log of other
		// objects that happen to have a "type" (SPEC §7), not a session. Its
		// lines are unreadable ones, and every write refuses the file.
		for _, e := range entries {
			rep.BadLines = append(rep.BadLines, e.Line)
		}
		slices.Sort(rep.BadLines)
		entries, pos = nil, nil
	}
	made := h == nil
	if made {
		rep.NoHeader = true
		v := CurrentVersion
		for _, e := range entries {
			if e.ID == "" {
				v = 1
				break
			}
		}
		nh := c.newHeader("")
		h = &nh
		h.Version = v
		// The same file gets the same header on every load: an id derived from
		// its first line, the time of its first entry.
		if first := firstLine(data); len(first) > 0 && c.id == "" {
			h.ID = uuid.NewSHA1(headerlessNS, first).String()
		}
		for _, e := range entries {
			if e.Timestamp != "" && c.timestamp == "" {
				h.Timestamp = e.Timestamp
				break
			}
		}
	}
	rep.Version = h.Version
	if h.Version > CurrentVersion && c.readOnly == nil {
		c.readOnly = fmt.Errorf("%w: file is format version %d; this arbor writes version %d, so it opens the file read-only (upgrade arbor to append)", ErrReadOnly, h.Version, CurrentVersion)
	}
	if c.readOnly != nil && c.source != "" {
		c.readOnly = fmt.Errorf("%s: %w", c.source, c.readOnly)
	}
	if h.Version < CurrentVersion {
		entries = migrate(h, entries, pos, h.Version)
		rep.Migrated = true
	}
	if made {
		// The entries are migrated: the header made for them is the current version's.
		h.Version = CurrentVersion
		h.raw = encodeHeader(*h)
	}
	l := emptyLog(*h, c)
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

// sessionShaped reports whether an object read from a file without a header
// is a session entry (SPEC §3), not any object with a "type": it has the
// envelope pi writes (a string id, a parentId, a string timestamp), or it is
// of a type sessions have, with a timestamp (version 1 entries have no ids),
// and a message has a role.
func sessionShaped(e *Entry) bool {
	var env struct {
		ID        jsontext.Value `json:"id"`
		ParentID  jsontext.Value `json:"parentId"`
		Timestamp jsontext.Value `json:"timestamp"`
	}
	if unmarshal(e.raw, &env) != nil {
		return false
	}
	if _, ok := jsonString(env.Timestamp); !ok {
		return false
	}
	if _, ok := jsonString(env.ID); ok && (env.ParentID.Kind() == '"' || env.ParentID.Kind() == 'n') {
		return true
	}
	switch e.Type {
	case TypeMessage:
		return e.sub != ""
	case TypeThinkingLevelChange, TypeModelChange, TypeCompaction, TypeBranchSummary, TypeCustom,
		TypeCustomMessage, TypeLabel, TypeSessionInfo, TypeUsage, TypeContextEdit:
		return true
	}
	return false
}
