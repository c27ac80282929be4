package markdown

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func reply(t testing.TB) string {
	data, err := os.ReadFile("testdata/reply.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func render(t testing.TB, o Options, text string) string {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r.Render(text)
}

// TestGoldens renders a reply plain (NO_COLOR), and in colours for a dark
// and a light background, at two widths.
func TestGoldens(t *testing.T) {
	text := reply(t)
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"plain-60", Options{Width: 60}},
		{"plain-34", Options{Width: 34}},
		{"dark-60", Options{Width: 60, Dark: true, Color: true}},
		{"light-60", Options{Width: 60, Color: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.o, text)
			golden(t, tc.name, got)
			if !tc.o.Color && strings.Contains(got, "\x1b") {
				t.Error("escape sequences without colour")
			}
			for _, ln := range strings.Split(got, "\n") {
				if w := ansi.StringWidth(ln); w > tc.o.Width {
					t.Errorf("a line of %d columns at width %d: %q", w, tc.o.Width, ansi.Strip(ln))
				}
			}
		})
	}
	if render(t, Options{Width: 60, Dark: true, Color: true}, text) == render(t, Options{Width: 60, Color: true}, text) {
		t.Error("the same colours on a dark and a light background")
	}
	if !strings.Contains(render(t, Options{Width: 60, Dark: true, Color: true}, "```go\nfunc main() {}\n```"), "\x1b[") {
		t.Error("code is not highlighted")
	}
}

// TestStreaming feeds a reply in small deltas, as it streams: every
// rendering equals a fresh one of the same text, and the last equals the
// whole reply's.
func TestStreaming(t *testing.T) {
	text := reply(t)
	r, err := New(Options{Width: 60, Dark: true, Color: true})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= len(text); n += 7 {
		prefix := text[:n]
		if got, want := r.Render(prefix), render(t, r.Options(), prefix); got != want {
			t.Fatalf("after %d bytes the streamed rendering differs from a fresh one:\n%s", n, cmp.Diff(want, got))
		}
	}
	if got, want := r.Render(text), render(t, r.Options(), text); got != want {
		t.Fatalf("the final rendering differs:\n%s", cmp.Diff(want, got))
	}
}

// TestBlocksStable checks the promise the streaming rests on: the blocks of
// a prefix, but its last, are blocks of the whole text.
func TestBlocksStable(t *testing.T) {
	text := reply(t) + "\n\n~~~\nfenced\n\nwith a blank line\n~~~\n\nafter\n\n    indented code\n\nend"
	whole := Blocks(text)
	for n := 0; n <= len(text); n++ {
		part := Blocks(text[:n])
		if len(part) == 0 {
			continue
		}
		if diff := cmp.Diff(whole[:len(part)-1], part[:len(part)-1]); diff != "" {
			t.Fatalf("the blocks of the first %d bytes are not blocks of the whole:\n%s", n, diff)
		}
	}
	if got := Blocks("a\n\n```\nx\n\ny\n```\n\n  - indented\n\nb"); len(got) != 3 || got[1] != "```\nx\n\ny\n```\n\n  - indented" {
		t.Errorf("blocks %q", got)
	}
}

// TestHostile renders text that tries to drive the terminal: nothing but
// colour and style sequences comes out.
func TestHostile(t *testing.T) {
	for _, text := range []string{
		"clear \x1b[2J the screen and \x1b]0;set the title\x07",
		"a C1 CSI \u009b31m and bidi \u202eevil\u202c",
		"entities &#27;[2J &#x1b;]8;;http://x\x07 &#155; &rlm; &#0; and fine ones &amp; &lt; &#65;",
		"[a link](http://example.com/\x1b[31m) and ![img](x.png) and <http://auto.example>",
		"```\ncode with \x1b[31m and &#27;\n```",
		"crlf\r\nlines\r\n",
	} {
		for _, color := range []bool{false, true} {
			got := render(t, Options{Width: 60, Dark: true, Color: color}, text)
			if err := onlySGR(got); err != "" {
				t.Errorf("%q (colour %v) renders %s:\n%q", text, color, err, got)
			}
		}
	}
	got := ansi.Strip(render(t, Options{Width: 80}, "entities &#27;x &amp; &#65; and \x1b[2J"))
	if !strings.Contains(got, `&#27;x & A`) || !strings.Contains(got, `\x1b[2J`) {
		t.Errorf("the hostile characters are not shown escaped, or the harmless entities not decoded: %q", got)
	}
	if got := ansi.Strip(render(t, Options{Width: 80}, "a\r\nb")); strings.Contains(got, `\r`) {
		t.Errorf("CRLF shows as %q", got)
	}
}

