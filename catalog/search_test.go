package catalog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// bruteEntry is one entry's text as an independent reader sees it.
type bruteEntry struct {
	path, id, text string
}

// bruteTexts decodes every session in dir with encoding/json, without the
// catalog's scanner, and returns the searchable text of each entry.
func bruteTexts(t *testing.T, dir string) []bruteEntry {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var out []bruteEntry
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var e struct {
				Type    string `json:"type"`
				ID      string `json:"id"`
				Message struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "message" {
				continue
			}
			var parts []string
			var s string
			var blocks []struct {
				Type      string         `json:"type"`
				Text      string         `json:"text"`
				Thinking  string         `json:"thinking"`
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			}
			if json.Unmarshal(e.Message.Content, &s) == nil {
				parts = append(parts, s)
			} else if json.Unmarshal(e.Message.Content, &blocks) == nil {
				for _, b := range blocks {
					switch b.Type {
					case "text":
						parts = append(parts, b.Text)
					case "thinking":
						parts = append(parts, b.Thinking)
					case "toolCall":
						parts = append(parts, b.Name)
						for _, v := range b.Arguments {
							if s, ok := v.(string); ok {
								parts = append(parts, s)
							}
						}
					}
				}
			}
			out = append(out, bruteEntry{f, e.ID, strings.Join(parts, "\n")})
		}
		fh.Close()
	}
	return out
}

// bruteMatch is the documented meaning of a query, written out naively:
// lower-cased runs of letters and digits, each term a consecutive run.
func bruteMatch(words []string, phrase []bool, text string) bool {
	toks := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Co, r)
	})
	for i, w := range words {
		// A bare last word is a prefix too, unless it ends in $.
		prefix := !phrase[i] && (strings.HasSuffix(w, "*") || i == len(words)-1 && !strings.HasSuffix(w, "$"))
		want := strings.FieldsFunc(strings.ToLower(w), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Co, r)
		})
		if len(want) == 0 {
			continue
		}
		found := false
		for k := 0; k+len(want) <= len(toks) && !found; k++ {
			ok := true
			for j, wt := range want {
				if j == len(want)-1 && prefix {
					ok = ok && strings.HasPrefix(toks[k+j], wt)
				} else {
					ok = ok && toks[k+j] == wt
				}
			}
			found = ok
		}
		if !found {
			return false
		}
	}
	return true
}

type hitKey struct{ path, id string }

// TestSearchAgreesWithBruteForce runs random queries of every form over random
// corpora and compares the set of hits with a scan that decodes every line.
func TestSearchAgreesWithBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		dir := t.TempDir()
		randomCorpus(t, dir, seed, 12)
		texts := bruteTexts(t, dir)
		c := Open(t.TempDir())
		r := rand.New(rand.NewPCG(seed, 99))
		for qi := range 60 {
			var words []string
			var phrase []bool
			var raw []string
			switch form := qi % 4; form {
			case 0, 1: // words
				for range 1 + r.IntN(2) {
					w := vocabulary[r.IntN(len(vocabulary))]
					switch {
					case r.IntN(5) == 0 && len(w) > 3:
						w = w[:2] + "*"
					case r.IntN(4) == 0:
						w += "$"
					case r.IntN(4) == 0:
						w = w[:1+r.IntN(len(w))] // a word being typed
					}
					words, phrase, raw = append(words, w), append(phrase, false), append(raw, w)
				}
			case 2: // a phrase
				p := vocabulary[r.IntN(len(vocabulary))] + " " + vocabulary[r.IntN(len(vocabulary))]
				words, phrase, raw = append(words, p), append(phrase, true), append(raw, `"`+p+`"`)
			case 3: // a regular expression
				w := vocabulary[r.IntN(len(vocabulary))]
				rs := []rune(w)
				pat := regexp.QuoteMeta(string(rs[:max(1, len(rs)/2)])) + ".?"
				q, err := ParseQuery("re:" + pat)
				if err != nil {
					t.Fatal(err)
				}
				re := regexp.MustCompile("(?i)" + pat)
				var want []hitKey
				for _, e := range texts {
					if re.MatchString(e.text) {
						want = append(want, hitKey{e.path, e.id})
					}
				}
				checkHits(t, c, dir, q, "re:"+pat, want)
				continue
			}
			q, err := ParseQuery(strings.Join(raw, " "))
			if err != nil {
				continue // only punctuation: nothing to search for
			}
			var want []hitKey
			for _, e := range texts {
				if bruteMatch(words, phrase, e.text) {
					want = append(want, hitKey{e.path, e.id})
				}
			}
			checkHits(t, c, dir, q, strings.Join(raw, " "), want)
		}
		c.Close()
	}
}

