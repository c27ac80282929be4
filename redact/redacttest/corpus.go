// Package redacttest reads redact's corpus (redact/testdata/corpus): the
// secrets arbor must never keep or send, each with the rule expected to
// catch it, and the look-alikes that must come through unchanged. The
// redact package tests each rule on it; the agent's end-to-end tests push
// the same text through the tools into a session and a model request.
package redacttest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Case is one secret of the corpus.
type Case struct {
	Rule   string // the rule expected to catch it: the text redacted holds [REDACTED:<Rule>]
	Secret string // what must not survive redaction
	Text   string // the text that holds it (one or more lines, each ending in a newline)
	Line   int    // where the case starts in the file
}

// Dir is the corpus folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "corpus")
}

// Positives reads the secrets: a header line "== <rule> <secret>" and the
// text under it, up to the next header. Lines before the first header are
// comments.
func Positives() ([]Case, error) {
	path := filepath.Join(Dir(), "positives.txt")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []Case
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "== "); ok {
			rule, secret, ok := strings.Cut(rest, " ")
			if !ok || rule == "" || secret == "" {
				return nil, fmt.Errorf("%s:%d: a header is \"== <rule> <secret>\"", path, n)
			}
			cases = append(cases, Case{Rule: rule, Secret: secret, Line: n})
			continue
		}
		if len(cases) > 0 {
			cases[len(cases)-1].Text += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, c := range cases {
		if !strings.Contains(c.Text, c.Secret) {
			return nil, fmt.Errorf("%s:%d: the text does not hold the secret %q", path, c.Line, c.Secret)
		}
	}
	return cases, nil
}

// Negatives reads the look-alikes, one a line, each ending in a newline.
func Negatives() ([]string, error) {
	data, err := os.ReadFile(filepath.Join(Dir(), "negatives.txt"))
	if err != nil {
		return nil, err
	}
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}
