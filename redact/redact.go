// Package redact removes secrets from text before it is kept or sent: private
// keys, cloud and forge tokens, Authorization headers and the values of
// KEY=value lines that name a secret (or every value of a .env file).
//
// A secret is replaced by [REDACTED:<rule>], so a reader sees that something
// was there and what kind it was, and the count of replacements is returned so
// callers can record it. The same text always gives the same result.
//
// Use: New(nil) gives the built-in rules (pass patterns to add your own);
// Redact(text) returns the text without its secrets and how many there were;
// RedactFile treats every value of a .env file as secret (Example).
package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Rule is one kind of secret. When the pattern has a group named "keep", that
// part of the match (a header name, a variable name) stays in the text.
//
// Hints make redaction fast: when a rule has them, the pattern runs only on
// the lines whose ASCII-lowercased text contains one of them (such a rule
// never matches across lines).
type Rule struct {
	Name    string
	Pattern *regexp.Regexp
	Hints   []string
	// HintBefore, when set, requires the hint before the first of these
	// characters on the line (a variable's name before its = or :).
	HintBefore string
}

// Redactor applies its rules in order.
type Redactor struct {
	rules []Rule
}

// Default are the built-in rules.
var Default = []Rule{
	{"private-key", regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)`), nil, ""},
	{"authorization", regexp.MustCompile(`(?i)(?P<keep>\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:bearer|basic|token|digest)\s+)?)[^\s"',]+`), []string{"authorization"}, ""},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b`), []string{"akia", "asia", "agpa", "aida", "aroa"}, ""},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, ""},
	{"gitlab-token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), []string{"glpat-"}, ""},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), []string{"xox"}, ""},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`), []string{"aiza"}, ""},
	{"api-key", regexp.MustCompile(`\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}`), []string{"sk-"}, ""},
	{"secret-assignment", regexp.MustCompile(`(?im)(?P<keep>^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PWD|CREDENTIALS?)[A-Za-z0-9_]*[ \t]*[=:][ \t]*)["']?[^\s"'#]+["']?`),
		[]string{"key", "secret", "token", "passw", "pwd", "credential"}, "=:"},
}

// envLine matches every KEY=value line of a .env file.
var envLine = regexp.MustCompile(`(?m)(?P<keep>^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*[ \t]*=[ \t]*)(?:"[^"\n]*"|'[^'\n]*'|[^\s#]+)`)

// New returns a Redactor with the default rules and one rule per extra
// pattern (Go regular expressions, named custom-1, custom-2, …).
func New(extra []string) (*Redactor, error) {
	r := &Redactor{rules: append([]Rule(nil), Default...)}
	for i, p := range extra {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redact: pattern %d %q: %w", i+1, p, err)
		}
		r.rules = append(r.rules, Rule{Name: fmt.Sprintf("custom-%d", i+1), Pattern: re})
	}
	return r, nil
}

// Redact replaces every secret in s and returns the text and how many it replaced.
func (r *Redactor) Redact(s string) (string, int) {
	n := 0
	// Rules without hints (private keys, custom patterns) run on the whole text.
	for _, rule := range r.rules {
		if len(rule.Hints) == 0 {
			s = replaceAll(rule, s, &n)
		}
	}
	// The others run line by line, on the lines that hold one of their hints.
	lower := asciiLower(s)
	var b strings.Builder
	last := 0 // s[:last] is in b or unchanged
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start + 1
		}
		line, low := s[start:end], lower[start:end]
		out := line
		for _, rule := range r.rules {
			if len(rule.Hints) > 0 && rule.hinted(low) {
				if o := replaceAll(rule, out, &n); o != out {
					out, low = o, asciiLower(o)
				}
			}
		}
		if out != line {
			b.WriteString(s[last:start])
			b.WriteString(out)
			last = end
		}
		start = end
	}
	if last == 0 {
		return s, n
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// hinted reports whether a lowercased line holds one of the rule's hints
// (before HintBefore, when set).
func (rule Rule) hinted(low string) bool {
	if rule.HintBefore != "" {
		if i := strings.IndexAny(low, rule.HintBefore); i >= 0 {
			low = low[:i]
		}
	}
	return containsAny(low, rule.Hints)
}

// RedactFile is Redact for the content of a file: a .env file (.env, .env.local,
// prod.env) also loses the value of every KEY=value line.
func (r *Redactor) RedactFile(path, s string) (string, int) {
	out, n := r.Redact(s)
	if IsEnvFile(path) {
		out = replaceAll(Rule{Name: "env-value", Pattern: envLine}, out, &n)
	}
	return out, n
}

// IsEnvFile reports whether a file name is a dotenv file.
func IsEnvFile(path string) bool {
	b := filepath.Base(path)
	return b == ".env" || strings.HasPrefix(b, ".env.") || strings.HasSuffix(b, ".env")
}

// asciiLower lowers A–Z only, so offsets into the result are offsets into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func containsAny(s string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

func replaceAll(rule Rule, s string, n *int) string {
	keep := rule.Pattern.SubexpIndex("keep")
	return rule.Pattern.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, "[REDACTED:") {
			return m
		}
		*n++
		prefix := ""
		if keep > 0 {
			sub := rule.Pattern.FindStringSubmatch(m)
			if sub != nil {
				prefix = sub[keep]
			}
		}
		return prefix + "[REDACTED:" + rule.Name + "]"
	})
}

// JSON redacts the string values of a JSON document (a session line): each is
// decoded, redacted as text and encoded again, so the result is always valid
// JSON with its members in their order. Names are left alone. A document
// that holds no hint of any rule is returned as it is, without decoding; one
// that does not parse is redacted as text only if that keeps it valid.
func (r *Redactor) JSON(raw []byte) ([]byte, int) {
	if !r.mayMatch(raw) {
		return raw, 0
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	n := 0
	for {
		// In an object, tokens alternate name, value: an even count so far means a name comes.
		kind, length := dec.StackIndex(dec.StackDepth())
		isName := kind == '{' && length%2 == 0
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return raw, 0
		}
		if tok.Kind() == '"' && !isName {
			if s, c := r.Redact(tok.String()); c > 0 {
				tok, n = jsontext.String(s), n+c
			}
		}
		if err := enc.WriteToken(tok); err != nil {
			return raw, 0
		}
	}
	if n == 0 {
		return raw, 0
	}
	return bytes.TrimRight(out.Bytes(), "\n"), n
}

// mayMatch reports whether any rule could match in b: a rule with hints
// needs one of them; one without needs the literal its pattern starts with
// (-----BEGIN for private keys), or is always tried when it has none.
func (r *Redactor) mayMatch(b []byte) bool {
	low := asciiLower(string(b))
	for _, rule := range r.rules {
		if len(rule.Hints) > 0 {
			if containsAny(low, rule.Hints) {
				return true
			}
			continue
		}
		if prefix, _ := rule.Pattern.LiteralPrefix(); prefix == "" || bytes.Contains(b, []byte(prefix)) {
			return true
		}
	}
	return false
}
