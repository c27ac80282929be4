package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Rule is one kind of secret. The part of a match replaced is the group
// named "secret" when the pattern has one, else what follows the group named
// "keep" (a header name, a variable name), else the whole match.
//
// Hints make redaction fast: when a rule has them, the pattern runs only on
// the lines whose ASCII-lowercased text contains one of them (such a rule
// never matches across lines); a rule without them runs on the whole text.
type Rule struct {
	Name    string
	Pattern *regexp.Regexp
	Hints   []string

	around func(before, after string) bool
	spare  func(name, value string) bool
	// The pattern's groups: secret, keep and name (0 when absent).
	secret, keep, name int
}

func newRule(name string, re *regexp.Regexp, hints []string) Rule {
	r := Rule{Name: name, Pattern: re, Hints: hints}
	r.secret, r.keep, r.name = max(re.SubexpIndex("secret"), 0), max(re.SubexpIndex("keep"), 0), max(re.SubexpIndex("name"), 0)
	return r
}

// ruleSet is a compiled rule table with the automaton that finds its hints.
type ruleSet struct {
	rules   []Rule
	hinted  *hintMatcher
	literal []string // per rule without hints: the literal its pattern starts with ("" for none)
}

// defaults compiles the built-in table once, on first use: a command that
// redacts nothing pays nothing for it (its regular expressions take
// milliseconds to compile).
var defaults = sync.OnceValue(func() *ruleSet {
	specs := defaultSpecs()
	rules := make([]Rule, len(specs))
	for i, s := range specs {
		rules[i] = newRule(s.name, regexp.MustCompile(s.pattern), s.hints)
		rules[i].around, rules[i].spare = s.around, s.spare
	}
	return newRuleSet(rules)
})

// compiled is set by the first compilation of the built-in rules (tests
// check that constructing a Redactor compiles nothing).
var compiled bool

func newRuleSet(rules []Rule) *ruleSet {
	compiled = true
	set := &ruleSet{rules: rules, literal: make([]string, len(rules))}
	var hints []hint
	for i, r := range rules {
		if i >= maxHinted && len(r.Hints) > 0 {
			panic("redact: more than 128 rules with hints")
		}
		for _, h := range r.Hints {
			hints = append(hints, hint{text: strings.ToLower(h), rule: i, around: r.around})
		}
		set.literal[i], _ = r.Pattern.LiteralPrefix()
	}
	set.hinted = newHintMatcher(hints)
	return set
}

// Default returns the built-in rules, in the order they run.
func Default() []Rule {
	return append([]Rule(nil), defaults().rules...)
}

// Redactor applies its rules in order: the built-in ones, then the user's.
type Redactor struct {
	extra []Rule
	once  sync.Once
	set   *ruleSet
}

// New returns a Redactor with the default rules and one rule per extra
// pattern (Go regular expressions, named custom-1, custom-2, …). The
// built-in rules are compiled when the first text is redacted.
func New(extra []string) (*Redactor, error) {
	r := &Redactor{}
	for i, p := range extra {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redact: pattern %d %q: %w", i+1, p, err)
		}
		r.extra = append(r.extra, newRule(fmt.Sprintf("custom-%d", i+1), re, nil))
	}
	return r, nil
}

func (r *Redactor) rules() *ruleSet {
	r.once.Do(func() {
		if len(r.extra) == 0 {
			r.set = defaults()
			return
		}
		d := defaults()
		r.set = &ruleSet{rules: append(append([]Rule(nil), d.rules...), r.extra...), hinted: d.hinted, literal: append([]string(nil), d.literal...)}
		for _, x := range r.extra {
			p, _ := x.Pattern.LiteralPrefix()
			r.set.literal = append(r.set.literal, p)
		}
	})
	return r.set
}

// Redact replaces every secret in s and returns the text and how many it replaced.
func (r *Redactor) Redact(s string) (string, int) {
	set, n := r.rules(), 0
	// Rules without hints (private keys, custom patterns) run on the whole text.
	for i := range set.rules {
		if rule := &set.rules[i]; len(rule.Hints) == 0 && strings.Contains(s, set.literal[i]) {
			s = rule.replace(s, &n)
		}
	}
	// The others run on the lines that hold one of their hints.
	var buf [8]lineHit
	hits := set.hinted.lines(s, buf[:0])
	if len(hits) == 0 {
		return s, n
	}
	var b strings.Builder
	last := 0 // s[:last] is in b
	for _, h := range hits {
		line := s[h.start:h.end]
		out := line
		for i := range set.rules {
			if h.rules.has(i) {
				out = set.rules[i].replace(out, &n)
			}
		}
		if out != line {
			b.WriteString(s[last:h.start])
			b.WriteString(out)
			last = h.end
		}
	}
	if last == 0 {
		return s, n
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// replace redacts every match of the rule in s, counting them in n.
func (rule *Rule) replace(s string, n *int) string {
	locs := rule.Pattern.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		start, end := loc[0], loc[1]
		if g := rule.secret; g > 0 && loc[2*g] >= 0 {
			start, end = loc[2*g], loc[2*g+1]
		} else if k := rule.keep; k > 0 && loc[2*k] >= 0 {
			start = loc[2*k+1]
		}
		value := s[start:end]
		if value == "" || strings.Contains(value, "[REDACTED:") {
			continue
		}
		if rule.spare != nil {
			name := ""
			if g := rule.name; g > 0 && loc[2*g] >= 0 {
				name = s[loc[2*g]:loc[2*g+1]]
			}
			if rule.spare(name, value) {
				continue
			}
		}
		*n++
		b.WriteString(s[last:start])
		b.WriteString("[REDACTED:")
		b.WriteString(rule.Name)
		b.WriteString("]")
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// RedactFile is Redact for the content of a file: a .env file (.env, .env.local,
// prod.env) also loses the value of every KEY=value line.
func (r *Redactor) RedactFile(path, s string) (string, int) {
	n := 0
	if IsEnvFile(path) {
		// First, so a value loses all of itself, not what the other rules left.
		s = envRule().replace(s, &n)
	}
	out, m := r.Redact(s)
	return out, n + m
}

// envRule matches every KEY=value line of a .env file.
var envRule = sync.OnceValue(func() *Rule {
	r := newRule("env-value", regexp.MustCompile(`(?m)(?P<keep>^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.]*[ \t]*=[ \t]*)(?:"[^"\n]*"|'[^'\n]*'|[^\s#]+)`), nil)
	return &r
})

// IsEnvFile reports whether a file name is a dotenv file.
func IsEnvFile(path string) bool {
	b := filepath.Base(path)
	return b == ".env" || strings.HasPrefix(b, ".env.") || strings.HasSuffix(b, ".env")
}

// JSON redacts the string values of a JSON document (a session line): each is
// decoded, redacted as text and encoded again, so the result is always valid
// JSON with its members in their order. Names are left alone. A document
// that holds no hint of any rule is returned as it is, without decoding; one
// that does not parse is returned as it is.
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

// mayMatch reports whether any rule could match in b: a hint of a rule with
// hints, or the literal a rule without them starts with (-----BEGIN for
// private keys; a rule without one is always tried). A \u escape can spell
// any hint, so a document with one is always decoded.
func (r *Redactor) mayMatch(b []byte) bool {
	set := r.rules()
	for i, rule := range set.rules {
		if len(rule.Hints) == 0 && (set.literal[i] == "" || bytes.Contains(b, []byte(set.literal[i]))) {
			return true
		}
	}
	return bytes.Contains(b, []byte(`\u`)) || set.hinted.any(string(b))
}
