package session

import (
	"math"
	"testing"
	"time"
)

// TestJSTime: timestamps read as V8's new Date(s).getTime() reads them (the
// expectations were printed by Node; the local-time cases assume Node ran in UTC,
// as it did, and are checked only where this process's zone is UTC too).
func TestJSTime(t *testing.T) {
	_, offset := time.Now().Zone()
	for _, tc := range []struct {
		in    string
		want  float64
		local bool
	}{
		{`2026-01-01`, 1767225600000, false},
		{`2026-01`, 1767225600000, false},
		{`2026`, 1767225600000, false},
		{`2026-01-01T10:20Z`, 1767262800000, false},
		{`2026-01-01T10:20:30`, 1767262830000, true},
		{`2026-01-01T10:20`, 1767262800000, true},
		{`2026-01-01T10:20:30.5`, 1767262830500, true},
		{`2026-01-01T10:20:30.123456Z`, 1767262830123, false},
		{`2026-01-01T10:20:30+02:00`, 1767255630000, false},
		{`2026-01-01 10:20:30`, 1767262830000, true},
		{`bad`, math.NaN(), false},
		{``, math.NaN(), false},
		{`2026-02-30T00:00:00.000Z`, 1772409600000, false},
		{`2026-01-01T24:00:00Z`, 1767312000000, false},
		{`2026-01-32`, math.NaN(), false},
		{`2026-13-01`, math.NaN(), false},
		{`2026-00-10`, math.NaN(), false},
		{`2026-01-00`, math.NaN(), false},
		{`2026-01-01T24:30:00Z`, math.NaN(), false},
		{`2026-01-01T23:60:00Z`, math.NaN(), false},
		{`2026-01-01T23:59:60Z`, math.NaN(), false},
		{`2026-01-01t10:20:30z`, 1767262830000, false},
		{`2026-01-01T10:20:30.Z`, math.NaN(), false},
		{`2026-01-01T10:20:30.1234Z`, 1767262830123, false},
		{`+002026-01-01T00:00:00Z`, 1767225600000, false},
		{`-000001-01-01T00:00:00Z`, -62198755200000, false},
		{`2026-01-01T1:20:30Z`, math.NaN(), false},
		{`2026-01-01T10:20:30+0200`, 1767255630000, false},
		{`2026-01-01T10:20:30 Z`, math.NaN(), false},
		{`2026-01-01T10:20:30.000Z `, math.NaN(), false},
		{`2026-11-29T19:00:03.461Z`, 1795978803461, false},
		{`1970-01-01T00:00:00.000Z`, 0, false},
		{`2026-01-01T10:20:30-23:59`, 1767349170000, false},
		{`2026-01-01T10:20:30+24:00`, math.NaN(), false},
		{`2026-02-29`, 1772323200000, false},
		{`2024-02-29T00:00:00Z`, 1709164800000, false},
		{`2026-04-31T00:00:00Z`, 1777593600000, false},
	} {
		if tc.local && offset != 0 {
			continue
		}
		got := jsTime(tc.in)
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("jsTime(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzJSTime: no input panics, and every timestamp arbor writes reads back as
// its millisecond.
func FuzzJSTime(f *testing.F) {
	f.Add("2026-11-29T19:00:03.461Z", int64(0))
	f.Add("+002026-01-01T24:00", int64(1))
	f.Add("2026-01-01 10:20:30.1234-05:30", int64(-1))
	f.Fuzz(func(t *testing.T, s string, ms int64) {
		jsTime(s)
		ms %= 8.64e15 // JavaScript's range of dates
		tm := time.UnixMilli(ms)
		if tm.Year() < 0 || tm.Year() > 9999 {
			return // FormatTime writes four-digit years only
		}
		if got := jsTime(FormatTime(tm)); got != float64(ms) {
			t.Fatalf("jsTime(%s) = %v, want %d", FormatTime(tm), got, ms)
		}
	})
}
