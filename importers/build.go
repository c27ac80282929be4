package importers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/arborlog/arbor/session"
)

// node is one pi entry a reader produces, before ids are assigned. Readers name
// nodes and their parents by keys of their own choosing (a source uuid, a line
// number); the builder turns keys into stable 8-hex entry ids, so importing the
// same source twice gives the same ids.
type node struct {
	key    string
	parent string // key of the parent; "" for a root
	typ    string
	ts     string         // ISO-8601 UTC
	fields map[string]any // the type's fields (message, summary, customType, ...)
	origin Origin
	pos    int // order added
}

// Origin is where an imported entry came from: written on every entry as
// "origin", so each entry can be traced back to its source line.
type Origin struct {
	Line int    `json:"line"`
	ID   string `json:"id,omitempty"`   // the source's id for it (a uuid, a call id)
	Part int    `json:"part,omitempty"` // which of several entries made from one line (1-based)
}

// builder collects the nodes of one session and writes them as pi JSONL.
type builder struct {
	seed  string
	nodes []*node
	byKey map[string]*node
	// calls holds, for an assistant message or a tool result, the tool calls
	// a tool result under it may answer.
	calls   map[string]map[string]bool
	orphans int
}

func newBuilder(seed string) *builder {
	return &builder{seed: seed, byKey: map[string]*node{}, calls: map[string]map[string]bool{}}
}

// add appends a node; a key already used gets a suffix, so nothing is lost. A
// tool result that does not follow the message with its call would make a
// provider refuse the whole context: it is kept as a custom entry instead.
func (b *builder) add(n *node) *node {
	if m, ok := n.fields["message"].(map[string]any); ok && n.typ == "message" {
		switch m["role"] {
		case "assistant":
			calls := map[string]bool{}
			blocks, _ := m["content"].([]any)
			for _, bl := range blocks {
				if c, ok := bl.(map[string]any); ok && c["type"] == "toolCall" {
					id, _ := c["id"].(string)
					calls[id] = true
				}
			}
			defer func() { b.calls[n.key] = calls }()
		case "toolResult":
			id, _ := m["toolCallId"].(string)
			if open := b.calls[n.parent]; open[id] {
				defer func() { b.calls[n.key] = open }()
			} else {
				n.typ = "custom"
				n.fields = map[string]any{"customType": "import.orphan_tool_result", "data": m}
				b.orphans++
			}
		}
	}
	base := n.key
	for i := 2; b.byKey[n.key] != nil; i++ {
		n.key = fmt.Sprintf("%s~%d", base, i)
	}
	n.pos = len(b.nodes)
	b.nodes = append(b.nodes, n)
	b.byKey[n.key] = n
	return n
}

func (b *builder) has(key string) bool { return b.byKey[key] != nil }

// entryID derives an 8-hex id from the session seed and the node key.
func entryID(seed, key string, used map[string]bool) string {
	for i := 0; ; i++ {
		h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", seed, key, i))
		id := hex.EncodeToString(h[:4])
		if !used[id] {
			used[id] = true
			return id
		}
	}
}

// stableUUID derives a version-4-shaped uuid from a string, for session ids
// that must come out the same on every import of one source.
func stableUUID(s string) string {
	h := sha256.Sum256([]byte("arbor-import\x00" + s))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// entries orders the nodes so that every parent precedes its children and the
// leaf (a key; "" for the last node added) is the last line, which is the leaf pi
// continues from. Parents that were never added make a node a root; a parent
// loop is cut at the loop's first node in add order.
func (b *builder) order(leaf string) []*node {
	children := map[string][]*node{}
	var roots []*node
	for _, n := range b.nodes {
		if n.parent == "" || b.byKey[n.parent] == nil || n.parent == n.key {
			n.parent = ""
			roots = append(roots, n)
			continue
		}
		children[n.parent] = append(children[n.parent], n)
	}
	onPath := map[string]bool{}
	if len(b.nodes) > 0 {
		l := b.byKey[leaf]
		if l == nil {
			l = b.nodes[len(b.nodes)-1]
		}
		for n := l; n != nil && !onPath[n.key]; n = b.byKey[n.parent] {
			onPath[n.key] = true
		}
	}
	out := make([]*node, 0, len(b.nodes))
	seen := map[string]bool{}
	visit := func(n *node) {
		stack := []*node{n}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[n.key] {
				continue
			}
			seen[n.key] = true
			out = append(out, n)
			kids := slices.Clone(children[n.key])
			// The child on the leaf's path is visited last; the stack pops in
			// reverse, so push it first.
			slices.SortStableFunc(kids, func(a, c *node) int {
				switch {
				case onPath[a.key] == onPath[c.key]:
					return c.pos - a.pos
				case onPath[a.key]:
					return -1
				}
				return 1
			})
			stack = append(stack, kids...)
		}
	}
	slices.SortStableFunc(roots, func(a, c *node) int {
		switch {
		case onPath[a.key] == onPath[c.key]:
			return a.pos - c.pos
		case onPath[a.key]:
			return 1
		}
		return -1
	})
	for _, r := range roots {
		visit(r)
	}
	// Nodes on a parent loop were never reached from a root: cut each loop at
	// its first node.
	for _, n := range b.nodes {
		if !seen[n.key] {
			n.parent = ""
			visit(n)
		}
	}
	return out
}

