package window

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// bound cuts every tool output larger than its share of the budget. Pinned
// entries are left whole; the cut text ends at a line boundary and a note says
// how large the output was and where the rest is. The blob is written later,
// by keepCut, and only for outputs the planner kept in full.
func (p *planner) bound() {
	limit := int(p.o.ResultShare * float64(p.o.Budget))
	for _, it := range p.items {
		if it.synth || it.level() != session.Full || it.tokens <= limit {
			continue
		}
		msg := it.msg()
		if msg.Role != session.RoleToolResult && msg.Role != session.RoleBashExecution {
			continue
		}
		d, ok := data(msg.Raw)
		if !ok {
			continue
		}
		full := d.Output
		if msg.Role == session.RoleToolResult {
			full = d.Content.Text("\n")
		}
		c := &Cut{Bytes: len(full)}
		if msg.Entry != nil {
			c.EntryID = msg.Entry.ID
		}
		if p.o.Blobs != nil {
			sum := sha256.Sum256([]byte(full))
			c.Blob = "sha256:" + hex.EncodeToString(sum[:])
		}
		// Shrink until the estimate fits: the rate of the text is only known once counted.
		keep := int(float64(limit) * p.est.CodeBytesPerToken)
		for range 8 {
			text := cutLines(full, keep)
			note := cutNote(text, full, *c)
			if d.ToolName == "read" || d.ToolName == "read_file" {
				note = strings.TrimSuffix(note, ".]") + fmt.Sprintf("; or read the file again from line %d.]", countLines(text)+1)
			}
			m := p.withOutput(it.msg(), d, text+note)
			n := p.est.Message(m)
			c.Kept = len(text)
			it.extra().cut = &cutOutput{c, full}
			it.setMsg(m)
			it.tokens = n
			if n <= limit || keep == 0 {
				break
			}
			keep = int(float64(keep) * float64(limit) / float64(n) * 0.95)
		}
	}
}

// keepCut writes the full output of every cut tool result that stayed in the
// context, so the reference in its note can be read back.
func (p *planner) keepCut(res *Result) error {
	for _, it := range p.items {
		cut := it.cut()
		if cut == nil || it.omitted || it.level() != session.Full {
			continue
		}
		if p.o.Blobs != nil {
			ref, err := p.o.Blobs.Put([]byte(cut.full))
			if err != nil {
				return fmt.Errorf("window: keep the full output of %s: %w", cut.EntryID, err)
			}
			if ref != cut.Blob {
				return fmt.Errorf("window: blob store returned %s for the output of %s, want %s", ref, cut.EntryID, cut.Blob)
			}
		}
		res.Cuts = append(res.Cuts, *cut.Cut)
	}
	return nil
}

func (p *planner) withOutput(m session.ContextMessage, d session.MessageData, text string) session.ContextMessage {
	if m.Role == session.RoleBashExecution {
		m.Raw = edit(m.Raw, nil, []member{{"output", marshal(text)}, {"truncated", nil}, {"fullOutputPath", nil}})
		return m
	}
	blocks := []jsontext.Value{marshal(textBlock{Type: "text", Text: text})}
	for _, b := range d.Content.Blocks {
		if b.Type == "image" {
			blocks = append(blocks, marshal(b))
		}
	}
	m.Raw = edit(m.Raw, nil, []member{{"content", marshal(blocks)}})
	return m
}

// cutLines returns the longest prefix of s of at most n bytes that ends at a
// line boundary (or, when the first line alone is longer, at a character boundary).
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > 0 {
		return s[:i+1]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func cutNote(kept, full string, c Cut) string {
	where := "the session still holds it in full"
	if c.EntryID != "" {
		where += " (entry " + c.EntryID + ")"
	}
	if c.Blob != "" {
		where = "read the rest with `arbor blob " + c.Blob + "`"
	}
	return fmt.Sprintf("\n[Output cut to %d of %d lines (%s of %s); %s.]", countLines(kept), countLines(full), size(len(kept)), size(len(full)), where)
}

// BoundToolResult is for agent authors, before they append a tool result: if
// its text is longer than maxBytes, the full text goes to blobs and the message
// that comes back holds the first lines up to maxBytes, a note saying how large
// the output was and how to read the rest (`arbor blob <ref>`), and the
// reference in details.arborBlob {ref, bytes}. The log then stays small and
// nothing is lost. A result within maxBytes comes back unchanged with ref "".
func BoundToolResult(m session.Message, maxBytes int, blobs BlobWriter) (session.Message, string, error) {
	if m.Role != session.RoleToolResult {
		return m, "", fmt.Errorf("window: bound a %s message: only tool results are bounded", m.Role)
	}
	d, err := m.Data()
	if err != nil {
		return m, "", err
	}
	full := d.Content.Text("\n")
	if len(full) <= maxBytes {
		return m, "", nil
	}
	ref, err := blobs.Put([]byte(full))
	if err != nil {
		return m, "", fmt.Errorf("window: keep the full output of tool call %s: %w", d.ToolCallID, err)
	}
	kept := cutLines(full, maxBytes)
	text := kept + cutNote(kept, full, Cut{Blob: ref})
	blocks := []jsontext.Value{marshal(textBlock{Type: "text", Text: text})}
	for _, b := range d.Content.Blocks {
		if b.Type == "image" {
			blocks = append(blocks, marshal(b))
		}
	}
	ptr := marshal(map[string]any{"ref": ref, "bytes": len(full)})
	details := object([]member{{"arborBlob", ptr}})
	if jsontext.Value(d.Details).Kind() == '{' {
		details = edit(d.Details, nil, []member{{"arborBlob", ptr}})
	}
	out, err := session.ParseMessage(edit(m.Raw(), nil, []member{{"content", marshal(blocks)}, {"details", details}}))
	return out, ref, err
}
