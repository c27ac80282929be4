// Package js holds, once, the JavaScript semantics arbor needs to read and
// write what pi (a Node program) reads and writes: how a number is printed,
// which JSON values are truthy, and how new Date(s) reads a timestamp.
// Every function here is checked against Node's own answers (js_test.go).
package js

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Number returns String(f): the shortest form that reads back as f, in
// exponent form from 1e21 up and below 1e-6 (1e+21, 1.5e-7), "0" for -0,
// "NaN", "Infinity" and "-Infinity".
func Number(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e") // Go writes e+21 and e-07, JavaScript e+21 and e-7
		return mant + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// JSONNumber returns JSON.stringify(f): Number(f), or "null" when f is not finite.
func JSONNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	return Number(f)
}

// Truthy reports whether the JSON value v is truthy in JavaScript:
// Boolean(JSON.parse(v)). An absent value (no bytes) is undefined: false.
func Truthy(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case 'n', 'f':
		return false
	case '"':
		return len(v) > 2 // any escape decodes to at least one character
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return true // not a number JSON allows: as a string, non-empty
		}
		return f != 0 && !math.IsNaN(f) // past the range: ±Infinity (truthy) or 0 (falsy), as JavaScript rounds

	}
	return true // true, objects and arrays
}

// maxTime is the largest magnitude a JavaScript Date holds: ±100,000,000 days.
const maxTime = 8.64e15

// Date returns new Date(s).getTime(), in milliseconds, as V8 reads
// ECMAScript's date-time string format: what toISOString writes and its
// shorter forms (a date alone is UTC, a date-time without an offset is local
// time), with what V8 also accepts there: a lower-case t or z, a space for
// the T, an offset without its colon, any number of fraction digits, 24:00,
// and days past the month's end rolling over into the next. ok is false for
// what V8 reads as NaN and for the other strings, which V8 reads with legacy
// heuristics arbor does not copy.
func Date(s string) (ms int64, ok bool) {
	// The usual form, 2026-11-29T19:00:03.461Z, through the library.
	if len(s) >= 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
		s[len(s)-1] == 'Z' && !strings.Contains(s, ",") {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	p := parser{s: s}
	year, ok := p.year()
	if !ok {
		return 0, false
	}
	month, day := 1, 1
	if p.eat('-') {
		if month, ok = p.digits(2); !ok || month < 1 || month > 12 {
			return 0, false
		}
		if p.eat('-') {
			if day, ok = p.digits(2); !ok || day < 1 || day > 31 {
				return 0, false
			}
		}
	}
	if p.done() {
		return inRange(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC))
	}
	if !p.eat('T') && !p.eat('t') && !p.eat(' ') {
		return 0, false
	}
	hour, ok1 := p.digits(2)
	colon := p.eat(':')
	minute, ok2 := p.digits(2)
	if !ok1 || !colon || !ok2 || hour > 24 || minute > 59 {
		return 0, false
	}
	sec, milli := 0, 0
	if p.eat(':') {
		if sec, ok = p.digits(2); !ok || sec > 59 {
			return 0, false
		}
		if p.eat('.') {
			n := 0
			for ; p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; n++ {
				if n < 3 {
					milli = milli*10 + int(p.s[p.i]-'0')
				}
				p.i++
			}
			if n == 0 {
				return 0, false
			}
			for ; n < 3; n++ {
				milli *= 10
			}
		}
	}
	if hour == 24 && (minute != 0 || sec != 0 || milli != 0) {
		return 0, false
	}
	loc := time.Local
	switch {
	case p.eat('Z') || p.eat('z'):
		loc = time.UTC
	case p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-'):
		sign := 1
		if p.s[p.i] == '-' {
			sign = -1
		}
		p.i++
		oh, ok1 := p.digits(2)
		p.eat(':')
		om, ok2 := p.digits(2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, false
		}
		loc = time.FixedZone("", sign*(oh*3600+om*60))
	}
	if !p.done() {
		return 0, false
	}
	return inRange(time.Date(year, time.Month(month), day, hour, minute, sec, milli*int(time.Millisecond), loc))
}

func inRange(t time.Time) (int64, bool) {
	ms := t.UnixMilli()
	if math.Abs(float64(ms)) > maxTime {
		return 0, false
	}
	return ms, true
}

type parser struct {
	s string
	i int
}

func (p *parser) done() bool { return p.i == len(p.s) }

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) digits(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

// year reads YYYY or an expanded ±YYYYYY year (-000000 is not a year).
func (p *parser) year() (int, bool) {
	if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		neg := p.s[p.i] == '-'
		p.i++
		y, ok := p.digits(6)
		if !ok || (neg && y == 0) {
			return 0, false
		}
		if neg {
			y = -y
		}
		return y, true
	}
	return p.digits(4)
}