// Header is the pi session header an import writes, with where it came from.
type Header struct {
	ID            string
	Timestamp     string
	Cwd           string
	ParentSession string
	From          Source
}

// Source is the header's "importedFrom" record.
type Source struct {
	Format    string    `json:"format"`
	Path      string    `json:"path"`
	ID        string    `json:"id,omitempty"`        // the source's session id
	Parent    string    `json:"parent,omitempty"`    // the source id of the session it was forked from or spawned by
	ToolCall  string    `json:"toolCall,omitempty"`  // the parent's tool call that started it (a subagent)
	Cursors   []Cursor  `json:"cursors,omitempty"`   // rho cursors, with their leaves as imported ids
	Overlays  []Overlay `json:"overlays,omitempty"`  // rho resolution lines, which pi has no form for
	Sidechain bool      `json:"sidechain,omitempty"` // a subagent transcript
}

// Overlay is a rho Resolution line: how a cursor shows an entry (outlined,
// summarized, pinned, compacted into another), with the entry as imported.
type Overlay struct {
	Line       int             `json:"line"`
	Entry      string          `json:"entry"`
	Cursor     string          `json:"cursor,omitempty"`
	Resolution json.RawMessage `json:"resolution"`
}

// Cursor is a rho cursor as imported.
type Cursor struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Leaf string `json:"leaf"`
}

func marshalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("importers: encode %T: %v", v, err)) // only maps of JSON values reach here
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// encodeHeader writes a pi v3 header line with the import record.
func encodeHeader(h Header) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":`)
	b.Write(marshalJSON(h.ID))
	b.WriteString(`,"timestamp":`)
	b.Write(marshalJSON(h.Timestamp))
	b.WriteString(`,"cwd":`)
	b.Write(marshalJSON(h.Cwd))
	if h.ParentSession != "" {
		b.WriteString(`,"parentSession":`)
		b.Write(marshalJSON(h.ParentSession))
	}
	b.WriteString(`,"importedFrom":`)
	b.Write(marshalJSON(h.From))
	b.WriteString("}")
	return b.Bytes()
}

// finish assigns ids and encodes the entries in order; leaf names the node the
// session continues from ("" for the last added).
func (b *builder) finish(leaf string) (lines [][]byte, ids map[string]string) {
	nodes := b.order(leaf)
	ids = map[string]string{}
	used := map[string]bool{}
	// Ids are derived in add order, so a source that grew keeps the ids it had.
	for _, n := range b.nodes {
		ids[n.key] = entryID(b.seed, n.key, used)
	}
	for _, n := range nodes {
		var buf bytes.Buffer
		buf.WriteString(`{"type":`)
		buf.Write(marshalJSON(n.typ))
		buf.WriteString(`,"id":`)
		buf.Write(marshalJSON(ids[n.key]))
		buf.WriteString(`,"parentId":`)
		if n.parent == "" {
			buf.WriteString("null")
		} else {
			buf.Write(marshalJSON(ids[n.parent]))
		}
		buf.WriteString(`,"timestamp":`)
		buf.Write(marshalJSON(n.ts))
		fields := n.fields
		// Fields that name other entries by key are rewritten to ids.
		for _, f := range []string{"firstKeptEntryId", "targetId", "fromId"} {
			if k, ok := fields[f].(string); ok {
				if id, ok := ids[k]; ok {
					fields[f] = id
				} else {
					delete(fields, f)
				}
			}
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			buf.WriteString(",")
			buf.Write(marshalJSON(k))
			buf.WriteString(":")
			buf.Write(marshalJSON(fields[k]))
		}
		buf.WriteString(`,"origin":`)
		buf.Write(marshalJSON(n.origin))
		buf.WriteString("}")
		lines = append(lines, buf.Bytes())
	}
	return lines, ids
}

// isoTime formats t as pi's entry timestamps; the zero time gives "".
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return session.FormatTime(t)
}

// parseTime reads an ISO-8601 time; ok is false when s is not one.
func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// msTime is a message timestamp (Unix milliseconds) for an ISO time.
func msTime(iso string) float64 {
	t, ok := parseTime(iso)
	if !ok {
		return 0
	}
	return float64(t.UnixMilli())
}

// normTime returns s as pi's ISO form, or fallback when s is not a time.
func normTime(s, fallback string) string {
	if t, ok := parseTime(s); ok {
		return isoTime(t)
	}
	return fallback
}

// Message helpers: pi's message shapes as maps (keys are written sorted).

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func imageBlock(data, mime string) map[string]any {
	return map[string]any{"type": "image", "data": data, "mimeType": mime}
}

func userMessage(content []any, ts float64) map[string]any {
	return map[string]any{"role": "user", "content": content, "timestamp": ts}
}

func toolResultMessage(callID, name string, content []any, isError bool, ts float64) map[string]any {
	if content == nil {
		content = []any{}
	}
	return map[string]any{"role": "toolResult", "toolCallId": callID, "toolName": name, "content": content, "isError": isError, "timestamp": ts}
}

// usage is pi's usage record with zero cost (the sources do not say the price).
func usage(input, output, cacheRead, cacheWrite float64) map[string]any {
	return map[string]any{
		"input": input, "output": output, "cacheRead": cacheRead, "cacheWrite": cacheWrite,
		"totalTokens": input + output + cacheRead + cacheWrite,
		"cost":        map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
	}
}
