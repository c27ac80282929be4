package agent

import (
	"github.com/arborlog/arbor/session"
)

// messagesForRequest decodes the converted context and drops what providers
// refuse, as pi does: assistant messages that ended in an error or were aborted
// (with their tool calls), and tool results whose call is not in the request.
func messagesForRequest(raw [][]byte) []session.MessageData {
	// Sized once: a MessageData is ~300 bytes, and a million grown by
	// doubling would be twice that allocated.
	out := make([]session.MessageData, 0, len(raw))
	calls := map[string]bool{}
	for _, r := range raw {
		msg, err := session.ParseMessage(r)
		if err != nil {
			continue
		}
		m, err := msg.Data()
		if err != nil {
			continue
		}
		switch m.Role {
		case session.RoleAssistant:
			if m.StopReason == session.StopError || m.StopReason == session.StopAborted {
				continue
			}
			for _, b := range m.Content.AsBlocks() {
				if b.Type == "toolCall" {
					calls[b.ID] = true
				}
			}
		case session.RoleToolResult:
			if !calls[m.ToolCallID] {
				continue
			}
		case session.RoleUser:
		default:
			continue
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
