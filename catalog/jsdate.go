package catalog

import (
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
	*t = parseJSDate(s)
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

// parseJSDate is new Date(s) for the ISO-8601 forms JavaScript specifies:
// YYYY, YYYY-MM, YYYY-MM-DD (UTC) and those followed by THH:mm, :ss, .sss and
// Z or ±HH:mm (local time without an offset). Other strings, which V8 parses
// with implementation-specific rules, are treated as invalid.
func parseJSDate(s string) Time {
	p := 0
	num := func(n int) (int, bool) {
		if p+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[p : p+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		p += n
		return v, true
	}
	lit := func(c byte) bool {
		if p < len(s) && s[p] == c {
			p++
			return true
		}
		return false
	}
	var year int
	sign := 1
	if p < len(s) && (s[p] == '+' || s[p] == '-') {
		if s[p] == '-' {
			sign = -1
		}
		p++
		y, ok := num(6)
		if !ok || (sign == -1 && y == 0) {
			return Time{}
		}
		year = sign * y
	} else {
		y, ok := num(4)
		if !ok {
			return Time{}
		}
		year = y
	}
	month, day := 1, 1
	if lit('-') {
		m, ok := num(2)
		if !ok || m < 1 || m > 12 {
			return Time{}
		}
		month = m
		if lit('-') {
			d, ok := num(2)
			if !ok || d < 1 || d > daysIn(year, month) {
				return Time{}
			}
			day = d
		}
	}
	loc := time.UTC
	var hour, min, sec, ms int
	if lit('T') {
		var ok bool
		if hour, ok = num(2); !ok || !lit(':') {
			return Time{}
		}
		if min, ok = num(2); !ok {
			return Time{}
		}
		if lit(':') {
			if sec, ok = num(2); !ok {
				return Time{}
			}
			if lit('.') {
				start := p
				for p < len(s) && s[p] >= '0' && s[p] <= '9' {
					p++
				}
				if p == start {
					return Time{}
				}
				frac := s[start:p] + "00"
				ms, _ = strconv.Atoi(frac[:3])
			}
		}
		if hour > 24 || min > 59 || sec > 59 || (hour == 24 && (min != 0 || sec != 0 || ms != 0)) {
			return Time{}
		}
		switch {
		case lit('Z'):
		case p < len(s) && (s[p] == '+' || s[p] == '-'):
			sg := 1
			if s[p] == '-' {
				sg = -1
			}
			p++
			oh, ok1 := num(2)
			ok2 := lit(':')
			om, ok3 := num(2)
			if !ok1 || !ok2 || !ok3 || oh > 23 || om > 59 {
				return Time{}
			}
			loc = time.FixedZone("", sg*(oh*3600+om*60))
		default:
			loc = time.Local
		}
	}
	if p != len(s) {
		return Time{}
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, ms*int(time.Millisecond), loc)
	v := t.UnixMilli()
	if math.Abs(float64(v)) > maxJSTime {
		return Time{}
	}
	return Time{ms: v, valid: true}
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func timeFromNS(ns int64) time.Time { return time.Unix(0, ns) }

// Equal reports whether t and u are the same instant (or both invalid).
func (t Time) Equal(u Time) bool { return t == u }
