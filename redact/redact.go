// Package redact hides secrets in text: API keys and tokens of the common
// providers, private key blocks, and the values of password, secret and token
// assignments. It is shared by everything that shows or ships a session's
// content to someone else (export, and the agent's tool output).
//
// Patterns never match a double quote or a backslash, except inside a private
// key block, which starts and ends on letters and dashes. So redacting the
// bytes of a valid JSON document keeps it valid: a match lies inside one JSON
// string and is replaced by text that needs no escaping.
package redact

import (
	"bytes"
	"regexp"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

// A pattern is one secret shape. Its expression runs only on text holding
// one of its triggers (lower case when fold is set: compared with the text
// lower-cased), which keeps redaction of large sessions fast. An expression
// with a capture group masks only the group (the value of an assignment).
type pattern struct {
	re       *regexp.Regexp
	triggers []string
	fold     bool
}

var patterns = []pattern{
	// PEM private keys, in raw text or with JSON's \n escapes.
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^"]*?-----END [A-Z ]*PRIVATE KEY-----`), []string{"PRIVATE KEY-----"}, false},
	// Anthropic, OpenAI and other sk- keys.
	{regexp.MustCompile(`\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{20,}`), []string{"sk-"}, false},
	// GitHub tokens.
	{regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, false},
	// AWS access key ids.
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`), []string{"AKIA", "ASIA"}, false},
	// Slack tokens.
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), []string{"xox"}, false},
	// Google API keys.
	{regexp.MustCompile(`\bAIza[A-Za-z0-9_\-]{35}`), []string{"AIza"}, false},
	// Stripe keys.
	{regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), []string{"k_live_", "k_test_"}, false},
	// JSON web tokens.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), []string{"eyJ"}, false},
	// Bearer tokens in headers.
	{regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)`), []string{"bearer"}, true},
	// Assignments: password=..., api_key: ..., SECRET_TOKEN=...
	{regexp.MustCompile(`(?i)\b[a-z0-9_\-]*(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key)[a-z0-9_\-]*\s*[:=]\s*'?([^\s"'\\,;]{8,})`),
		[]string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key"}, true},
}

// Bytes returns b with every secret replaced by Mask. It returns b itself
// when nothing matched.
func Bytes(b []byte) []byte {
	var lower []byte
	for _, p := range patterns {
		text := b
		if p.fold {
			if lower == nil {
				lower = bytes.ToLower(b)
			}
			text = lower
		}
		if !containsAny(text, p.triggers) {
			continue
		}
		var out []byte
		if p.re.NumSubexp() == 0 {
			out = p.re.ReplaceAllLiteral(b, []byte(Mask))
		} else {
			out = maskGroup(p.re, b)
		}
		if !bytes.Equal(out, b) {
			b, lower = out, nil
		}
	}
	return b
}

func containsAny(b []byte, subs []string) bool {
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// String returns s with every secret replaced by Mask.
func String(s string) string { return string(Bytes([]byte(s))) }

// maskGroup replaces the first capture group of every match of re.
func maskGroup(re *regexp.Regexp, b []byte) []byte {
	locs := re.FindAllSubmatchIndex(b, -1)
	if locs == nil {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b))
	last := 0
	for _, m := range locs {
		if m[2] < 0 {
			continue
		}
		out.Write(b[last:m[2]])
		out.WriteString(Mask)
		last = m[3]
	}
	out.Write(b[last:])
	return out.Bytes()
}
