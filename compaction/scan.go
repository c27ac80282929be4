package compaction

import (
	"sync"

	"github.com/arborlog/arbor/internal/inorder"
	"github.com/arborlog/arbor/internal/jsonscan"
	"github.com/arborlog/arbor/session"
)

// scanner reads messages into fields one after another as decode does, in one
// walk without the decoder when it can: a million-message context is not
// decoded for its estimates, its file operations and its summary. The zero
// value is ready to use.
//
// It reads a message only when it comes from a loaded entry (whose line is
// known to be valid JSON, and is never modified) and the walk reads it as the
// decoder does; anything else (a field of another type than the decoder
// takes, a repeated field, an escape in a name or a string, sections or tools
// added) goes to the decoder. It reads every field of fields
// (TestScanFieldsNames) and no other, so a message the decoder would leave
// empty for a field of a wrong type is never read otherwise.
type scanner struct {
	blocks []session.Block // reused between messages
}

// fields is decode(m.Raw). The blocks it returns are valid until s reads
// again.
func (s *scanner) fields(m session.ContextMessage) fields {
	if m.Entry != nil {
		if f, ok := s.scan(m.Raw); ok {
			return f
		}
	}
	return decode(m.Raw)
}

func (s *scanner) scan(raw []byte) (fields, bool) {
	var f fields
	var seen jsonscan.Seen
	ok := jsonscan.Members(raw, func(name, v []byte) bool {
		bit := uint32(1)
		var str *string
		switch string(name) { // every field of fields (TestScanFieldsNames)
		case "role":
			str = &f.Role
		case "content":
			bit = 1 << 1
		case "command":
			bit, str = 1<<2, &f.Command
		case "output":
			bit, str = 1<<3, &f.Output
		case "summary":
			bit, str = 1<<4, &f.Summary
		case "stopReason":
			bit, str = 1<<5, &f.StopReason
		case "toolName":
			bit, str = 1<<6, &f.ToolName
		case "toolCallId":
			bit, str = 1<<7, &f.ToolCallID
		case "isError":
			bit = 1 << 8
		case "usage":
			bit = 1 << 9
		case "sections", "toolsAdded":
			return false // a system message's: the decoder keeps them as written
		default:
			return true
		}
		if !seen.First(bit) {
			return false
		}
		var ok bool
		switch bit {
		case 1 << 1:
			f.Content, ok = session.ScanContentInto(v, s.blocks)
			if cap(f.Content.Blocks) > cap(s.blocks) {
				s.blocks = f.Content.Blocks[:0]
			}
		case 1 << 8:
			f.IsError, ok = jsonscan.Bool(v)
		case 1 << 9:
			f.Usage, ok = v[:len(v):len(v)], true
		default:
			*str, ok = jsonscan.Plain(v)
		}
		return ok
	})
	return f, ok && f.Role != ""
}

// eachFields calls f with the fields of each message of msgs, in order. The
// fields are read a run ahead on the other cores (internal/inorder), so
// reading them and what f does with them (a summary of a million messages)
// take turns on two cores rather than one. What f is given is valid until it
// returns.
func eachFields(msgs []session.ContextMessage, f func(*fields)) {
	inorder.Do(len(msgs), fieldsRun, func(lo, hi int) *fieldsBatch {
		return readFields(msgs[lo:hi])
	}, func(b *fieldsBatch) error {
		for i := range b.fs {
			f(&b.fs[i])
		}
		clear(b.fs) // let go of what decode made
		fieldsBatches.Put(b)
		return nil
	})
}

// fieldsRun is how many messages eachFields reads at a time.
const fieldsRun = 1024

// fieldsBatch is the fields of a run of messages, their blocks in blocks.
type fieldsBatch struct {
	fs     []fields
	spans  []blockSpan
	blocks []session.Block // every message's blocks, one after another
}

// fieldsBatches keeps batches for the next runs: a million messages are read
// into a few.
var fieldsBatches sync.Pool

// blockSpan is where one message's blocks are in a batch's; some is false
// where the message's were nil.
type blockSpan struct {
	start, end int32
	some       bool
}

// readFields reads msgs into a batch.
func readFields(msgs []session.ContextMessage) *fieldsBatch {
	b, _ := fieldsBatches.Get().(*fieldsBatch)
	if b == nil {
		b = &fieldsBatch{}
	}
	b.fs, b.spans, b.blocks = b.fs[:0], b.spans[:0], b.blocks[:0]
	var s scanner
	for _, m := range msgs {
		fs := s.fields(m)
		b.spans = append(b.spans, blockSpan{int32(len(b.blocks)), int32(len(b.blocks) + len(fs.Content.Blocks)), fs.Content.Blocks != nil})
		b.blocks = append(b.blocks, fs.Content.Blocks...)
		fs.Content.Blocks = nil
		b.fs = append(b.fs, fs)
	}
	// The batch's blocks are where they stay only now it is read.
	for i, sp := range b.spans {
		if sp.some {
			b.fs[i].Content.Blocks = b.blocks[sp.start:sp.end:sp.end]
		}
	}
	return b
}
