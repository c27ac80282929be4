package treeview

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
)

var lazySeeds = []string{
	`"plain text"`,
	`"esc\"aped \\ \/ \b\f\n\r\t and \u00e9 \ud83d\ude00 emoji"`,
	`"lone \ud83d surrogate and \ude00"`,
	"\"invalid \xff\xfe utf-8 \xe2\x82 cut\"",
	`"héllo wörld 漢字 ` + strings.Repeat("long ", 200) + `"`,
	`[{"type":"text","text":"one"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":" two"}]`,
	`[{"type":"text","text":"first","text":"last wins"},{"type":"te\u0078t","text":"escaped type"}]`,
	`[{"type":"text","text":5},{"type":"text"},{"text":"no type"},{"type":5,"text":"bad type"},"str",1,null,[]]`,
	`[{"type":"text","text":"x","id":7},{"type":"text","type":"image","text":"not text"}]`,
	`[]`, `{}`, `5`, `null`, `[{"type":"image"}]`,
	`[ {"type" : "text" , "text" : "spaced"} , {"type":"text","text":"` + strings.Repeat(`\u0041\n`, 300) + `"} ]`,
}

// checkLazyContent: what the tree reads of a large message's text without
// decoding it is what decoding it gives: the whole text when asked for all of
// it, and prefixes of it (but for their last character) that grow with n.
func checkLazyContent(t *testing.T, raw string) {
	raw = strings.Trim(raw, " \t\r\n") // a member's value as objectMembers cuts it
	var c session.Content
	if json.Unmarshal([]byte(raw), &c) != nil {
		return // not valid JSON: session files never hold such a value
	}
	want := c.Text("")
	var blocks [][]rawMember
	if strings.HasPrefix(raw, "[") {
		var ok bool
		if blocks, _, ok = arrayObjects([]byte(raw), 0); !ok {
			t.Fatalf("arrayObjects cannot walk %q", raw)
		}
	}
	text := contentTextPrefix([]byte(raw), blocks)
	if got, whole := text(-1); got != want || !whole {
		t.Fatalf("whole text of %q = %q (whole %v), want %q", raw, got, whole, want)
	}
	prev := 0
	for n := 0; n <= len(raw)+2; n++ {
		got, whole := text(n)
		if whole {
			if got != want {
				t.Fatalf("text(%d) of %q = %q, called whole, want %q", n, raw, got, want)
			}
			continue
		}
		// All but the last character is a prefix of the text.
		body := got
		if _, size := utf8.DecodeLastRuneInString(body); size > 0 {
			body = body[:len(body)-size]
		}
		if !strings.HasPrefix(want, body) {
			t.Fatalf("text(%d) of %q = %q, not a prefix of %q", n, raw, got, want)
		}
		if len(body) < prev-4 {
			t.Fatalf("text(%d) of %q shrank to %q", n, raw, got)
		}
		prev = len(body)
	}
	image := false
	for _, b := range c.Blocks {
		image = image || b.Type == "image"
	}
	if got := contentHasImage(blocks); got != image {
		t.Fatalf("contentHasImage(%q) = %v, want %v", raw, got, image)
	}
}

func TestLazyContent(t *testing.T) {
	for _, s := range lazySeeds {
		checkLazyContent(t, s)
	}
}

func FuzzLazyContent(f *testing.F) {
	for _, s := range lazySeeds {
		f.Add(s)
	}
	f.Fuzz(checkLazyContent)
}
