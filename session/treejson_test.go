package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeNodeRecursive is the plain recursive form of TreeNode.WriteJSON, which
// WriteTreeJSON must match byte for byte.
func writeNodeRecursive(b *bytes.Buffer, t *TreeNode) {
	b.WriteString(`{"entry":`)
	b.Write(t.Entry.raw)
	b.WriteString(`,"children":[`)
	for i, c := range t.Children {
		if i > 0 {
			b.WriteByte(',')
		}
		writeNodeRecursive(b, c)
	}
	b.WriteByte(']')
	if t.Label != "" {
		b.WriteString(`,"label":`)
		b.Write(mustValue(t.Label))
		if t.LabelTimestamp != "" {
			b.WriteString(`,"labelTimestamp":`)
			b.Write(mustValue(t.LabelTimestamp))
		}
	}
	b.WriteByte('}')
}

// TestWriteTreeJSON: the iterative writer gives what the recursive one gives on
// pi's branchy, labelled sessions, and writes a chain of 200,000 entries
// without recursing (a recursive writer would need a stack that deep).
func TestWriteTreeJSON(t *testing.T) {
	files, _ := filepath.Glob("../testdata/pi/sessions/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no sessions in ../testdata/pi/sessions")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		roots := Load(data).Tree()
		var want, got bytes.Buffer
		want.WriteByte('[')
		for i, r := range roots {
			if i > 0 {
				want.WriteByte(',')
			}
			writeNodeRecursive(&want, r)
		}
		want.WriteByte(']')
		if err := WriteTreeJSON(&got, roots, true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: WriteTreeJSON differs from the recursive form", f)
		}
		if len(roots) > 0 {
			got.Reset()
			want.Reset()
			roots[0].WriteJSON(&got)
			writeNodeRecursive(&want, roots[0])
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s: TreeNode.WriteJSON differs from the recursive form", f)
			}
		}
	}
	var chain bytes.Buffer
	chain.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n")
	const n = 200000
	for i := range n {
		parent := "null"
		if i > 0 {
			parent = fmt.Sprintf(`"%08x"`, i-1)
		}
		fmt.Fprintf(&chain, `{"type":"message","id":"%08x","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"m"}}`+"\n", i, parent)
	}
	var out bytes.Buffer
	if err := WriteTreeJSON(&out, Load(chain.Bytes()).Tree(), true); err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(out.Bytes(), []byte(`"children":[`)); got != n {
		t.Errorf("%d nodes written, want %d", got, n)
	}
	// Each node closes its children and itself; the array closes last.
	if !bytes.HasSuffix(out.Bytes(), []byte(strings.Repeat("]}", n)+"]")) {
		t.Error("the chain's nodes are not closed in order")
	}
}
