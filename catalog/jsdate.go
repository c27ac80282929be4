package catalog

import (
	"github.com/arborlog/arbor/internal/js"
	"math"
	"strconv"
	"time"
)

// Time is a point in time printed as ISO-8601 UTC with milliseconds, or as null
// when it is not a valid date (as JSON.stringify prints an invalid Date).
type Time struct {
	ms    int64
	valid bool
}

// TimeOf converts t to a Time (milliseconds are kept, finer digits dropped).
func TimeOf(t time.Time) Time { return Time{ms: t.UnixMilli(), valid: true} }

// Valid reports whether t holds a date.
func (t Time) Valid() bool { return t.valid }

// Time returns t as a time.Time in UTC (the zero time when invalid).
func (t Time) Time() time.Time {
	if !t.valid {
		return time.Time{}
	}
	return time.UnixMilli(t.ms).UTC()
}

// String formats t as 2026-11-29T19:00:03.461Z, or "" when invalid.
func (t Time) String() string {
	if !t.valid {
		return ""
	}
	return t.Time().Format("2006-01-02T15:04:05.000Z")
}

// MarshalJSON prints the ISO string or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if !t.valid {
		return []byte("null"), nil
	}
	return strconv.AppendQuote(nil, t.String()), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	*t = jsDate(s)
	return nil
}

// maxJSTime is the largest magnitude a JavaScript Date holds (±100,000,000 days).
const maxJSTime = 8.64e15

// jsTimeFromNumber is new Date(n): the number truncated toward zero, or invalid.
func jsTimeFromNumber(f float64) Time {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > maxJSTime {
		return Time{}
	}
	return Time{ms: int64(f), valid: true}
}

// jsDateOf is new Date(v) for a JSON value that is not a string.
func jsDateOf(v []byte) Time {
	switch v[0] {
	case 'n', 'f':
		return Time{valid: true} // null and false convert to 0
	case 't':
		return Time{ms: 1, valid: true}
	case '{', '[':
		return Time{} // "[object Object]" and most arrays: Invalid Date
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return Time{}
	}
	return jsTimeFromNumber(f)
}

// jsDate is new Date(s) (package js).
func jsDate(s string) Time {
	ms, ok := js.Date(s)
	return Time{ms: ms, valid: ok}
}

func timeFromNS(ns int64) time.Time { return time.Unix(0, ns) }

// Equal reports whether t and u are the same instant (or both invalid).
func (t Time) Equal(u Time) bool { return t == u }
