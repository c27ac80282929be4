package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// newEntryID returns 8 random hex characters not used in the log (as pi does:
// up to 100 tries, then a whole UUID).
func (l *Log) newEntryID() string {
	return randomID(func(id string) bool { _, ok := l.byID[id]; return ok })
}

func randomID(used func(string) bool) string {
	var b [4]byte
	for range 100 {
		_, _ = rand.Read(b[:])
		if id := hex.EncodeToString(b[:]); !used(id) {
			return id
		}
	}
	return newSessionID()
}

// appendOn writes one entry through cursor cid: its parent is the cursor's leaf
// unless parent is given, and it becomes the cursor's last entry. fields follow
// the envelope in the order given. The caller holds l.mu.
func (l *Log) appendOn(cid, typ string, parent *string, fields []member) (*Entry, error) {
	return l.appendWith(cid, typ, parent, func(*Entry) []member { return fields })
}

// appendWith is appendOn with fields that depend on the new entry's id and time.
func (l *Log) appendWith(cid, typ string, parent *string, fieldsOf func(e *Entry) []member) (*Entry, error) {
	if l.readOnly != nil {
		return nil, l.readOnly
	}
	c, ok := l.cursors[cid]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoCursor, cid)
	}
	if l.store != nil {
		ext, err := l.store.Refresh()
		if err != nil {
			return nil, err
		}
		l.ingest(ext)
	}
	e := &Entry{Type: typ, ID: l.newEntryID(), Timestamp: FormatTime(l.now())}
	if parent != nil {
		e.ParentID = *parent
	} else if c.leaf != nil {
		e.ParentID = c.leaf.e.ID
	}
	if cid != MainCursor {
		e.Cursor = cid
	}
	head := []member{{"type", mustValue(typ)}, {"id", mustValue(e.ID)}}
	if e.ParentID == "" {
		head = append(head, member{"parentId", jsontext.Value("null")})
	} else {
		head = append(head, member{"parentId", mustValue(e.ParentID)})
	}
	head = append(head, member{"timestamp", mustValue(e.Timestamp)})
	if e.Cursor != "" {
		head = append(head, member{"cursor", mustValue(e.Cursor)})
	}
	e.setBuilt(buildObject(append(head, fieldsOf(e)...)))
	if l.store != nil {
		if err := l.store.Write(e); err != nil {
			return nil, err
		}
	}
	l.add(e)
	return e, nil
}

func (l *Log) locked(f func() (*Entry, error)) (*Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return f()
}

// opt adds a member when v is not nil.
func opt(ms []member, name string, v any) []member {
	if v == nil {
		return ms
	}
	switch raw := v.(type) {
	case jsontext.Value:
		if len(raw) == 0 {
			return ms
		}
		return append(ms, member{name, raw})
	case json.RawMessage:
		if len(raw) == 0 {
			return ms
		}
		return append(ms, member{name, jsontext.Value(raw)})
	}
	return append(ms, member{name, mustValue(v)})
}

// AppendMessage appends a message entry on the active cursor.
func (l *Log) AppendMessage(m Message) (*Entry, error) { return l.Cursor("").AppendMessage(m) }

// AppendThinkingLevelChange records a new thinking level (off, minimal, low, medium, high, xhigh).
func (l *Log) AppendThinkingLevelChange(level string) (*Entry, error) {
	return l.Cursor("").AppendThinkingLevelChange(level)
}

// AppendModelChange records a switch of model.
func (l *Log) AppendModelChange(provider, modelID string) (*Entry, error) {
	return l.Cursor("").AppendModelChange(provider, modelID)
}

// AppendCompaction appends a compaction entry.
func (l *Log) AppendCompaction(c CompactionData) (*Entry, error) {
	return l.Cursor("").AppendCompaction(c)
}

// AppendCustom appends extension state that never reaches the model.
func (l *Log) AppendCustom(customType string, data any) (*Entry, error) {
	return l.Cursor("").AppendCustom(customType, data)
}

// AppendCustomMessage appends an extension message that reaches the model.
func (l *Log) AppendCustomMessage(customType string, content Content, display bool, details any) (*Entry, error) {
	return l.Cursor("").AppendCustomMessage(customType, content, display, details)
}

// SetSessionName appends a session_info entry; an empty name clears the session name.
func (l *Log) SetSessionName(name string) (*Entry, error) { return l.Cursor("").SetSessionName(name) }

// SetLabel labels an entry; an empty label clears it. The target must exist.
func (l *Log) SetLabel(targetID, label string) (*Entry, error) {
	return l.Cursor("").SetLabel(targetID, label)
}

// BranchWithSummary moves the leaf to id ("" for before the first entry) and
// appends a branch_summary there describing the branch left behind.
func (l *Log) BranchWithSummary(id, summary string, details any, fromHook bool) (*Entry, error) {
	return l.Cursor("").BranchWithSummary(id, summary, details, fromHook)
}

