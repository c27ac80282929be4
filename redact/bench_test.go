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

// BenchmarkRedactCode measures redaction of source code, where the words
// secrets are named by (key, token, password, auth) are everywhere and
// almost never name one.
func BenchmarkRedactCode(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("func (l *Lexer) Next() Token {\n")
		sb.WriteString("\ttoken := l.scan() // the next token, keyed by position\n")
		sb.WriteString("\tif cfg.Password == \"\" || key == KEY_UP {\n")
		sb.WriteString("\t\tm[key] = token.Value // pass it on to auth\n")
		sb.WriteString("\tapiKey := os.Getenv(\"API_KEY\")\n")
		sb.WriteString("\t}\n")
	}
	text := sb.String()
	r, _ := New(nil)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.Redact(text)
	}
}
