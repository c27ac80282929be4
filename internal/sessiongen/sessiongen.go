// Package sessiongen writes large, deterministic pi (format v3) sessions for
// arbor's scale benchmarks: one chain of n entries shaped as a coding agent
// writes them (user prompts; assistant turns with thinking, text and tool calls
// and provider usage; tool results), and a session that carries one huge
// message; and a chain of short messages without usage (Plain), the shape of
// the issue that asked for these. The same arguments always give the same bytes.
//
// The command ./internal/sessiongen/gensession writes them to files; BENCHMARKS.md
// gives the figures measured on its output.
package sessiongen

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
)

// header is the first line of every generated session.
const header = `{"type":"session","version":3,"id":"0195f1c2-0000-7000-8000-000000000001","timestamp":"2026-11-02T09:00:00.000Z","cwd":"/home/dev/project"}` + "\n"

// words is the vocabulary of generated prose.
var words = strings.Fields("the scanner drops last line when file has no trailing newline find out why and fix it with a test " +
	"func main return err nil if for range package import json split index lookup prefix keys loader error message")

// Chain writes a session of one chain of entries message entries after the
// header. The shapes repeat every 8 entries: a user prompt, an assistant turn
// with thinking and two tool calls, the two tool results, an assistant turn
// with a tool call, its result, an assistant reply with text, and a short user
// follow-up. textBytes is the length of most texts (prompts, thinking, tool
// output); 24 gives about 390 bytes an entry on average.
func Chain(w io.Writer, entries, textBytes int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	g := gen{w: bw, textBytes: textBytes, rnd: 0x9e3779b97f4a7c15}
	bw.WriteString(header)
	for g.n < entries {
		g.next()
	}
	return bw.Flush()
}

// Plain writes a session of one chain of entries short messages, a user
// prompt and an assistant reply in turn, without usage: the shape of messages
// appended one line at a time (`arbor append`), about 170 bytes an entry.
func Plain(w io.Writer, entries int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	g := gen{w: bw, rnd: 0x9e3779b97f4a7c15}
	bw.WriteString(header)
	for g.n < entries {
		g.begin()
		if g.n%2 == 1 {
			bw.WriteString(`{"role":"user","content":"message ` + strconv.Itoa(g.n) + `","timestamp":`)
		} else {
			bw.WriteString(`{"role":"assistant","content":[{"type":"text","text":"reply ` + strconv.Itoa(g.n) + `"}],"timestamp":`)
		}
		g.end()
	}
	return bw.Flush()
}

// BigMessage writes a short session whose fourth entry is a user message of
// size bytes of text (lines of about 80 characters, an escaped newline between
// them): a pasted log, shown by every view that shows a message's text.
func BigMessage(w io.Writer, size int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	g := gen{w: bw, textBytes: 24, rnd: 0x9e3779b97f4a7c15}
	bw.WriteString(header)
	g.user("I will paste the build log next.")
	g.assistant(`[{"type":"text","text":"Go ahead."}]`, "stop")
	g.begin()
	bw.WriteString(`{"role":"user","content":[{"type":"text","text":"`)
	for written, col := 0, 0; written < size; {
		wd := words[g.rand(len(words))]
		bw.WriteString(wd)
		written += len(wd)
		col += len(wd)
		if col > 80 {
			bw.WriteString(`\n`)
			written += 2
			col = 0
		} else {
			bw.WriteByte(' ')
			written++
			col++
		}
	}
	bw.WriteString(`"}],"timestamp":`)
	g.end()
	g.assistant(`[{"type":"text","text":"The log is a long list of words."}]`, "stop")
	return bw.Flush()
}

type gen struct {
	w         *bufio.Writer
	n         int // entries written
	call      int // tool calls made
	textBytes int
	rnd       uint64
	pending   [][2]string // tool calls awaiting results: id, tool name
}

// rand returns a deterministic number in [0, n) (xorshift64).
func (g *gen) rand(n int) int {
	g.rnd ^= g.rnd << 13
	g.rnd ^= g.rnd >> 7
	g.rnd ^= g.rnd << 17
	return int(g.rnd % uint64(n))
}

// text writes about n bytes of prose, JSON-escaped (it needs no escaping).
func (g *gen) text(n int) {
	for written := 0; written < n; {
		wd := words[g.rand(len(words))]
		if written > 0 {
			g.w.WriteByte(' ')
			written++
		}
		g.w.WriteString(wd)
		written += len(wd)
	}
}

// id is the id of the n-th entry (from 1): 8 hex digits, as pi writes them.
func id(n int) string {
	s := strconv.FormatUint(uint64(uint32(n)*2654435761), 16)
	return strings.Repeat("0", 8-len(s)) + s
}

// millis is the n-th entry's time: two seconds apart from the header's.
func millis(n int) int64 { return 1793610000000 + int64(n)*2000 }

