package toolargs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ImageNote is how a text view shows an image it cannot draw, from the
// image's MIME type and its base64 data: "[image: image/png, 3 KB]".
func ImageNote(mime, data string) string {
	if mime == "" {
		mime = "unknown type"
	}
	n := len(data) * 3 / 4
	if strings.HasSuffix(data, "==") {
		n -= 2
	} else if strings.HasSuffix(data, "=") {
		n--
	}
	return fmt.Sprintf("[image: %s, %d KB]", mime, (max(n, 0)+1023)/1024)
}

// SourceNotes says what the blocks an importer kept beside a message hold
// (the entry's "sourceBlocks": content pi's format has no block for), one
// note a block: Claude Code's tool_reference names the tool it loads,
// "[tool_reference: WebFetch]"; another block is named by its type. entry is
// the entry's JSON line; an entry without such blocks gives none.
func SourceNotes(entry []byte) []string {
	if !bytes.Contains(entry, []byte(`"sourceBlocks"`)) {
		return nil // most entries: not decoded
	}
	var e struct {
		SourceBlocks []json.RawMessage `json:"sourceBlocks"`
	}
	if json.Unmarshal(entry, &e) != nil {
		return nil
	}
	var notes []string
	for _, raw := range e.SourceBlocks {
		var b struct {
			Type     string `json:"type"`
			ToolName string `json:"tool_name"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type == "" {
			continue
		}
		if b.Type == "tool_reference" && b.ToolName != "" {
			notes = append(notes, "[tool_reference: "+b.ToolName+"]")
			continue
		}
		notes = append(notes, "["+b.Type+"]")
	}
	return notes
}
