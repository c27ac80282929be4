package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arborlog/arbor/redact/redacttest"
)

// TestCorpusPositives: every secret of the corpus is caught by the rule it
// names, alone on its text, inside a JSON string, and with all the others
// around it.
func TestCorpusPositives(t *testing.T) {
	cases, err := redacttest.Positives()
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, c := range cases {
		all.WriteString(c.Text)
		out, n := r.Redact(c.Text)
		if strings.Contains(out, c.Secret) || !strings.Contains(out, "[REDACTED:"+c.Rule+"]") || n == 0 {
			t.Errorf("positives.txt:%d (%s): redacted %d into %q", c.Line, c.Rule, n, out)
		}
		doc, _ := json.Marshal(map[string]string{"text": c.Text})
		if got, _ := r.JSON(doc); strings.Contains(string(got), c.Secret) {
			t.Errorf("positives.txt:%d (%s): kept in a JSON string: %s", c.Line, c.Rule, got)
		}
	}
	out, _ := r.Redact(all.String())
	for _, c := range cases {
		if strings.Contains(out, c.Secret) {
			t.Errorf("positives.txt:%d (%s): kept among the others", c.Line, c.Rule)
		}
	}
	if again, n := r.Redact(out); n != 0 || again != out {
		t.Errorf("redacting the redacted corpus again changed %d", n)
	}
}

// TestCorpusNegatives: look-alikes (hashes, UUIDs, base64 in code, names
// that hold a secret's word, URLs without credentials) come out unchanged,
// alone and all together, as text and as JSON.
func TestCorpusNegatives(t *testing.T) {
	lines, err := redacttest.Negatives()
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range lines {
		if out, n := r.Redact(line); out != line || n != 0 {
			t.Errorf("negatives.txt:%d changed (%d):\n  %q\n→ %q", i+1, n, line, out)
		}
	}
	all := strings.Join(lines, "")
	if out, n := r.Redact(all); out != all || n != 0 {
		t.Errorf("the negatives together lost %d", n)
	}
	doc, _ := json.Marshal(map[string]string{"text": all})
	if out, n := r.JSON(doc); string(out) != string(doc) || n != 0 {
		t.Errorf("the negatives in JSON lost %d", n)
	}
}