// begin writes the envelope of the next message entry up to "message":.
func (g *gen) begin() {
	g.n++
	g.w.WriteString(`{"type":"message","id":"`)
	g.w.WriteString(id(g.n))
	g.w.WriteString(`","parentId":`)
	if g.n == 1 {
		g.w.WriteString("null")
	} else {
		g.w.WriteString(`"` + id(g.n-1) + `"`)
	}
	g.w.WriteString(`,"timestamp":"`)
	g.w.WriteString(time.UnixMilli(millis(g.n)).UTC().Format("2006-01-02T15:04:05.000Z"))
	g.w.WriteString(`","message":`)
}

// end closes a message started by begin: its timestamp and the line.
func (g *gen) end() {
	g.w.WriteString(strconv.FormatInt(millis(g.n), 10))
	g.w.WriteString("}}\n")
}

// user writes a user message with plain-string content.
func (g *gen) user(text string) {
	g.begin()
	g.w.WriteString(`{"role":"user","content":[{"type":"text","text":"`)
	if text == "" {
		g.text(g.textBytes)
	} else {
		g.w.WriteString(text)
	}
	g.w.WriteString(`"}],"timestamp":`)
	g.end()
}

// assistant writes an assistant message with this content array and stop
// reason, and provider usage growing with the entry number.
func (g *gen) assistant(content, stop string) {
	g.begin()
	g.w.WriteString(`{"role":"assistant","content":`)
	g.w.WriteString(content)
	out := 40 + g.rand(400)
	in := 3000 + g.n/4
	g.w.WriteString(`,"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":`)
	g.w.WriteString(strconv.Itoa(out))
	g.w.WriteString(`,"cacheRead":`)
	g.w.WriteString(strconv.Itoa(in))
	g.w.WriteString(`,"cacheWrite":0,"totalTokens":`)
	g.w.WriteString(strconv.Itoa(in + out + 3))
	g.w.WriteString(`,"cost":{"input":0.000009,"output":`)
	g.w.WriteString(strconv.FormatFloat(float64(out)*0.000015, 'g', -1, 64))
	g.w.WriteString(`,"cacheRead":`)
	g.w.WriteString(strconv.FormatFloat(float64(in)*0.0000003, 'g', -1, 64))
	g.w.WriteString(`,"cacheWrite":0,"total":`)
	g.w.WriteString(strconv.FormatFloat(0.000009+float64(out)*0.000015+float64(in)*0.0000003, 'g', -1, 64))
	g.w.WriteString(`}},"stopReason":"`)
	g.w.WriteString(stop)
	g.w.WriteString(`","timestamp":`)
	g.end()
}

// toolCall is one tool call block; it returns the call's id.
func (g *gen) toolCall(b *strings.Builder, name, arg string) string {
	g.call++
	cid := "toolu_" + strconv.Itoa(g.call)
	b.WriteString(`{"type":"toolCall","id":"` + cid + `","name":"` + name + `","arguments":{"path":"` + arg + `"}}`)
	return cid
}

// toolResult writes the result of call cid.
func (g *gen) toolResult(cid, name string) {
	g.begin()
	g.w.WriteString(`{"role":"toolResult","toolCallId":"` + cid + `","toolName":"` + name + `","content":[{"type":"text","text":"`)
	g.text(g.textBytes * 2)
	g.w.WriteString(`"}],"isError":false,"timestamp":`)
	g.end()
}

// next writes the next of the 8 shapes.
func (g *gen) next() {
	thinking := func() string {
		var b strings.Builder
		for b.Len() < g.textBytes {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[g.rand(len(words))])
		}
		return b.String()
	}
	file := "internal/pkg" + strconv.Itoa(g.n%7) + "/file.go"
	steps := []func(){
		func() { g.user("") },
		func() {
			var b strings.Builder
			b.WriteString(`[{"type":"thinking","thinking":"` + thinking() + `","thinkingSignature":"sig"},`)
			c1 := g.toolCall(&b, "read", file)
			b.WriteByte(',')
			c2 := g.toolCall(&b, "grep", "func ")
			b.WriteByte(']')
			g.assistant(b.String(), "toolUse")
			g.pending = append(g.pending[:0], [2]string{c1, "read"}, [2]string{c2, "grep"})
		},
		func() { g.toolResult(g.pending[0][0], g.pending[0][1]) },
		func() { g.toolResult(g.pending[1][0], g.pending[1][1]) },
		func() {
			var b strings.Builder
			b.WriteByte('[')
			c := g.toolCall(&b, "edit", file)
			b.WriteByte(']')
			g.assistant(b.String(), "toolUse")
			g.pending = append(g.pending[:0], [2]string{c, "edit"})
		},
		func() { g.toolResult(g.pending[0][0], g.pending[0][1]) },
		func() { g.assistant(`[{"type":"text","text":"`+thinking()+`"}]`, "stop") },
		func() { g.user("Thanks, go on.") },
	}
	steps[g.n%8]()
}
