package importers_test

import (
	"fmt"
	"time"

	"github.com/arborlog/arbor/importers"
)

// Read turns another agent's session (here two lines of a Claude Code
// transcript) into a pi session: Log gives it to the rest of arbor, Bytes
// writes it as a file pi opens.
func ExampleRead() {
	src := []byte(`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/work/app","timestamp":"2026-05-01T09:00:00.000Z","message":{"role":"user","content":"Why does the build fail?"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","cwd":"/work/app","timestamp":"2026-05-01T09:01:00.000Z","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"A missing import."}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":5}}}
`)
	s, err := importers.Read(importers.Claude, importers.Input{Path: "/home/me/.claude/projects/app/s1.jsonl", Data: src, ModTime: time.Now()})
	if err != nil {
		panic(err)
	}
	l := s.Log()
	fmt.Println("cwd:", l.Header().Cwd, "prompts:", s.Stats.Prompts)
	for _, m := range l.Context().Messages {
		d, _ := m.Data()
		fmt.Printf("%s: %s\n", m.Role, d.Content.Text(" "))
	}
	// Output:
	// cwd: /work/app prompts: 1
	// user: Why does the build fail?
	// assistant: A missing import.
}
