package catalog

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the listing record as JSON.stringify writes pi's: the
// fields in SPEC §9's order, name and parentSessionPath only when set, dates as
// ISO-8601 UTC with milliseconds (null when invalid), and strings escaped only
// where JSON requires it (U+2028 and U+2029 stay as they are). Listing
// thousands of sessions spends less time here than in a reflective encoder.
func (in *Info) AppendJSON(b []byte) []byte {
	b = append(b, `{"path":`...)
	b = appendJSString(b, in.Path)
	b = append(b, `,"id":`...)
	b = appendJSString(b, in.ID)
	b = append(b, `,"cwd":`...)
	b = appendJSString(b, in.Cwd)
	if in.Name != "" {
		b = append(b, `,"name":`...)
		b = appendJSString(b, in.Name)
	}
	if in.ParentSessionPath != "" {
		b = append(b, `,"parentSessionPath":`...)
		b = appendJSString(b, in.ParentSessionPath)
	}
	b = append(b, `,"created":`...)
	b = in.Created.appendJSON(b)
	b = append(b, `,"modified":`...)
	b = in.Modified.appendJSON(b)
	b = append(b, `,"messageCount":`...)
	b = strconv.AppendInt(b, int64(in.MessageCount), 10)
	b = append(b, `,"firstMessage":`...)
	b = appendJSString(b, in.FirstMessage)
	b = append(b, `,"entryCount":`...)
	b = strconv.AppendInt(b, int64(in.EntryCount), 10)
	b = append(b, `,"sizeBytes":`...)
	b = strconv.AppendInt(b, in.SizeBytes, 10)
	if in.Archived {
		b = append(b, `,"archived":true`...)
	}
	if in.MovedFrom != "" {
		b = append(b, `,"movedFrom":`...)
		b = appendJSString(b, in.MovedFrom)
	}
	return append(b, '}')
}

func (t Time) appendJSON(b []byte) []byte {
	if !t.valid {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.Time().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSString appends s as a JSON string the way JSON.stringify writes it:
// ", \ and control characters escaped (\b \f \n \r \t, else \u00xx), nothing
// else; invalid UTF-8 becomes U+FFFD.
func appendJSString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