// CompactionData is the content of a compaction entry.
type CompactionData struct {
	Summary          string          `json:"summary"`
	FirstKeptEntryID string          `json:"firstKeptEntryId"`
	TokensBefore     int             `json:"tokensBefore"`
	Details          json.RawMessage `json:"details,omitzero"`
	FromHook         bool            `json:"fromHook,omitzero"`
	// Usage is the cost of the model call that wrote the summary (pi 1.6.0), if any.
	Usage json.RawMessage `json:"usage,omitzero"`
}

// BranchSummaryData is the content of a branch_summary entry.
type BranchSummaryData struct {
	FromID   string          `json:"fromId"`
	Summary  string          `json:"summary"`
	Details  json.RawMessage `json:"details,omitzero"`
	FromHook bool            `json:"fromHook,omitzero"`
}

func (c *Cursor) do(typ string, fields []member) (*Entry, error) {
	return c.l.locked(func() (*Entry, error) { return c.l.appendOn(c.cid(), typ, nil, fields) })
}

// AppendMessage appends a message entry.
func (c *Cursor) AppendMessage(m Message) (*Entry, error) {
	if m.Role == "" || m.raw == nil {
		return nil, ErrNoRole
	}
	return c.do(TypeMessage, []member{{"message", m.raw}})
}

// AppendThinkingLevelChange records a new thinking level.
func (c *Cursor) AppendThinkingLevelChange(level string) (*Entry, error) {
	return c.do(TypeThinkingLevelChange, []member{{"thinkingLevel", mustValue(level)}})
}

// AppendModelChange records a switch of model.
func (c *Cursor) AppendModelChange(provider, modelID string) (*Entry, error) {
	return c.do(TypeModelChange, []member{{"provider", mustValue(provider)}, {"modelId", mustValue(modelID)}})
}

// AppendCompaction appends a compaction entry as pi 1.6.0 writes it: details
// default to empty file lists; an empty FirstKeptEntryID keeps nothing (the
// entry's own id is recorded); the system prompt and tools in force (the
// context's system messages replayed) are stored as its systemMessage
// checkpoint, timestamped with the entry's time, so the context after it
// starts from them.
func (c *Cursor) AppendCompaction(d CompactionData) (*Entry, error) {
	if d.Details == nil {
		d.Details = json.RawMessage(`{"readFiles":[],"modifiedFiles":[]}`)
	}
	return c.l.locked(func() (*Entry, error) {
		cid := c.cid()
		cur, ok := c.l.cursors[cid]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoCursor, cid)
		}
		system, _ := SystemPrompt(c.l.buildContext(cur.leaf).Messages)
		return c.l.appendWith(cid, TypeCompaction, nil, func(e *Entry) []member {
			first := d.FirstKeptEntryID
			if first == "" {
				first = e.ID
			}
			ms := []member{{"summary", mustValue(d.Summary)}, {"firstKeptEntryId", mustValue(first)}, {"tokensBefore", mustValue(d.TokensBefore)}}
			ms = opt(ms, "details", d.Details)
			ms = opt(ms, "usage", d.Usage)
			if d.FromHook {
				ms = append(ms, member{"fromHook", mustValue(true)})
			}
			if system != nil {
				sms, _ := objectMembers(system)
				ms = append(ms, member{"systemMessage", buildObject(setMember(sms, "timestamp", jsMillis(e.Timestamp)))})
			}
			return ms
		})
	})
}

// AppendCustom appends extension state that never reaches the model.
func (c *Cursor) AppendCustom(customType string, data any) (*Entry, error) {
	if isMarkerType(customType) {
		return nil, fmt.Errorf("session: customType %q is reserved for arbor", customType)
	}
	return c.do(TypeCustom, opt([]member{{"customType", mustValue(customType)}}, "data", data))
}

// AppendCustomMessage appends an extension message that reaches the model.
func (c *Cursor) AppendCustomMessage(customType string, content Content, display bool, details any) (*Entry, error) {
	ms := []member{{"customType", mustValue(customType)}, {"content", mustValue(content)}, {"display", mustValue(display)}}
	return c.do(TypeCustomMessage, opt(ms, "details", details))
}

// SetSessionName appends a session_info entry with the name as pi 1.6.0 writes it:
// each run of line breaks becomes one space, then the name is trimmed.
func (c *Cursor) SetSessionName(name string) (*Entry, error) {
	return c.do(TypeSessionInfo, []member{{"name", mustValue(cleanName(name))}})
}

// cleanName is a session name as pi 1.6.0 stores it: runs of CR and LF
// replaced by one space, surrounding white space trimmed.
func cleanName(name string) string {
	return strings.TrimSpace(lineBreaks.ReplaceAllString(name, " "))
}

var lineBreaks = regexp.MustCompile(`[\r\n]+`)

// SetLabel labels an entry; an empty label clears it.
func (c *Cursor) SetLabel(targetID, label string) (*Entry, error) {
	return c.l.locked(func() (*Entry, error) {
		if _, ok := c.l.byID[targetID]; !ok {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, targetID)
		}
		ms := []member{{"targetId", mustValue(targetID)}}
		if label != "" {
			ms = append(ms, member{"label", mustValue(label)})
		}
		return c.l.appendOn(c.cid(), TypeLabel, nil, ms)
	})
}

