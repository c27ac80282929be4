package window

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arborlog/arbor/session"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// pairingLog is a session whose messages pair badly as often as not: tool
// call ids from a small pool (repeated in one reply and across replies),
// results of calls made elsewhere or never, replies that failed, strings the
// scanner leaves to the decoder, fields the decoder refuses, and summaries,
// bash runs and custom messages that reach the model as user text.
func pairingLog(t *rapid.T) *session.Log {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n")
	parent := "null"
	id := func() string { return rapid.SampledFrom([]string{"c1", "c2", "c3", ""}).Draw(t, "id") }
	text := func() string {
		return rapid.SampledFrom([]string{"plain", `esc\"aped`, `caf\u00e9`, "", "two\\nlines"}).Draw(t, "text")
	}
	for i := range rapid.IntRange(0, 40).Draw(t, "messages") {
		var m, typ string
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0:
			m = fmt.Sprintf(`{"role":"user","content":"%s","timestamp":%d}`, text(), i)
		case 1, 2:
			var blocks []string
			for range rapid.IntRange(0, 3).Draw(t, "calls") {
				blocks = append(blocks, fmt.Sprintf(`{"type":"toolCall","id":"%s","name":"%s","arguments":{"path":"%s"}}`,
					id(), rapid.SampledFrom([]string{"read", "bash", "edit"}).Draw(t, "tool"), text()))
			}
			blocks = append(blocks, fmt.Sprintf(`{"type":"text","text":"%s"}`, text()))
			m = fmt.Sprintf(`{"role":"assistant","content":[%s],"stopReason":"%s","usage":{"input":%d,"output":1},"timestamp":%d}`,
				strings.Join(blocks, ","), rapid.SampledFrom([]string{"toolUse", "stop", "error", "aborted"}).Draw(t, "stop"), i, i)
		case 3, 4:
			m = fmt.Sprintf(`{"role":"toolResult","toolCallId":"%s","toolName":"bash","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":%d}`, id(), text(), i)
		case 5:
			m = rapid.SampledFrom([]string{
				`{"role":"toolResult","toolCallId":5,"content":"the decoder refuses it"}`,
				`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"timestamp":"not a number"}`,
				`{"role":"toolResult","toolCallId":"c1","toolCallId":"c2","content":"twice"}`,
			}).Draw(t, "odd")
		case 6:
			m = fmt.Sprintf(`{"role":"bashExecution","command":"ls","output":"%s","exitCode":0,"cancelled":false,"truncated":false,"timestamp":%d}`, text(), i)
		case 7:
			typ = "custom_message"
			m = fmt.Sprintf(`"customType":"note","content":"%s","display":true`, text())
		case 8:
			typ = "branch_summary"
			m = fmt.Sprintf(`"fromId":"x","summary":"%s"`, text())
		}
		eid := fmt.Sprintf(`"e%d"`, i)
		if typ == "" {
			fmt.Fprintf(&b, `{"type":"message","id":%s,"parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":%s}`+"\n", eid, parent, m)
		} else {
			fmt.Fprintf(&b, `{"type":"%s","id":%s,"parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z",%s}`+"\n", typ, eid, parent, m)
		}
		parent = eid
	}
	return session.Load([]byte(b.String()))
}