// onlySGR describes what in s is not text or an SGR sequence ("" for nothing).
func onlySGR(s string) string {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0x1b:
			j := i + 1
			if j >= len(s) || s[j] != '[' {
				return "a bare ESC"
			}
			j++
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				return "a control sequence that is not SGR"
			}
			i = j
		case c < 0x20 && c != '\n' && c != '\t', c == 0x7f:
			return "a control character"
		}
	}
	for _, r := range s {
		if r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200f || r == 0x200e {
			return "a C1 or bidirectional control"
		}
	}
	return ""
}

func FuzzRender(f *testing.F) {
	f.Add(reply(f))
	f.Add("&#27;[2J \x1b]8;;x\x07 ```\n\x9b\n```")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := New(Options{Width: 40, Dark: true, Color: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := onlySGR(r.Render(text)); err != "" {
			t.Fatalf("%q renders %s", text, err)
		}
	})
}

// TestOtherText renders a different text with a renderer that rendered one
// before (the chat reuses a renderer for the next message): nothing of the
// first leaks into the second, and a redraw of the same text is the same.
func TestOtherText(t *testing.T) {
	o := Options{Width: 60, Dark: true, Color: true}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	first := reply(t)
	second := "## The cause\n\nsomething else entirely\n\n- one"
	r.Render(first)
	if got, want := r.Render(second), render(t, o, second); got != want {
		t.Errorf("second text:\n%s", cmp.Diff(want, got))
	}
	if got, want := r.Render(second), render(t, o, second); got != want {
		t.Errorf("redraw:\n%s", cmp.Diff(want, got))
	}
	if got := r.Render(""); got != "" {
		t.Errorf("empty text renders %q", got)
	}
}

// FuzzBlocks checks the cut rule on any text: the blocks of a prefix, but its
// last, are blocks of the whole, and no block is lost (joined, the blocks
// hold every line that is not blank between blocks).
func FuzzBlocks(f *testing.F) {
	f.Add(reply(f), 100)
	f.Add("a\n\n```\nx\n\n~~~\n```\n\nb\n\n    c\n\nd", 9)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if cut < 0 || cut > len(text) {
			return
		}
		whole, part := Blocks(text), Blocks(text[:cut])
		if len(part) > 0 {
			if len(part)-1 > len(whole) {
				t.Fatalf("%d blocks in the prefix, %d in the whole", len(part), len(whole))
			}
			if diff := cmp.Diff(whole[:len(part)-1], part[:len(part)-1]); diff != "" {
				t.Fatalf("the blocks of %q are not blocks of %q:\n%s", text[:cut], text, diff)
			}
		}
		var lines []string
		for _, ln := range strings.Split(text, "\n") {
			if strings.TrimSpace(ln) != "" {
				lines = append(lines, ln)
			}
		}
		var got []string
		for _, b := range whole {
			for _, ln := range strings.Split(b, "\n") {
				if strings.TrimSpace(ln) != "" {
					got = append(got, ln)
				}
			}
		}
		if diff := cmp.Diff(lines, got); diff != "" {
			t.Fatalf("the blocks of %q lose or add lines:\n%s", text, diff)
		}
	})
}
