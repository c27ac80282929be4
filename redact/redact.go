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

// patterns are the secret shapes. A pattern with a capture group keeps what
// precedes the group (the key name of an assignment) and masks the group.
var patterns = []*regexp.Regexp{
	// PEM private keys, in raw text or with JSON's \n escapes.
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[^"]*?-----END [A-Z ]*PRIVATE KEY-----`),
	// Anthropic, OpenAI and other sk- keys.
	regexp.MustCompile(`\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{20,}`),
	// GitHub tokens.
	regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})`),
	// AWS access key ids.
	regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
	// Slack tokens.
	regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`),
	// Google API keys.
	regexp.MustCompile(`\bAIza[A-Za-z0-9_\-]{35}`),
	// Stripe keys.
	regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`),
	// JSON web tokens.
	regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`),
	// Bearer tokens in headers.
	regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)`),
	// Assignments: password=..., api_key: ..., SECRET_TOKEN=...
	regexp.MustCompile(`(?i)\b[a-z0-9_\-]*(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key)[a-z0-9_\-]*\s*[:=]\s*'?([^\s"'\\,;]{8,})`),
}

// Bytes returns b with every secret replaced by Mask. It returns b itself
// when nothing matched.
func Bytes(b []byte) []byte {
	for _, re := range patterns {
		if re.NumSubexp() == 0 {
			if re.Match(b) {
				b = re.ReplaceAllLiteral(b, []byte(Mask))
			}
			continue
		}
		b = maskGroup(re, b)
	}
	return b
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