func checkHits(t *testing.T, c *Catalog, dir string, q Query, query string, want []hitKey) {
	t.Helper()
	hits, err := c.Search(Scope{Dir: dir}, q, SearchOptions{})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var got []hitKey
	for _, h := range hits {
		got = append(got, hitKey{h.Path, h.EntryID})
		if len(h.Marks) == 0 {
			t.Errorf("%s: hit %s/%s has no highlighted match in %q", query, h.SessionID, h.EntryID, h.Snippet)
			continue
		}
		for _, m := range h.Marks {
			if _, ok := q.Match(h.Snippet[m[0]:m[1]]); q.Regex != nil && !ok {
				t.Errorf("%s: highlighted %q of snippet %q does not match", query, h.Snippet[m[0]:m[1]], h.Snippet)
			}
		}
		if !snippetShowsATerm(q, h.Snippet) {
			t.Errorf("%s: snippet %q does not show the match", query, h.Snippet)
		}
	}
	key := func(a, b hitKey) int { return strings.Compare(a.path+a.id, b.path+b.id) }
	slices.SortFunc(got, key)
	slices.SortFunc(want, key)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(hitKey{})); diff != "" {
		t.Errorf("query %s: index and brute force disagree (-brute +index):\n%s", query, diff)
	}
}

// snippetShowsATerm reports whether the snippet itself matches the regular
// expression or at least one of the terms.
func snippetShowsATerm(q Query, s string) bool {
	if q.Regex != nil {
		return q.Regex.MatchString(s)
	}
	for _, term := range q.Terms {
		if _, ok := (Query{Terms: []Term{term}}).Match(s); ok {
			return true
		}
	}
	return false
}

func TestQueryForms(t *testing.T) {
	dir := t.TempDir()
	w := newSession(t, dir, "0195cccc-0000-7000-8000-000000000001", "/p")
	u1 := w.user("The flock call deadlocks when the torn write is replayed")
	a1 := w.assistant("Look at main.go: sync.Mutex is copied.", "maybe a deadlock in Index building", map[string]any{"command": "go vet ./..."})
	r1 := w.toolResult("main.go:12: copylocks: call of foo copies lock value")
	u2 := w.user("write torn? no: torn write")
	c := Open(t.TempDir())
	defer c.Close()
	tests := []struct {
		query string
		want  []string
	}{
		{"flock deadlocks", []string{u1}},
		{"FLOCK", []string{u1}},
		{"deadlock", []string{u1, a1}},   // the last word is a prefix
		{"deadlock$", []string{a1}},      // unless it ends in $
		{`"deadlock"`, []string{a1}},     // or is quoted
		{"deadlock* call", []string{u1}}, // an earlier word with *
		{"deadlock call", nil},           // an earlier word is whole
		{"d", []string{u1, a1}},          // one letter
		{"D", []string{u1, a1}},
		{"c", []string{u1, a1, r1}},
		{"torn wr", []string{u1, u2}},
		{`"torn write"`, []string{u1, u2}},
		{`"torn wr"`, nil},
		{`"write torn"`, []string{u2}},
		{"main.go", []string{a1, r1}},
		{"main.g", []string{a1, r1}},
		{"main.go$", []string{a1, r1}},
		{"vet", []string{a1}},
		{"copylocks", []string{r1}},
		{"copylock$", nil},
		{`"torn write" replayed`, []string{u1}},
		{`"torn write" repl`, []string{u1}},
		{"re:sync\\.mutex", []string{a1}},
		{"re:^write", []string{u2}},
		{`"torn write`, []string{u1, u2}},
		{"nothing-like-this", nil},
	}
	for _, tt := range tests {
		q, err := ParseQuery(tt.query)
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		hits, err := c.Search(Scope{Dir: dir}, q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.EntryID)
			if h.SessionID != "0195cccc-0000-7000-8000-000000000001" || h.Timestamp == "" || h.Role == "" {
				t.Errorf("%s: incomplete hit %+v", tt.query, h)
			}
		}
		slices.Sort(got)
		slices.Sort(tt.want)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.query, diff)
		}
	}
	for _, bad := range []string{"", "   ", "&& ||", "re:", "re:("} {
		if _, err := ParseQuery(bad); err == nil {
			t.Errorf("ParseQuery(%q) accepted", bad)
		}
	}
}

func TestSnippetLongText(t *testing.T) {
	text := strings.Repeat("filler words here ", 200) + "the NEEDLE is here " + strings.Repeat("more filler ", 200)
	q, _ := ParseQuery("needle")
	marks, ok := q.Match(text)
	if !ok {
		t.Fatal("no match")
	}
	s, m := snippet(text, marks)
	if len([]rune(s)) > snippetWidth+10 || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet %q is not a cut window", s)
	}
	if len(m) != 1 || s[m[0][0]:m[0][1]] != "NEEDLE" {
		t.Errorf("marks %v do not point at the match in %q", m, s)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"flock deadlock", `"torn write" x`, `"unbalanced`, "re:^a.*b$", "re:(", "migrat*", "main.go", "漢字 テスト", "", `""`, "a\"b\"c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		if q.Regex == nil {
			for _, term := range q.Terms {
				if len(term.Tokens) == 0 {
					t.Fatalf("%q: empty term", s)
				}
				for _, tok := range term.Tokens {
					if strings.ContainsAny(tok, `" *`) {
						t.Fatalf("%q: token %q would break the FTS query %s", s, tok, q.fts())
					}
				}
			}
			// Every term matches the text it came from.
			joined := ""
			for _, term := range q.Terms {
				joined += strings.Join(term.Tokens, " ") + " "
			}
			if _, ok := q.Match(joined); !ok {
				t.Fatalf("%q does not match its own words %q", s, joined)
			}
		}
	})
}

