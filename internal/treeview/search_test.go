package treeview

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
)

// joinedMatch is the search as the browser first wrote it: every word in
// the lower-cased id, label and texts of a row, joined by spaces.
func joinedMatch(v *View, r Row, q Query) bool {
	parts := []string{r.Node.Entry.ID, r.Node.Label}
	for _, s := range v.Says(r) {
		parts = append(parts, s.Text)
	}
	text := strings.ToLower(strings.Join(parts, " "))
	for _, w := range q {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// TestSearchCorpus: on every session of the pi corpus and the example, with
// every filter, Search finds the rows the joined texts hold the words of,
// and Narrow of a shorter search's rows finds the same.
func TestSearchCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(piCorpus, "sessions", "*.jsonl"))
	files = append(files, example)
	queries := []string{"e", "the", "READ", "read a", "(error)", "[bash", "ls]", "@", "• ", "é", "ﬀ", "K", "zzzz", "tool"}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		for _, filter := range Filters {
			v := New(l.Tree(), l, l.Leaf(), filter, 0)
			all := v.Rows(nil)
			for _, s := range queries {
				q := ParseQuery(s)
				var want []Row
				for _, r := range all {
					if joinedMatch(v, r, q) {
						want = append(want, r)
					}
				}
				got := v.Search(nil, q)
				if !slices.Equal(got, want) {
					t.Errorf("%s, %s: Search(%q) finds %d rows, the joined texts %d", filepath.Base(f), filter, s, len(got), len(want))
				}
				if len(q) > 0 {
					_, n := utf8.DecodeLastRuneInString(s)
					wider := ParseQuery(s[:len(s)-n])
					if !q.Narrows(wider) {
						t.Errorf("%q does not narrow %q", s, s[:len(s)-n])
						continue
					}
					if got := v.Narrow(v.Search(nil, wider), q); !slices.Equal(got, want) {
						t.Errorf("%s, %s: Narrow(%q) finds %d rows, Search %d", filepath.Base(f), filter, s, len(got), len(want))
					}
				}
			}
		}
	}
}

func TestNarrows(t *testing.T) {
	for _, c := range []struct {
		q, prev string
		want    bool
	}{
		{"scanner", "scan", true},
		{"scan ner", "scan", true},
		{"scan", "scanner", false},
		{"scan", "", true},
		{"a b", "b a", true},
		{"ab", "a b", true},
		{"scann", "scanx", false},
	} {
		if got := ParseQuery(c.q).Narrows(ParseQuery(c.prev)); got != c.want {
			t.Errorf("%q.Narrows(%q) = %v, want %v", c.q, c.prev, got, c.want)
		}
	}
}

// FuzzContainsLower: containsLower is strings.Contains of strings.ToLower,
// whatever the bytes (invalid UTF-8, runes whose lower case is ASCII).
func FuzzContainsLower(f *testing.F) {
	for _, c := range [][2]string{{"Scanner", "scan"}, {"\u212a", "k"}, {"a\xffb", "\ufffd"}, {"ÉCOLE", "éc"}, {"İ", "i̇"}, {"", ""}, {"abc", "abcd"}, {"a\u212aelvin", "kel"}, {"\u0130stanbul", "ist"}, {"SCANNER scanner", "nner"}, {"xSxsxs", "s"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, w string) {
		w = strings.ToLower(w)
		if got, want := containsLower(s, w), strings.Contains(strings.ToLower(s), w); got != want {
			t.Fatalf("containsLower(%q, %q) = %v, strings.Contains of ToLower %v", s, w, got, want)
		}
	})
}

// TestSearchAllocs: a search of a large tree makes nothing per row it looks
// at, only its result (the browser searched a million rows by keeping the
// lower-cased text of each, 350 MB more at the first keystroke).
func TestSearchAllocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := "null"
	const n = 20000
	for i := range n {
		id := fmt.Sprintf(`"%08d"`, i)
		b.WriteString(`{"type":"message","id":` + id + `,"parentId":` + parent + `,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Why Does The Parser Reject unit ` + itoa(i) + `?","timestamp":1}}` + "\n")
		parent = id
	}
	l := session.Load([]byte(b.String()))
	v := New(l.Tree(), l, l.Leaf(), FilterDefault, 0)
	q := ParseQuery("PARSER 1999")
	var found []Row
	allocs := testing.AllocsPerRun(3, func() { found = v.Search(nil, q) })
	if len(found) != 12 { // 1999, 11999 and 19990–19999
		t.Fatalf("found %d rows, want 12", len(found))
	}
	if allocs > 100 {
		t.Errorf("a search of %d rows makes %.0f allocations, want what its walk and result need (under 100)", n, allocs)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
