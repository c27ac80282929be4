package export

import (
	"errors"
	"fmt"
	"github.com/arborlog/arbor/redact"
	"time"

	"github.com/arborlog/arbor/session"
)

// Format is an export format.
type Format string

// The formats.
const (
	FormatHTML     Format = "html"
	FormatMarkdown Format = "md"
	FormatJSONL    Format = "jsonl"
)

// Ext is the file extension of a format, with the dot.
func (f Format) Ext() string {
	if f == FormatMarkdown {
		return ".md"
	}
	return "." + string(f)
}

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case FormatHTML, FormatMarkdown, FormatJSONL:
		return Format(s), nil
	case "markdown":
		return FormatMarkdown, nil
	}
	return "", fmt.Errorf("export: unknown format %q: use html, md or jsonl", s)
}

// Options chooses what an export holds.
type Options struct {
	// Leaf is the entry whose path is exported (the page selects it first);
	// "" means the active cursor's leaf.
	Leaf string
	// Redact, when set, replaces secrets in everything exported (package
	// redact: the agent's rules, and its configured patterns).
	Redact *redact.Redactor
	// NoTools leaves tool results out and keeps only the names of tool
	// calls (HTML and Markdown).
	NoTools bool
	// BranchOnly exports only the path to the leaf instead of the whole tree (HTML).
	BranchOnly bool
	// Source is the session file's path: the page names it, and a JSONL export
	// records it as its parentSession.
	Source string
	// ID and Now set the JSONL export's session id and creation time; zero
	// values mean a new UUIDv7 and the current time.
	ID  string
	Now func() time.Time
}

// Errors.
var (
	ErrEmpty = errors.New("export: the session has no entries yet: nothing to export")
)

// leaf returns the entry whose path is exported: o.Leaf, else the active
// cursor's leaf (nil for a session before its first entry).
func leaf(l *session.Log, o Options) (*session.Entry, error) {
	if o.Leaf == "" {
		return l.Leaf(), nil
	}
	e := l.Entry(o.Leaf)
	if e == nil {
		return nil, fmt.Errorf("%w: %s", session.ErrNotFound, o.Leaf)
	}
	if e.IsMarker() {
		return nil, fmt.Errorf("%w: %s", session.ErrIsMarker, o.Leaf)
	}
	return e, nil
}
