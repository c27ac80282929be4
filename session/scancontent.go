package session

import (
	"strconv"

	"github.com/arborlog/arbor/internal/jsonscan"
)

// ScanContent is Content.UnmarshalJSON of a content value as a loaded line
// holds it (valid JSON), in one walk without the decoder: the strings it
// returns point into v, which must never be modified. ok is false when v holds
// anything the walk might read otherwise than the decoder (a string with an
// escape or invalid UTF-8, a repeated field, a field of a block of another
// kind than the decoder reads in one pass); the caller then decodes it.
// A million-message session is read this way by the tree and the planner.
func ScanContent(v []byte) (Content, bool) { return ScanContentInto(v, nil) }

// ScanContentInto is ScanContent with the blocks appended to blocks[:0], for a
// reader of a million messages one at a time (the tree) that reuses one slice
// rather than allocating one a message: the Content's Blocks share blocks'
// array (and are nil when there are none, as ScanContent leaves them).
func ScanContentInto(v []byte, blocks []Block) (Content, bool) {
	v = v[jsonscan.SkipSpace(v, 0):]
	if len(v) == 0 {
		return Content{}, false
	}
	switch v[0] {
	case '"':
		s, ok := jsonscan.Plain(v)
		return Content{IsString: true, String: s}, ok
	case '[':
		c, _, ok := scanBlocksAt(v, 0, blocks)
		return c, ok
	}
	return Content{}, true // anything else is no content
}

// scanContentAt is ScanContentInto of the value at offset at of b (a
// member's, as jsonscan.MembersAt gives it), and the offset after it.
func scanContentAt(b []byte, at int, blocks []Block) (Content, int, bool) {
	if at < len(b) {
		switch b[at] {
		case '"':
			s, end, ok := jsonscan.PlainAt(b, at)
			return Content{IsString: true, String: s}, end, ok
		case '[':
			return scanBlocksAt(b, at, blocks)
		}
	}
	end, ok := jsonscan.SkipValue(b, at)
	return Content{}, end, ok // anything else is no content
}

// scanBlocksAt reads the list of blocks at offset at of b, into blocks[:0].
func scanBlocksAt(b []byte, at int, blocks []Block) (Content, int, bool) {
	c := Content{Blocks: blocks[:0]}
	end, ok := jsonscan.ElementsAt(b, at, func(i int) (int, bool) {
		if b[i] != '{' {
			return jsonscan.SkipValue(b, i) // not a block
		}
		blk, end, ok := scanBlockAt(b, i)
		if ok {
			c.Blocks = append(c.Blocks, blk)
		}
		return end, ok
	})
	if len(c.Blocks) == 0 {
		c.Blocks = nil // as the decoder leaves a list without blocks
	}
	return c, end, ok
}

// scanBlockAt is parseBlock of the block at offset i of raw, as written, and
// the offset after it; ok is false where ScanContent gives up.
func scanBlockAt(raw []byte, i int) (Block, int, bool) {
	var b Block
	var seen jsonscan.Seen
	end, ok := jsonscan.MembersAt(raw, i, func(name []byte, at int) (int, bool) {
		var dst *string
		bit := uint32(1)
		switch string(name) { // every field of Block (TestScanBlockFields)
		case "type":
			dst = &b.Type
		case "text":
			dst, bit = &b.Text, 1<<1
		case "textSignature":
			dst, bit = &b.TextSignature, 1<<2
		case "thinking":
			dst, bit = &b.Thinking, 1<<3
		case "thinkingSignature":
			dst, bit = &b.ThinkingSignature, 1<<4
		case "redacted":
			bit = 1 << 5
		case "data":
			dst, bit = &b.Data, 1<<6
		case "mimeType":
			dst, bit = &b.MimeType, 1<<7
		case "id":
			dst, bit = &b.ID, 1<<8
		case "name":
			dst, bit = &b.Name, 1<<9
		case "arguments":
			bit = 1 << 10
		case "thoughtSignature":
			dst, bit = &b.ThoughtSignature, 1<<11
		case "argumentsError":
			dst, bit = &b.ArgumentsError, 1<<12
		default:
			return jsonscan.SkipValue(raw, at)
		}
		if !seen.First(bit) {
			return at, false
		}
		if dst != nil {
			s, end, ok := jsonscan.PlainAt(raw, at)
			*dst = s
			return end, ok
		}
		end, ok := jsonscan.SkipValue(raw, at)
		if !ok {
			return end, false
		}
		if bit == 1<<5 {
			b.Redacted, ok = jsonscan.Bool(raw[at:end])
			return end, ok
		}
		b.Arguments = raw[at:end:end] // an append copies rather than writes into the line
		return end, true
	})
	return b, end, ok
}