func TestRegexLiterals(t *testing.T) {
	tests := map[string][]string{
		"leak .moji rm":   {"moji rm"},
		"FLOCK":           nil, // k also matches the Kelvin sign
		"panic: .*nil":    {"panic: ", "nil"},
		"a|b":             nil,
		"ab":              nil, // too short to help
		"foo/bar":         nil,
		"tree[0-9]+ heap": {"tree", " heap"},
	}
	for pat, want := range tests {
		if diff := cmp.Diff(want, literals(pat)); diff != "" {
			t.Errorf("literals(%q) (-want +got):\n%s", pat, diff)
		}
	}
}

// TestSearchFindsEveryRowOfABatch indexes sessions whose entries fill an
// INSERT statement exactly, and by one more, and whose rows share a statement
// across two files, and finds each entry.
func TestSearchFindsEveryRowOfABatch(t *testing.T) {
	for _, sizes := range [][]int{{rowsPerInsert}, {rowsPerInsert + 1}, {rowsPerInsert - 1, 2}} {
		dir := t.TempDir()
		for f, n := range sizes {
			var b strings.Builder
			fmt.Fprintf(&b, `{"type":"session","version":3,"id":"0195dddd-0000-7000-8000-%012d","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}`+"\n", f)
			for i := range n {
				fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":null,"timestamp":"2026-03-01T12:00:00.000Z","message":{"role":"user","content":"common f%dn%d"}}`+"\n", i, f, i)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", f)), []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c := Open(t.TempDir())
		search := func(query string) []Hit {
			t.Helper()
			q, err := ParseQuery(query)
			if err != nil {
				t.Fatal(err)
			}
			hits, err := c.Search(Scope{Dir: dir}, q, SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return hits
		}
		total := 0
		for _, n := range sizes {
			total += n
		}
		for f, n := range sizes {
			for _, i := range []int{0, rowsPerInsert - 1, rowsPerInsert, n - 1} {
				if i >= n {
					continue
				}
				word := fmt.Sprintf("f%dn%d", f, i)
				hits := search(word)
				if len(hits) != 1 || hits[0].EntryID != fmt.Sprintf("e%d", i) || hits[0].Snippet != "common "+word {
					t.Errorf("sizes %v: search %s found %+v, want entry e%d of file %d", sizes, word, hits, i, f)
				}
			}
		}
		// Counted in the index: a hit for each would read the file for each.
		var found int
		if err := c.idx.db.QueryRow("SELECT count(*) FROM texts WHERE texts MATCH 'common'").Scan(&found); err != nil || found != total {
			t.Errorf("sizes %v: %d entries indexed (%v), want %d", sizes, found, err, total)
		}
		c.Close()
	}
}

// TestSearchAcrossPieces: a file indexed in pieces (here of 256 bytes, some
// lines longer than several) has every entry indexed once, at its own line,
// and its text indexed to its end; as does what is appended later.
func TestSearchAcrossPieces(t *testing.T) {
	defer func(n int64) { pieceBytes = n }(pieceBytes)
	pieceBytes = 256
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"0195dddd-0000-7000-8000-000000000001","timestamp":"2026-03-01T12:00:00.000Z","cwd":"/p"}` + "\n")
	line := func(i int) string {
		pad := strings.Repeat("x", (i*37)%200)
		if i%25 == 7 {
			pad = strings.Repeat("long ", 300) // over five pieces
		}
		return fmt.Sprintf(`{"type":"message","id":"e%d","parentId":null,"timestamp":"2026-03-01T12:00:00.000Z","message":{"role":"user","content":"common word%d %s"}}`+"\n", i, i, pad)
	}
	for i := range 200 {
		b.WriteString(line(i))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Open(t.TempDir())
	defer c.Close()
	check := func(n int) {
		t.Helper()
		for i := range n {
			q, err := ParseQuery(fmt.Sprintf("word%d$", i)) // whole: word1 is a prefix of word10
			if err != nil {
				t.Fatal(err)
			}
			hits, err := c.Search(Scope{Dir: dir}, q, SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 || hits[0].EntryID != fmt.Sprintf("e%d", i) {
				t.Fatalf("search word%d found %+v, want entry e%d", i, hits, i)
			}
		}
		var found int
		var textOff, off int64
		if err := c.idx.db.QueryRow("SELECT count(*) FROM texts WHERE texts MATCH 'common'").Scan(&found); err != nil || found != n {
			t.Fatalf("%d entries indexed (%v), want %d", found, err, n)
		}
		if err := c.idx.db.QueryRow("SELECT text_off, off FROM files").Scan(&textOff, &off); err != nil || textOff != off || off != fileSize(t, path) {
			t.Fatalf("text indexed to %d of %d, file %d bytes (%v)", textOff, off, fileSize(t, path), err)
		}
	}
	check(200)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 200; i < 260; i++ {
		f.WriteString(line(i))
	}
	f.Close()
	check(260)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
