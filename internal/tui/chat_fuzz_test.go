package tui

import (
	"regexp"
	"testing"

	"github.com/arborlog/arbor/internal/termtext"
)

var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// FuzzChatMessage draws any message a session or a provider could hand the
// chat: what reaches the screen, once the chat's own styles are taken off,
// holds no character a terminal would act on.
func FuzzChatMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hello"}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"\u001b]0;x\u0007"},{"type":"text","text":"# hi\n\n` + "```go\\nx\\n```" + `"},{"type":"toolCall","id":"c","name":"bash\u001b[2J","arguments":{"command":"ls"}}],"stopReason":"error","errorMessage":"\u009b31m"}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"a\tb\r\n\u202e"}],"isError":true}`,
		`{"role":"bashExecution","command":"x","output":"\u001bP","exitCode":2}`,
		`{"role":"branchSummary","summary":"[link](\u001b]8;;http://x\u0007)"}`,
	} {
		f.Add(s)
	}
	h := newChat(f)
	f.Fuzz(func(t *testing.T, raw string) {
		m, ok := decodeMessage([]byte(raw))
		if !ok {
			return
		}
		for _, it := range appendMessage(nil, m) {
			for _, w := range []int{20, 80} {
				for _, line := range h.c.draw(it, w) {
					// The chat's own styles are SGR sequences; nothing else may be left.
					for _, r := range sgr.ReplaceAllString(line, "") {
						if termtext.Forbidden(r) {
							t.Fatalf("%q drew %q, which holds %U", raw, line, r)
						}
					}
				}
			}
		}
	})
}
