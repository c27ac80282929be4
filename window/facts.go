package window

import (
	"slices"

	"github.com/arborlog/arbor/session"
	"github.com/go-json-experiment/json/jsontext"
)

// facts is what the planner and Measure read of a decoded message besides its
// texts, so a context of a million messages is not held decoded: a text is
// decoded again only to render an outline or summary of it.
type facts struct {
	role       string
	toolCallID string
	stopReason string
	hasUsage   bool        // a usage is recorded (Message.usage decodes it when asked)
	hasText    bool        // Content.Text("") != ""
	calls      []toolBlock // the toolCall blocks, in order
}

// toolBlock is one toolCall block of an assistant message.
type toolBlock struct {
	id, name  string
	arguments jsontext.Value
}

// noFacts are the facts of a message that could not be decoded.
var noFacts facts

// factsOf reads the facts of a decoded message. Most messages have no more
// facts than their role, stop reason and whether they have text and usage:
// those share one value.
func factsOf(d session.MessageData) *facts {
	f := facts{role: intern(d.Role), toolCallID: d.ToolCallID, stopReason: intern(d.StopReason), hasUsage: d.Usage != nil, hasText: d.Content.Text("") != ""}
	for _, b := range d.Content.Blocks {
		if b.Type == "toolCall" {
			f.calls = append(f.calls, toolBlock{b.ID, b.Name, jsontext.Value(b.Arguments)})
		}
	}
	if f.toolCallID == "" && f.calls == nil {
		if p := sharedFacts(f); p != nil {
			return p
		}
	}
	return &f
}

// The usual roles and stop reasons, which facts hold as these constants.
var (
	usualRoles       = [...]string{session.RoleUser, session.RoleAssistant, session.RoleToolResult}
	usualStopReasons = [...]string{"", "stop", "toolUse", "error", "aborted", "length"}
)

// plainFacts holds one facts value for each usual role and stop reason, with
// and without text and usage.
var plainFacts = func() []facts {
	var out []facts
	for _, r := range usualRoles {
		for _, s := range usualStopReasons {
			for _, u := range []bool{false, true} {
				for _, t := range []bool{false, true} {
					out = append(out, facts{role: r, stopReason: s, hasUsage: u, hasText: t})
				}
			}
		}
	}
	return out
}()

// sharedFacts is the value of plainFacts equal to f, or nil.
func sharedFacts(f facts) *facts {
	r, s := slices.Index(usualRoles[:], f.role), slices.Index(usualStopReasons[:], f.stopReason)
	if r < 0 || s < 0 {
		return nil
	}
	i := ((r*len(usualStopReasons)+s)*2+b2i(f.hasUsage))*2 + b2i(f.hasText)
	return &plainFacts[i]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// intern returns the usual roles and stop reasons as constants, so facts do not
// keep a copy of each.
func intern(s string) string {
	if i := slices.Index(usualRoles[:], s); i >= 0 {
		return usualRoles[i]
	}
	if i := slices.Index(usualStopReasons[:], s); i >= 0 {
		return usualStopReasons[i]
	}
	return s
}
