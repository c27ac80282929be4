package compaction

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/arborlog/arbor/session"
)

// TestSpreadReadsEachOnce: spread calls f on parts that cover [0, n) in order,
// each index once, however n and the parts fall.
func TestSpreadReadsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 5, minPerPart - 1, minPerPart, 2*minPerPart + 3, 100_000} {
		for _, parts := range []int{1, 2, 3, 7} {
			seen := make([]atomic.Int32, n)
			ranges := make([][2]int, parts)
			spread(parts, n, func(part, lo, hi int) {
				ranges[part] = [2]int{lo, hi}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("n=%d parts=%d: index %d read %d times", n, parts, i, c)
				}
			}
			for p := 1; p < parts; p++ {
				if ranges[p][0] != ranges[p-1][1] {
					t.Fatalf("n=%d parts=%d: part %d starts at %d, part %d ends at %d", n, parts, p, ranges[p][0], p-1, ranges[p-1][1])
				}
			}
		}
	}
}

// TestFileOpsOfManyMessages: the file lists of messages read on several cores
// are those read one after another, files met in every part included.
func TestFileOpsOfManyMessages(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var msgs []session.ContextMessage
	for i := range 5 * minPerPart {
		tool := []string{"read", "write", "edit", "bash"}[i%4]
		msgs = append(msgs, session.ContextMessage{Role: session.RoleAssistant, Raw: fmt.Appendf(nil,
			`{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":%q,"arguments":{"path":"f%d.go"}}]}`, i, tool, i%(3*minPerPart))})
	}
	if partsOf(len(msgs)) < 2 {
		t.Fatalf("%d messages make %d part", len(msgs), partsOf(len(msgs)))
	}
	one := newFileOps()
	for _, m := range msgs {
		one.addMessage(m)
	}
	all := newFileOps()
	all.addMessages(msgs)
	r1, m1 := one.lists()
	r2, m2 := all.lists()
	if !slices.Equal(r1, r2) || !slices.Equal(m1, m2) {
		t.Fatalf("on %d parts: read %d, modified %d files; one after another: read %d, modified %d", partsOf(len(msgs)), len(r2), len(m2), len(r1), len(m1))
	}
	if len(r1) == 0 || len(m1) < minPerPart {
		t.Fatalf("read %d, modified %d files", len(r1), len(m1))
	}
}

// TestEstimateProjectedOnEveryCore: after a context edit every message is
// estimated again, on several cores, and the total is each message's estimate
// added up.
func TestEstimateProjectedOnEveryCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	b := newBuilder(t)
	var first *session.Entry
	for i := range minPerPart {
		u := b.user("question " + itoa(i) + " " + string(make([]byte, i%97)))
		if first == nil {
			first = u
		}
		call := b.toolCall("read", "f"+itoa(i)+".go")
		b.assistant("reply "+itoa(i*i), call)
		b.result(call, "contents of f"+itoa(i)+".go: "+string(make([]byte, i%53)))
	}
	if _, err := b.l.Cursor("").AppendContextEdit(first.ID, nil); err != nil {
		t.Fatal(err)
	}
	leaf := b.l.Cursor("").Leaf()
	path := b.l.PathTo(leaf.ID)
	proj := session.ProjectPathFrom(path, "")
	msgs := proj.Context().Messages
	if partsOf(len(msgs)) < 2 {
		t.Fatalf("%d messages make %d part", len(msgs), partsOf(len(msgs)))
	}
	want := 0
	for _, m := range msgs {
		want += EstimateTokens(m)
	}
	if got := EstimateProjected(proj, path); got.Tokens != want || got.LastUsageIndex != -1 {
		t.Fatalf("EstimateProjected = %+v, want %d tokens from every message", got, want)
	}
}
