package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSearchAsYouType: `arbor search` takes the last word as a prefix, so a
// word typed in part finds the sessions it begins; $ and quotes ask for whole
// words, and phrases keep their order.
func TestSearchAsYouType(t *testing.T) {
	catalogHome(t)
	dir := t.TempDir()
	texts := map[string]string{
		"greet": "Please make the greeting change in the banner",
		"notes": "Open the notes chat and summarise it",
		"note":  "one note about the deploy",
	}
	n := 0
	for name, text := range texts {
		n++
		id := fmt.Sprintf("0195eeee-0000-7000-8000-%012d", n)
		lines := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}
{"type":"message","id":"m1","parentId":null,"timestamp":"2026-03-01T12:00:01.000Z","message":{"role":"user","content":%q,"timestamp":1772366401000}}
`, id, text)
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(lines), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query []string
		want  []string // the files hit, by name
	}{
		{[]string{"g"}, []string{"greet"}},
		{[]string{"greet"}, []string{"greet"}},
		{[]string{"greeting"}, []string{"greet"}},
		{[]string{"greet$"}, nil},
		{[]string{`"greet"`}, nil},
		{[]string{"note"}, []string{"note", "notes"}},
		{[]string{"note$"}, []string{"note"}},
		{[]string{"notes", "ch"}, []string{"notes"}},
		{[]string{"the", "b"}, []string{"greet"}}, // banner
		{[]string{"the", "n"}, []string{"note", "notes"}},
		{[]string{`"greeting change"`}, []string{"greet"}},
		{[]string{`"change greeting"`}, nil},
		{[]string{`"greeting ch"`}, nil},
		{[]string{"greeting", "ch"}, []string{"greet"}},
		{[]string{"re:note\\b"}, []string{"note"}},
	}
	for _, tt := range tests {
		args := append([]string{"search", "--session-dir", dir, "--json"}, tt.query...)
		r := runArbor(t, "", args...)
		if r.code != 0 {
			t.Fatalf("search %q: exit %d: %s", tt.query, r.code, r.err)
		}
		var hits []struct{ Path string }
		if err := json.Unmarshal([]byte(r.out), &hits); err != nil {
			t.Fatalf("search %q: %v in %s", tt.query, err, r.out)
		}
		var got []string
		for _, h := range hits {
			got = append(got, filepath.Base(h.Path[:len(h.Path)-len(".jsonl")]))
		}
		slices.Sort(got)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("search %q (-want +got):\n%s", tt.query, diff)
		}
	}
}
