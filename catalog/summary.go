package catalog

import (
	"bytes"
	"github.com/arborlog/arbor/internal/js"
	"github.com/arborlog/arbor/session"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Info is what a listing reports about one session (SPEC §9). On a file pi
// wrote, every field pi's SessionManager.list() has equals pi's.
type Info struct {
	Path              string `json:"path"`
	ID                string `json:"id"`
	Cwd               string `json:"cwd"`
	Name              string `json:"name,omitempty"`
	ParentSessionPath string `json:"parentSessionPath,omitempty"`
	Created           Time   `json:"created"`
	Modified          Time   `json:"modified"`
	MessageCount      int    `json:"messageCount"`
	FirstMessage      string `json:"firstMessage"`
	EntryCount        int    `json:"entryCount"`
	SizeBytes         int64  `json:"sizeBytes"`
	Archived          bool   `json:"archived,omitzero"`
	// FileModified is the file's modification time, where the session is a
	// file (Modified is pi's: the last message's time). Not in pi's listing.
	FileModified time.Time `json:"-"`
	// MovedFrom is the folder a session was made in when it is listed for
	// another: its project's folder moved from there (Scope.Moved).
	MovedFrom string `json:"movedFrom,omitempty"`
	// Project is the header's project (SPEC §2); not in pi's record.
	Project session.Project `json:"-"`
}

// noMessages is pi's firstMessage for a session without user text.
const noMessages = "(no messages)"

// Empty reports whether the session holds no message at all.
func (i *Info) Empty() bool { return i.MessageCount == 0 }

// summary is the fold of a file's lines into the fields of Info. It is kept in
// the index so a file that grew is read only from where the fold stopped. It
// reproduces pi's buildSessionInfo, including the inputs that make pi drop a file
// from its list (Drop).
type summary struct {
	Phase      phase           `json:"p"`
	Drop       bool            `json:"d,omitempty"`
	ID         string          `json:"id,omitempty"`
	Cwd        string          `json:"c,omitempty"`
	Parent     string          `json:"ps,omitempty"`
	Created    Time            `json:"t"`
	HeaderTime Time            `json:"ht"` // the header's timestamp when it is a string; modified falls back to it
	Name       string          `json:"n,omitempty"`
	Messages   int             `json:"m,omitempty"`
	Entries    int             `json:"e,omitempty"`
	First      string          `json:"f,omitempty"`
	Activity   float64         `json:"a,omitempty"` // the latest user or assistant message time, Unix ms; 0 when none
	Started    bool            `json:"s,omitempty"` // a non-blank byte was seen: JavaScript's trim() applies at the file's start only
	Project    session.Project `json:"pj,omitzero"` // the header's project (SPEC §2)

	named bool // a session_info line set Name (for join)
}

type phase int8

const (
	phaseStart   phase = iota // no parsable line yet
	phaseSession              // the first parsable line was a session header
	phaseOther                // it was something else: not a session, whatever follows
)

// isSession reports whether the fold so far describes a listable session.
func (s *summary) isSession() bool { return s.Phase == phaseSession && !s.Drop }

// info turns the fold into a listing record.
func (s *summary) info(path string, size int64, mtime time.Time) Info {
	in := Info{
		Path: path, ID: s.ID, Cwd: s.Cwd, Name: s.Name, ParentSessionPath: s.Parent,
		Created: s.Created, MessageCount: s.Messages, EntryCount: s.Entries, SizeBytes: size,
		FirstMessage: s.First, Project: s.Project,
	}
	if in.FirstMessage == "" {
		in.FirstMessage = noMessages
	}
	switch {
	case s.Activity > 0:
		in.Modified = jsTimeFromNumber(s.Activity)
	case s.HeaderTime.valid:
		in.Modified = s.HeaderTime
	default:
		in.Modified = TimeOf(mtime)
	}
	return in
}

// feed folds every complete line of chunk into s and returns how many bytes it
// consumed (up to and including the last newline).
func (s *summary) feed(l *line, chunk []byte) int {
	n := 0
	for {
		i := bytes.IndexByte(chunk[n:], '\n')
		if i < 0 {
			return n
		}
		s.add(l, chunk[n:n+i])
		n += i + 1
	}
}

// add folds one line (without its newline) into s, as pi's buildSessionInfo
// treats it after content.trim().split("\n").
func (s *summary) add(l *line, b []byte) {
	if s.Phase == phaseOther || s.Drop {
		return
	}
	if !s.Started {
		b = trimJSStart(b)
		if len(b) == 0 {
			return
		}
		s.Started = true
	}
	if isBlank(b) || !l.scan(b) {
		return // blank, or JSON.parse would throw: skipped
	}
	if s.Phase == phaseStart {
		s.header(l)
		return
	}
	if l.null { // entry.type on null throws: pi drops the whole file
		s.Drop = true
		return
	}
	if !l.object {
		return
	}
	s.Entries++
	switch typ := mustField(l, -1, "type"); {
	case l.strIs(typ, "session_info"):
		s.sessionInfo(l)
	case l.strIs(typ, "message"):
		s.message(l)
	}
}

func mustField(l *line, parent int32, key string) span {
	v, _ := l.field(parent, key)
	return v
}

func (s *summary) header(l *line) {
	if !l.object {
		s.Phase = phaseOther
		return
	}
	if !l.strIs(mustField(l, -1, "type"), "session") {
		s.Phase = phaseOther
		return
	}
	id, ok := l.str(mustField(l, -1, "id"))
	if !ok {
		s.Phase = phaseOther // SPEC §5: a header has a string id
		return
	}
	s.Phase = phaseSession
	s.ID = id
	if v, ok := l.field(-1, "cwd"); ok {
		s.Cwd, _ = l.str(v)
	}
	if v, ok := l.field(-1, "parentSession"); ok {
		s.Parent, _ = l.str(v)
	}
	if pi := l.fieldIndex("project"); pi >= 0 && l.b[l.members[pi].val.start] == '{' {
		s.Project = session.Project{GitRoot: l.strField(pi, "gitRoot"), Remote: l.strField(pi, "remote")}
	}
	if v, ok := l.field(-1, "timestamp"); ok {
		if ts, ok := l.str(v); ok {
			s.Created = jsDate(ts)
			s.HeaderTime = s.Created
		} else {
			s.Created = jsDateOf(l.raw(v))
		}
	}
}

// join folds into s the fold p of the lines that follow s's, which was made
// as if they followed a session header (see foldPieces).
func (s *summary) join(p *summary) {
	if s.Phase != phaseSession || s.Drop {
		return // nothing after changes the outcome
	}
	s.Drop = p.Drop
	s.Entries += p.Entries
	s.Messages += p.Messages
	if p.named {
		s.Name, s.named = p.Name, true
	}
	if s.First == "" {
		s.First = p.First
	}
	s.Activity = max(s.Activity, p.Activity)
}

// sessionInfo applies pi's `name = entry.name?.trim() || undefined`.
func (s *summary) sessionInfo(l *line) {
	s.named = true
	v, ok := l.field(-1, "name")
	if !ok || isNull(l.raw(v)) {
		s.Name = ""
		return
	}
	name, ok := l.str(v)
	if !ok { // .trim is not a function: pi drops the file
		s.Drop = true
		return
	}
	s.Name = trimJS(name)
}

func (s *summary) message(l *line) {
	s.Messages++
	mi := l.fieldIndex("message")
	if mi < 0 || isNull(l.raw(l.members[mi].val)) { // message.role throws
		s.Drop = true
		return
	}
	if l.b[l.members[mi].val.start] != '{' {
		return // not an object: no role, skipped
	}
	// One pass over the message's members; the last of duplicate names wins.
	var role, content, ts *member
	for i := int(mi) + 1; i < len(l.members) && l.members[i].parent == mi; i++ {
		m := &l.members[i]
		switch {
		case l.keyIs(m, "role"):
			role = m
		case l.keyIs(m, "content"):
			content = m
		case l.keyIs(m, "timestamp"):
			ts = m
		}
	}
	if role == nil || content == nil {
		return
	}
	user := l.strIs(role.val, "user")
	if !user && !l.strIs(role.val, "assistant") {
		return
	}
	// Last activity: message.timestamp when it is a number, else the entry's.
	if ts != nil {
		if f, ok := l.num(ts.val); ok {
			s.Activity = math.Max(s.Activity, f)
			goto text
		}
	}
	if ts, ok := l.field(-1, "timestamp"); ok {
		if str, ok := l.str(ts); ok {
			if t := jsDate(str); t.valid {
				s.Activity = math.Max(s.Activity, float64(t.ms))
			}
		}
	}
text:
	// pi extracts the text of every user and assistant message (for its search),
	// so content that is not a string or an array of objects makes it drop the file.
	if c := l.b[content.val.start]; c != '"' && (c != '[' || content.nullElem) {
		s.Drop = true // not a string, not an array, or an array holding null
		return
	}
	if s.First != "" || !user {
		return
	}
	s.First = jsText(l.b, content.val)
}

func isNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }

