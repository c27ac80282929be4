package session

import (
	"encoding/json"
	"testing"
)

// TestSkipPlain puts every byte value at every offset of a long string, so the
// eight-bytes-at-a-time skip sees it in each lane: validJSON must agree with
// encoding/json on all of them.
func TestSkipPlain(t *testing.T) {
	for c := range 256 {
		for off := range 17 {
			s := []byte(`"` + "abcdefghijklmnopqrstuvwxyz"[:off] + "?" + "0123456789abcdefg" + `"`)
			s[1+off] = byte(c)
			if got, want := validJSON(s), json.Valid(s); got != want {
				t.Errorf("byte %#x at %d: validJSON %v, encoding/json %v", c, off, got, want)
			}
		}
	}
}