// ScanMessageData is what decoding the message object raw, as a loaded line
// holds it, into a MessageData gives, in one walk without the decoder, as
// ScanContent is for its content; ok is false where that walk gives up (a
// field of another kind than MessageData's, a repeated field, a number out of
// range, no role), and the caller then decodes it.
func ScanMessageData(raw []byte) (MessageData, bool) {
	var s MessageScanner
	return s.Scan(raw)
}

// MessageScanner reads messages one after another as ScanMessageData does,
// reusing one block list and one usage between them, so a reader of a million
// messages does not allocate them for each. A result is valid until the next
// Scan. The zero value is ready to use.
type MessageScanner struct {
	d      MessageData
	blocks []Block
	usage  Usage
}

// Scan is ScanMessageData of raw.
func (s *MessageScanner) Scan(raw []byte) (MessageData, bool) {
	ok := scanMessageData(&s.d, raw, s.blocks, &s.usage)
	if cap(s.d.Content.Blocks) > cap(s.blocks) {
		s.blocks = s.d.Content.Blocks[:0]
	}
	return s.d, ok
}

// Message is ParseMessage(raw) and then Message.Data, for raw that is valid
// JSON (a loaded entry's message, a context's): a message the scanner reads,
// role and all, is taken as read and not walked again. ok is false where
// ParseMessage refuses raw, and err is what Data returns. The result is valid
// until s reads again.
func (s *MessageScanner) Message(raw []byte) (d MessageData, ok bool, err error) {
	if d, ok := s.Scan(raw); ok && d.Role != "" {
		return d, true, nil
	}
	m, err := ParseMessage(raw)
	if err != nil {
		return MessageData{}, false, nil
	}
	d, err = m.Data()
	return d, true, err
}

// scanMessageData is ScanMessageData into d, its blocks appended to
// blocks[:0] and its usage written to *u.
func scanMessageData(d *MessageData, raw []byte, blocks []Block, u *Usage) bool {
	*d = MessageData{}
	var seen jsonscan.Seen
	_, ok := jsonscan.MembersAt(raw, 0, func(name []byte, at int) (int, bool) {
		bit := uint32(1)
		var str *string
		var flag *bool
		switch string(name) { // every field of MessageData (TestScanMessageDataFields)
		case "role":
			str = &d.Role
		case "content":
			bit = 1 << 1
		case "timestamp":
			bit = 1 << 2
		case "api":
			bit, str = 1<<3, &d.API
		case "provider":
			bit, str = 1<<4, &d.Provider
		case "model":
			bit, str = 1<<5, &d.Model
		case "usage":
			bit = 1 << 6
		case "stopReason":
			bit, str = 1<<7, &d.StopReason
		case "errorMessage":
			bit, str = 1<<8, &d.ErrorMessage
		case "toolCallId":
			bit, str = 1<<9, &d.ToolCallID
		case "toolName":
			bit, str = 1<<10, &d.ToolName
		case "isError":
			bit, flag = 1<<11, &d.IsError
		case "details":
			bit = 1 << 12
		case "command":
			bit, str = 1<<13, &d.Command
		case "output":
			bit, str = 1<<14, &d.Output
		case "exitCode":
			bit = 1 << 15
		case "cancelled":
			bit, flag = 1<<16, &d.Cancelled
		case "truncated":
			bit, flag = 1<<17, &d.Truncated
		case "fullOutputPath":
			bit, str = 1<<18, &d.FullOutputPath
		case "excludeFromContext":
			bit, flag = 1<<19, &d.ExcludeFromContext
		case "customType":
			bit, str = 1<<20, &d.CustomType
		case "display":
			bit, flag = 1<<21, &d.Display
		default:
			return jsonscan.SkipValue(raw, at)
		}
		if !seen.First(bit) {
			return at, false
		}
		// The strings and the content, most of a message, are walked once;
		// the rest are skipped first.
		switch {
		case str != nil:
			s, end, ok := jsonscan.PlainAt(raw, at)
			*str = s
			return end, ok
		case bit == 1<<1:
			var end int
			var ok bool
			d.Content, end, ok = scanContentAt(raw, at, blocks)
			return end, ok
		}
		end, ok := jsonscan.SkipValue(raw, at)
		if !ok {
			return end, false
		}
		v := raw[at:end]
		switch {
		case flag != nil:
			*flag, ok = jsonscan.Bool(v)
		case bit == 1<<2:
			d.Timestamp, ok = number(v)
		case bit == 1<<6:
			if *u, ok = scanUsage(v); ok {
				d.Usage = u
			}
		case bit == 1<<12:
			d.Details, ok = v[:len(v):len(v)], true
		case bit == 1<<15:
			var x float64
			x, ok = number(v)
			d.ExitCode = &x
		}
		return end, ok
	})
	return ok && d.Role != ""
}

