package rpc

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// TestValidUTF8Stream writes text cut at every byte in two writes: valid text
// (characters of two, three and four bytes) comes out unchanged, a character
// cut in two is put together again, and bytes that are not UTF-8 come out as
// U+FFFD, so what a client reads is always valid UTF-8.
func TestValidUTF8Stream(t *testing.T) {
	for _, in := range []string{`{"text":"héllo — 世界 🌳"}` + "\n", "{\"text\":\"a\xffb\xe2\x82c🌳\"}\n"} {
		for cut := 0; cut <= len(in); cut++ {
			var out bytes.Buffer
			w := &validUTF8{w: &out}
			for _, part := range []string{in[:cut], in[cut:]} {
				if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := out.String()
			if !utf8.ValidString(got) {
				t.Fatalf("cut at %d: %q is not UTF-8", cut, got)
			}
			if utf8.ValidString(in) && got != in {
				t.Fatalf("cut at %d: %q, want %q", cut, got, in)
			}
			if !utf8.ValidString(in) && bytes.Count([]byte(got), []byte("\uFFFD")) < 2 {
				t.Fatalf("cut at %d: %q keeps no U+FFFD for the bytes that are not UTF-8", cut, got)
			}
		}
	}
}
