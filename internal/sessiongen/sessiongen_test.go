package sessiongen

import (
	"bytes"
	"testing"

	"github.com/arborlog/arbor/session"
)

// TestGenerated: each generator's session loads clean, with the entries asked
// for on one chain, and the same arguments give the same bytes.
func TestGenerated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		write   func(*bytes.Buffer) error
		entries int
	}{
		{"chain", func(b *bytes.Buffer) error { return Chain(b, 1000, 24) }, 1000},
		{"plain", func(b *bytes.Buffer) error { return Plain(b, 1001) }, 1001},
		{"big", func(b *bytes.Buffer) error { return BigMessage(b, 1<<20) }, 4},
	} {
		var a, b bytes.Buffer
		if err := tc.write(&a); err != nil {
			t.Fatal(err)
		}
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two runs differ", tc.name)
		}
		l := session.Load(a.Bytes())
		if !l.Report().Clean() {
			t.Errorf("%s: damaged: %+v", tc.name, l.Report())
		}
		if l.Len() != tc.entries || len(l.PathTo(l.Leaf().ID)) != tc.entries {
			t.Errorf("%s: %d entries, %d on the leaf's path, want %d on one chain", tc.name, l.Len(), len(l.PathTo(l.Leaf().ID)), tc.entries)
		}
		if ctx := l.Context(); len(ctx.Messages) != tc.entries {
			t.Errorf("%s: %d messages in the context, want %d", tc.name, len(ctx.Messages), tc.entries)
		}
	}
}