// firstMax bounds a listing's firstMessage: pi keeps the whole text, but a
// 200 MB first message would be held, stored in the index twice and printed
// by 'ls --json' (2.7 GB for one listing). Past it the text is cut at a
// character's end.
const firstMax = 1 << 20

// jsText is pi's extractTextContent: a string as it is, or the text of the
// "text" blocks joined with a space, cut after about firstMax bytes. The
// caller has checked that content is a string or an array without null
// elements (else pi throws).
func jsText(b []byte, content span) string {
	if b[content.start] == '"' {
		q := b[content.start:content.end]
		return string(appendUnquotedMax(make([]byte, 0, min(len(q), firstMax+utf8.UTFMax)), q, firstMax))
	}
	var out []byte
	parts := 0
	elements(b, content, func(e span) {
		if b[e.start] != '{' || len(out) >= firstMax {
			return
		}
		var typ string
		var text span
		hasText := false
		objectMembers(b, e, func(k string, v span) {
			switch k {
			case "type":
				typ, _ = unquote(b[v.start:v.end])
				if b[v.start] != '"' {
					typ = ""
				}
			case "text":
				text, hasText = v, true
			}
		})
		if typ != "text" {
			return
		}
		if parts++; parts > 1 {
			out = append(out, ' ')
		}
		if !hasText {
			return
		}
		if b[text.start] == '"' {
			out = appendUnquotedMax(out, b[text.start:text.end], firstMax)
		} else {
			out = append(out, jsJoinValue(b, text)...)
		}
	})
	return string(out)
}

// jsJoinValue is how Array.prototype.join prints one element.
func jsJoinValue(b []byte, v span) string {
	raw := b[v.start:v.end]
	switch raw[0] {
	case '"':
		s, _ := unquote(raw)
		return s
	case 'n':
		return ""
	case 't', 'f':
		return string(raw)
	case '{':
		return "[object Object]"
	case '[':
		var parts []string
		elements(b, v, func(e span) { parts = append(parts, jsJoinValue(b, e)) })
		return strings.Join(parts, ",")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return string(raw)
	}
	return js.Number(f)
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return trimmedJS(b)
		}
	}
	return true
}

// trimmedJS reports whether b is only white space for JavaScript's String.prototype.trim.
func trimmedJS(b []byte) bool { return len(trimJSStart(b)) == 0 }

// trimJSStart drops the white space JavaScript's trim() drops from the start
// (it includes U+FEFF and the Unicode spaces that JSON does not allow).
func trimJSStart(b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if !isJSSpace(r) {
			break
		}
		b = b[n:]
	}
	return b
}

func trimJS(s string) string { return strings.TrimFunc(s, isJSSpace) }

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
