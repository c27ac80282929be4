package cli

import (
	"bytes"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/arborlog/arbor/internal/sessiongen"
	"github.com/arborlog/arbor/session"
)

// TestTranscriptOfALongContext: a context of several runs of messages, each
// described on its own core, prints every message once, in order, as it
// prints on one core.
func TestTranscriptOfALongContext(t *testing.T) {
	var data bytes.Buffer
	if err := sessiongen.Chain(&data, 3*transcriptRun+5, 24); err != nil {
		t.Fatal(err)
	}
	ctx := session.Load(data.Bytes()).Context()
	transcript := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var b strings.Builder
		printTranscript(&b, ctx, map[int]string{transcriptRun + 1: "marked"})
		return b.String()
	}
	one, four := transcript(1), transcript(4)
	if one != four {
		t.Fatalf("on four cores the transcript differs from one core's (%d and %d bytes)", len(four), len(one))
	}
	heads := regexp.MustCompile(`(?m)^── (\S+) \[([0-9a-f]+)\]( \(marked\))?$`).FindAllStringSubmatch(one, -1)
	if len(heads) != len(ctx.Messages) {
		t.Fatalf("%d messages printed of %d", len(heads), len(ctx.Messages))
	}
	for i, h := range heads {
		m := ctx.Messages[i]
		if h[1] != m.Role || h[2] != m.Entry.ID || (h[3] != "") != (i == transcriptRun+1) {
			t.Fatalf("message %d printed as %q, want %s [%s]", i, h[0], m.Role, m.Entry.ID)
		}
	}
}
