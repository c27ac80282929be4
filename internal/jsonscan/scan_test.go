package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStringEveryByteEveryLane puts every byte value at every offset of a long
// string, so the eight-bytes-at-a-time skip sees it in each lane.
func TestStringEveryByteEveryLane(t *testing.T) {
	for c := range 256 {
		for off := range 17 {
			s := []byte(`"` + "abcdefghijklmnopqrstuvwxyz"[:off] + "?" + "0123456789abcdefg" + `"`)
			s[1+off] = byte(c)
			end, ok := String(s, 0)
			if got, want := ok && end == len(s), json.Valid(s); got != want {
				t.Errorf("byte %#x at %d: String says %v, encoding/json %v", c, off, got, want)
			}
		}
	}
}

// TestSkipPlainStopsAtTheFirst puts a quote, a backslash or a control byte at
// every offset of three words of bytes that are none of these (the ones next to
// them included), with each kind of byte after it: skipPlain must stop exactly
// there.
func TestSkipPlainStopsAtTheFirst(t *testing.T) {
	plain := strings.Repeat("a\xc3\xa9 !#[]\x7f\xe2\x82\xac~", 2)[:24]
	stops := []byte{'"', '\\'}
	for c := range byte(0x20) {
		stops = append(stops, c)
	}
	for _, c := range stops {
		for off := range len(plain) {
			for _, next := range []byte{'a', 0xff, 0x00, '"', '\\'} {
				b := []byte(plain)
				b[off] = c
				if off+1 < len(b) {
					b[off+1] = next
				}
				if got := skipPlain(b, 0); got != off {
					t.Errorf("byte %#x at %d, %#x after it: skipPlain stops at %d", c, off, next, got)
				}
			}
		}
	}
	if got := skipPlain([]byte(plain), 0); got != len(plain) {
		t.Errorf("no byte to stop at: skipPlain stops at %d of %d", got, len(plain))
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"0", true}, {"-0", true}, {"12", true}, {"1.5", true}, {"1e9", true}, {"-1.25E-3", true}, {"1e+2", true},
		{"-", false}, {"01", false}, {"1.", false}, {".5", false}, {"1e", false}, {"1e+", false}, {"--1", false},
	} {
		end, ok := Number([]byte(tc.in), 0)
		if got := ok && end == len(tc.in); got != tc.want {
			t.Errorf("Number(%q) = %d, %v; want whole=%v", tc.in, end, ok, tc.want)
		}
	}
}

func TestStringEscaped(t *testing.T) {
	for _, tc := range []struct {
		in          string
		ok, escaped bool
	}{
		{`"plain"`, true, false}, {`"a\nb"`, true, true}, {`"\u00e9"`, true, true}, {`"\u00g9"`, false, true},
		{`"\x"`, false, true}, {"\"tab\there\"", false, false}, {`"open`, false, false}, {`"end\`, false, true},
	} {
		_, esc, ok := StringEscaped([]byte(tc.in), 0)
		if ok != tc.ok || esc != tc.escaped {
			t.Errorf("StringEscaped(%q) = escaped %v, ok %v; want %v, %v", tc.in, esc, ok, tc.escaped, tc.ok)
		}
	}
}

// FuzzString checks String and Number against encoding/json on single values.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"\ud83d\ude80"`, `"ü漢"`, `12.5e-3`, `-0`, `"\u12"`, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		var end int
		var ok bool
		switch c := b[0]; {
		case c == '"':
			end, ok = String(b, 0)
		case c == '-' || (c >= '0' && c <= '9'):
			end, ok = Number(b, 0)
		default:
			return
		}
		// encoding/json allows white space after the value; so does every caller.
		if got, want := ok && SkipSpace(b, end) == len(b), json.Valid(b); got != want {
			t.Fatalf("%q: scanner says %v, encoding/json %v", b, got, want)
		}
	})
}

func TestBoolAndSeen(t *testing.T) {
	for v, want := range map[string][2]bool{"true": {true, true}, "false": {false, true}, "null": {}, "1": {}, `"true"`: {}, "": {}, "truex": {}} {
		if b, ok := Bool([]byte(v)); b != want[0] || ok != want[1] {
			t.Errorf("Bool(%q) = %v, %v, want %v, %v", v, b, ok, want[0], want[1])
		}
	}
	var s Seen
	if !s.First(1) || !s.First(1<<31) || s.First(1) || s.First(1<<31) || !s.First(2) {
		t.Errorf("Seen.First: a field met once more must be refused, a new one taken (set %b)", s)
	}
}

func TestExactInteger(t *testing.T) {
	for in, want := range map[string]bool{"0": true, "7": true, "-12": true, "123456789012345": true, "1234567890123456": false,
		"-0": false, "01": false, "1.5": false, "1e3": false, "2E1": false, "-": false, "": false, "x": false, "12,": true} {
		if end, ok := ExactInteger([]byte(in), 0); ok != want || ok && end != len(strings.TrimSuffix(in, ",")) {
			t.Errorf("ExactInteger(%q) = %d, %v; want %v", in, end, ok, want)
		}
	}
}
