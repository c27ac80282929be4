package redact

import (
	"strings"
	"testing"
)

// BenchmarkRedact measures redaction of typical tool output: 1 MB of build
// and log lines with a few secrets in it.
func BenchmarkRedact(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("go: downloading example.invalid/module v1.2.3\n")
		sb.WriteString("ok  \tgithub.com/arborlog/arbor/session\t1.234s\n")
		sb.WriteString("    main.go:42: value = compute(x, y) // key points\n")
	}
	sb.WriteString("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
	text := sb.String()
	r, _ := New(nil)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.Redact(text)
	}
}