// TestStreamIsBuild: Stream hands over the messages Build makes without a
// budget, in order, each with what scanning it gives where the scanner reads
// it, and stops when asked; with an outline or summary stamped it hands over
// nothing and says so.
func TestStreamIsBuild(t *testing.T) {
	defer func(n int) { streamRun = n }(streamRun)
	rapid.Check(t, func(t *rapid.T) {
		// Runs of a few messages: what is read ahead crosses runs.
		streamRun = rapid.SampledFrom([]int{1, 2, 3, 1024}).Draw(t, "run")
		l := pairingLog(t)
		ctx := l.Context()
		stamps := map[string]session.Resolution{}
		for _, m := range ctx.Messages {
			if lv := rapid.SampledFrom([]session.Level{"", session.Pinned, session.Full, session.Compacted, session.Outlined}).Draw(t, "stamp"); lv != "" && m.Entry != nil {
				stamps[m.Entry.ID] = session.Resolution{Level: lv}
			}
		}
		want, err := Build(ctx, stamps, Options{})
		if err != nil {
			t.Fatal(err)
		}
		original := map[*byte]bool{}
		for _, m := range ctx.Messages {
			if len(m.Raw) > 0 {
				original[&m.Raw[0]] = true
			}
		}
		var got []session.ContextMessage
		var last session.MessageData // what was handed over of the last message read
		var lastRaw []byte
		ok := Stream(ctx, stamps, func(m session.ContextMessage, d *session.MessageData) bool {
			got = append(got, m)
			if d != nil {
				last, lastRaw = *d, m.Raw
			}
			scan, scanned := session.ScanMessageData(m.Raw)
			if read := m.Entry != nil && original[&m.Raw[0]] && scanned; read != (d != nil) {
				t.Fatalf("message %d (%s): read %v handed over, want %v", len(got)-1, m.Raw, d != nil, read)
			}
			if d != nil {
				if diff := cmp.Diff(scan, *d); diff != "" {
					t.Fatalf("message %d (%s): handed over not as scanned (-scanned +handed):\n%s", len(got)-1, m.Raw, diff)
				}
			}
			return true
		})
		outlined := false
		for _, r := range stamps {
			outlined = outlined || r.Level == session.Outlined
		}
		if ok == outlined {
			t.Fatalf("Stream %v with outlines %v", ok, outlined)
		}
		if !ok {
			if len(got) > 0 {
				t.Fatalf("%d messages handed over before giving up", len(got))
			}
			return
		}
		if len(got) != len(want.Messages) {
			t.Fatalf("%d messages, want %d", len(got), len(want.Messages))
		}
		if lastRaw != nil && len(got) > 0 && &got[len(got)-1].Raw[0] == &lastRaw[0] {
			// The last message's read stays good after Stream returns.
			if scan, _ := session.ScanMessageData(lastRaw); !cmp.Equal(scan, last) {
				t.Fatalf("the last message's read changed after Stream returned: %s", cmp.Diff(scan, last))
			}
		}
		for i, m := range got {
			if w := want.Messages[i]; string(m.Raw) != string(w.Raw) || m.Role != w.Role || m.Entry != w.Entry {
				t.Fatalf("message %d: %s %s, want %s %s", i, m.Role, m.Raw, w.Role, w.Raw)
			}
		}
		if len(got) > 0 {
			n := rapid.IntRange(1, len(got)).Draw(t, "stop")
			var some []session.ContextMessage
			Stream(ctx, stamps, func(m session.ContextMessage, _ *session.MessageData) bool {
				some = append(some, m)
				return len(some) < n
			})
			if len(some) != n {
				t.Fatalf("%d messages handed over when the %dth stopped it", len(some), n)
			}
		}
	})
}

// TestClosingNamesItsOwnCall: the result closing an unanswered call names
// the tool of that call, as pi's transformMessages does, where a later reply
// reuses its id for another tool.
func TestClosingNamesItsOwnCall(t *testing.T) {
	l := session.Load([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"stopReason":"toolUse","timestamp":1}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"go on","timestamp":2}}
{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"stopReason":"toolUse","timestamp":3}}
{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":"ok","timestamp":4}}
`))
	res, err := Build(l.Context(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 5 {
		t.Fatalf("%d messages", len(res.Messages))
	}
	d, _ := data(res.Messages[1].Raw)
	if d.Role != session.RoleToolResult || d.ToolCallID != "c1" || d.ToolName != "read" {
		t.Errorf("closing result %s, want one of c1 naming read", res.Messages[1].Raw)
	}
}
