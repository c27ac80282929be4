package compaction

import (
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/arborlog/arbor/session"
)

// ToolResultMaxChars is where pi cuts a tool result's text when it serializes a
// conversation for a summary: the start is enough to summarize from.
const ToolResultMaxChars = 2000

// truncateForSummary is pi's truncateForSummary, counting in UTF-16 code units.
func truncateForSummary(text string, max int) string {
	n := jsLen(text)
	if n <= max {
		return text
	}
	return jsSlice(text, max) + fmt.Sprintf("\n\n[... %d more characters truncated]", n-max)
}

// jsSlice is text.slice(0, n) in UTF-16 code units; a surrogate pair that
// would be cut in half is left out whole.
func jsSlice(text string, n int) string {
	units := 0
	for i, r := range text {
		w := len(utf16.Encode([]rune{r}))
		if units+w > n {
			return text[:i]
		}
		units += w
	}
	return text
}

// Serialize is pi 1.6.0's serializeConversation of a context converted for a
// model (session.ForModel): one paragraph per part, "[User]: …", "[Assistant]:
// …", "[Assistant tool calls]: name(k=<JSON>, …); …" and "[Tool result]: …" cut
// at ToolResultMaxChars. Thinking is left out (0.73.1 sent it as "[Assistant
// thinking]: …"), and so are system messages. Summarizers get a
// transcript rather than a conversation so that the model does not continue it.
func Serialize(msgs []session.ContextMessage) string {
	var parts []string
	for _, raw := range session.ForModel(msgs) {
		f := decode(raw)
		switch f.Role {
		case session.RoleUser:
			var text string
			if f.Content.IsString {
				text = f.Content.String
			} else {
				text = f.Content.Text("")
			}
			if text != "" {
				parts = append(parts, "[User]: "+text)
			}
		case session.RoleAssistant:
			var texts, calls []string
			for _, b := range f.Content.Blocks {
				switch b.Type {
				case "text":
					texts = append(texts, b.Text)
				case "toolCall":
					calls = append(calls, b.Name+"("+callArgs(b.Arguments)+")")
				}
			}
			if len(texts) > 0 {
				parts = append(parts, "[Assistant]: "+strings.Join(texts, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case session.RoleToolResult:
			if text := f.Content.Text(""); text != "" {
				parts = append(parts, "[Tool result]: "+truncateForSummary(text, ToolResultMaxChars))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// callArgs writes a tool call's arguments as pi does: k=JSON.stringify(v), joined by ", ".
func callArgs(raw []byte) string {
	members, ok := jsMembers(raw)
	if !ok {
		return ""
	}
	var out []string
	for _, m := range members {
		v, _ := jsStringify(m.val)
		out = append(out, m.key+"="+v)
	}
	return strings.Join(out, ", ")
}