// number is the JSON number v as the decoder reads it into a float64; ok is
// false for another value or one out of range.
func number(v []byte) (float64, bool) {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	// Token counts and times are integers: up to 15 digits one is exact in a
	// float64, so it is summed here rather than parsed (a tenth of the time).
	digits := v
	if v[0] == '-' {
		digits = v[1:]
	}
	if n := len(digits); n > 0 && n <= 15 && (digits[0] != '0' || n == 1) {
		x := int64(0)
		for _, c := range digits {
			if c < '0' || c > '9' {
				x = -1
				break
			}
			x = x*10 + int64(c-'0')
		}
		if x >= 0 {
			f := float64(x)
			if v[0] == '-' {
				f = -f // -0 stays negative zero, as ParseFloat gives it
			}
			return f, true
		}
	}
	x, err := strconv.ParseFloat(string(v), 64)
	return x, err == nil
}

// ScanUsage is the decoder's Usage of a usage object as a loaded line holds
// it, in one walk; ok is false where the walk gives up (a repeated field, a
// value that is not a number, one out of range), and the caller then decodes it.
func ScanUsage(v []byte) (Usage, bool) { return scanUsage(v) }

// scanUsage is ScanUsage.
func scanUsage(v []byte) (Usage, bool) {
	var u Usage
	var seen jsonscan.Seen
	ok := jsonscan.Members(v, func(name, x []byte) bool {
		var dst *float64
		var bit uint32
		switch string(name) {
		case "input":
			dst, bit = &u.Input, 1
		case "output":
			dst, bit = &u.Output, 2
		case "cacheRead":
			dst, bit = &u.CacheRead, 4
		case "cacheWrite":
			dst, bit = &u.CacheWrite, 8
		case "totalTokens":
			dst, bit = &u.TotalTokens, 16
		case "cost":
			bit = 32
		default:
			return true
		}
		if !seen.First(bit) {
			return false
		}
		var ok bool
		if dst != nil {
			*dst, ok = number(x)
		} else {
			u.Cost, ok = scanCost(x)
		}
		return ok
	})
	return u, ok
}

// scanCost is scanUsage for the cost object.
func scanCost(v []byte) (Cost, bool) {
	var c Cost
	var seen jsonscan.Seen
	ok := jsonscan.Members(v, func(name, x []byte) bool {
		var dst *float64
		var bit uint32
		switch string(name) {
		case "input":
			dst, bit = &c.Input, 1
		case "output":
			dst, bit = &c.Output, 2
		case "cacheRead":
			dst, bit = &c.CacheRead, 4
		case "cacheWrite":
			dst, bit = &c.CacheWrite, 8
		case "total":
			dst, bit = &c.Total, 16
		default:
			return true
		}
		if !seen.First(bit) {
			return false
		}
		var ok bool
		*dst, ok = number(x)
		return ok
	})
	return c, ok
}

// scanUsageRecord is UsageRecord of an assistant message as written, in one
// walk; done is false where the walk gives up, and UsageRecord then reads it
// with the decoder.
func scanUsageRecord(raw []byte) (key string, u Usage, ok, done bool) {
	var usage, responseModel, model, provider []byte
	var seen jsonscan.Seen
	walked := jsonscan.Members(raw, func(name, v []byte) bool {
		var dst *[]byte
		var bit uint32
		switch string(name) {
		case "usage":
			dst, bit = &usage, 1
		case "responseModel":
			dst, bit = &responseModel, 2
		case "model":
			dst, bit = &model, 4
		case "provider":
			dst, bit = &provider, 8
		default:
			return true
		}
		if !seen.First(bit) {
			return false
		}
		*dst = v
		return true
	})
	if !walked {
		return "", Usage{}, false, false
	}
	if len(usage) == 0 || usage[0] != '{' {
		return "", Usage{}, false, true
	}
	if u, ok = scanUsage(usage); !ok {
		return "", Usage{}, false, false
	}
	if len(responseModel) == 0 || responseModel[0] == 'n' {
		responseModel = model
	}
	return jsTemplate(provider) + "/" + jsTemplate(responseModel), u, true, true
}
