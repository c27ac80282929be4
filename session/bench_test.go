package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/arborlog/arbor/internal/sessiongen"
)

// benchSession generates a session of about size bytes shaped like a coding
// agent's: user prompts, assistant turns with thinking, text and tool calls,
// and tool results that carry most of the bytes, on one long branch with an
// occasional side branch.
func benchSession(size int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over a lazy dog func main return error nil if for range package import json file line")
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(12) == 0 {
				b.WriteString(`\n`)
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"0194a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/me/project"}` + "\n")
	parent := "null"
	for i := 0; b.Len() < size; i++ {
		id := fmt.Sprintf("%08x", i)
		ts := fmt.Sprintf("2026-01-01T%02d:%02d:%02d.%03dZ", i/3600000%24, i/60000%60, i/1000%60, i%1000)
		var msg string
		switch i % 4 {
		case 0:
			msg = fmt.Sprintf(`{"role":"user","content":"%s","timestamp":%d}`, text(200), 1767225600000+i)
		case 1:
			msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":"%s","thinkingSignature":"sig"},{"type":"text","text":"%s"},{"type":"toolCall","id":"call_%d","name":"read","arguments":{"path":"/home/me/project/file%d.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4","usage":{"input":1200,"output":300,"cacheRead":800,"cacheWrite":0,"totalTokens":2300,"cost":{"input":0.0036,"output":0.0045,"cacheRead":0.00024,"cacheWrite":0,"total":0.00834}},"stopReason":"toolUse","timestamp":%d}`,
				text(300), text(400), i, i, 1767225600000+i)
		case 2:
			msg = fmt.Sprintf(`{"role":"toolResult","toolCallId":"call_%d","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":%d}`, i-1, text(4000), 1767225600000+i)
		default:
			msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"%s"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":%d}`, text(600), 1767225600000+i)
		}
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":%s}`+"\n", id, parent, ts, msg)
		if r.IntN(50) != 0 { // now and then the next entry branches off this one's parent
			parent = `"` + id + `"`
		}
	}
	return b.Bytes()
}

var benchData = sync.OnceValue(func() []byte { return benchSession(20 << 20) })

// BenchmarkLoad: parse, validate and index a 20 MB session (SetBytes: MB/s of file).
func BenchmarkLoad(b *testing.B) {
	data := benchData()
	if l := Load(data); !l.Report().Clean() {
		b.Fatalf("generated session is damaged: %+v", l.Report())
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Load(data)
	}
}

// BenchmarkContext: build the context of the leaf at the end of a long path
// (the 20 MB session's main branch, thousands of entries).
func BenchmarkContext(b *testing.B) {
	l := Load(benchData())
	ctx := l.Context()
	b.ReportAllocs()
	for b.Loop() {
		l.Context()
	}
	b.ReportMetric(float64(len(l.PathTo(""))), "path-entries")
	b.ReportMetric(float64(len(ctx.Messages)), "messages")
}

// BenchmarkTree: the whole tree of the 20 MB session, as `arbor tree` builds it.
func BenchmarkTree(b *testing.B) {
	l := Load(benchData())
	b.ReportAllocs()
	for b.Loop() {
		l.Tree()
	}
}

// BenchmarkContextJSON: the context as `arbor context --json` writes it.
func BenchmarkContextJSON(b *testing.B) {
	l := Load(benchData())
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := l.Context().WriteJSON(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkValidJSON compares the loader's validator with encoding/json.Valid
// on the lines of the 20 MB session.
func BenchmarkValidJSON(b *testing.B) {
	data := benchData()
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for _, bc := range []struct {
		name  string
		valid func([]byte) bool
	}{
		{"validJSON", validJSON},
		{"scanLine", func(b []byte) bool { return scanLine(b).ok }},
		{"encoding-json", json.Valid},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				for _, ln := range lines {
					if !bc.valid(ln) {
						b.Fatalf("line %q is not valid", ln[:min(len(ln), 80)])
					}
				}
			}
		})
	}
}

// BenchmarkParseLine: one assistant line as pi writes it, the same line with
// a member in front (any order reads the same way), and with an escaped name
// (the full decode).
func BenchmarkParseLine(b *testing.B) {
	data := benchData()
	lines := bytes.Split(data, []byte("\n"))
	fast := lines[2] // an assistant message
	reordered := bytes.Replace(fast, []byte(`{"type":"message",`), []byte(`{"x":0,"type":"message",`), 1)
	escaped := bytes.Replace(fast, []byte(`{"type":"message",`), []byte(`{"x":0,"type":"message",`), 1)
	for _, bc := range []struct {
		name string
		line []byte
	}{{"as-pi-writes", fast}, {"reordered", reordered}, {"full-decode", escaped}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			for b.Loop() {
				if _, e, err := parseLine(bc.line); err != nil || e.msgRole() != RoleAssistant {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteTreeJSON writes the tree of a 100,000-entry chain as 'arbor
// tree --json' does: one pass, no recursion, nothing held but the output buffer.
func BenchmarkWriteTreeJSON(b *testing.B) {
	var buf bytes.Buffer
	if err := sessiongen.Chain(&buf, 100000, 24); err != nil {
		b.Fatal(err)
	}
	roots := Load(buf.Bytes()).Tree()
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := WriteTreeJSON(&out, roots, true); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}

// BenchmarkScanMessageData reads an assistant message of pi's shape (thinking,
// two tool calls, usage) as the planner does, walked (ScanMessageData) and
// decoded (what it stands in for).
func BenchmarkScanMessageData(b *testing.B) {
	raw := []byte(`{"role":"assistant","content":[{"type":"thinking","thinking":"lookup it out it split line","thinkingSignature":"sig"},{"type":"toolCall","id":"toolu_1","name":"read","arguments":{"path":"internal/pkg1/file.go"}},{"type":"toolCall","id":"toolu_2","name":"grep","arguments":{"path":"func "}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":363,"cacheRead":3000,"cacheWrite":0,"totalTokens":3366,"cost":{"input":0.000009,"output":0.005445,"cacheRead":0.0009,"cacheWrite":0,"total":0.006354}},"stopReason":"toolUse","timestamp":1793610004000}`)
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := ScanMessageData(raw); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var d MessageData
			if err := unmarshal(raw, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