// BranchWithSummary moves the leaf to id ("" for before the first entry) and
// appends a branch_summary there whose fromId is the leaf that was left ("root"
// when there was none), as pi 1.6.0 records it.
func (c *Cursor) BranchWithSummary(id, summary string, details any, fromHook bool) (*Entry, error) {
	return c.BranchWithSummaryUsage(id, summary, details, fromHook, nil)
}

// BranchWithSummaryUsage is BranchWithSummary recording the usage of the
// model call that wrote the summary (nil: none).
func (c *Cursor) BranchWithSummaryUsage(id, summary string, details any, fromHook bool, usage *Usage) (*Entry, error) {
	return c.l.locked(func() (*Entry, error) {
		if id != "" {
			n, ok := c.l.byID[id]
			if !ok {
				return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
			}
			if n.e.IsMarker() {
				return nil, fmt.Errorf("%w: %s", ErrIsMarker, id)
			}
		}
		from := "root"
		if cur, ok := c.l.cursors[c.cid()]; ok && cur.leaf != nil {
			from = cur.leaf.e.ID
		}
		ms := opt([]member{{"fromId", mustValue(from)}, {"summary", mustValue(summary)}}, "details", details)
		if usage != nil {
			ms = append(ms, member{"usage", mustValue(usage)})
		}
		if fromHook {
			ms = append(ms, member{"fromHook", mustValue(true)})
		}
		return c.l.appendOn(c.cid(), TypeBranchSummary, &id, ms)
	})
}

// ErrNotEditable is returned for a context edit whose target is not a user,
// assistant or tool result message or a custom message on the branch.
var ErrNotEditable = errors.New("session: entry is not an editable message on the branch")

// AppendContextEdit appends a context_edit (pi 1.6.0) on the active cursor.
func (l *Log) AppendContextEdit(targetID string, replacement *Content) (*Entry, error) {
	return l.Cursor("").AppendContextEdit(targetID, replacement)
}

// AppendContextEdit hides an earlier message of this cursor's branch from the
// context (replacement nil) or replaces its content, as pi 1.6.0's
// appendContextEdit: the target must be a user, assistant or tool result
// message or a custom message on the branch; a string replacement of an
// assistant message or tool result is stored as one text block. The latest
// edit of a target wins, so a later edit (with the original content, say)
// undoes an earlier one. Nothing is deleted.
func (c *Cursor) AppendContextEdit(targetID string, replacement *Content) (*Entry, error) {
	return c.contextEdit(targetID, func(role string, _ *Entry) jsontext.Value {
		if replacement == nil {
			return jsontext.Value("null")
		}
		content := mustValue(*replacement)
		if replacement.IsString && (role == RoleAssistant || role == RoleToolResult) {
			content = mustValue([]textBlock{{Type: "text", Text: replacement.String}})
		}
		return buildObject([]member{{"content", content}})
	})
}

// RestoreContext undoes earlier context edits of a target: it appends an edit
// whose replacement is the target's own stored content, byte for byte.
func (c *Cursor) RestoreContext(targetID string) (*Entry, error) {
	return c.contextEdit(targetID, func(_ string, target *Entry) jsontext.Value {
		raw := target.raw
		if target.Type == TypeMessage {
			raw = target.messageRaw()
		}
		ms, _ := objectMembers(raw)
		content, _ := find(ms, "content")
		if len(content) == 0 || content.Kind() == 'n' {
			content = jsontext.Value("[]")
		}
		return buildObject([]member{{"content", content}})
	})
}

func (c *Cursor) contextEdit(targetID string, replacement func(role string, target *Entry) jsontext.Value) (*Entry, error) {
	return c.l.locked(func() (*Entry, error) {
		cid := c.cid()
		cur, ok := c.l.cursors[cid]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoCursor, cid)
		}
		n, ok := c.l.byID[targetID]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, targetID)
		}
		if !slices.Contains(c.l.path(cur.leaf), n) {
			return nil, fmt.Errorf("%w: %s is not on the branch", ErrNotEditable, targetID)
		}
		role := RoleCustom
		switch {
		case n.e.Type == TypeMessage && (n.e.msgRole() == RoleUser || n.e.msgRole() == RoleAssistant || n.e.msgRole() == RoleToolResult):
			role = n.e.msgRole()
		case n.e.Type != TypeCustomMessage:
			return nil, fmt.Errorf("%w: %s is a %s", ErrNotEditable, targetID, describeType(n.e))
		}
		return c.l.appendOn(cid, TypeContextEdit, nil, []member{{"targetId", mustValue(targetID)}, {"replacement", replacement(role, n.e)}})
	})
}

func describeType(e *Entry) string {
	if e.Type == TypeMessage {
		return e.msgRole() + " message"
	}
	return e.Type
}
