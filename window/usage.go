package window

import (
	"bytes"
	"sync"

	"github.com/arborlog/arbor/internal/inorder"
	"github.com/arborlog/arbor/session"
)

// FileUsage sums the provider usage recorded in l, on every branch: the
// APIUsage of Measure, without measuring a context.
//
// Most entries of a long session are tool results without usage; a byte
// search skips them before UsageRecord decodes anything. An entry that could
// spell "usage" with escapes (\u) is decoded in full, so the sum is exact.
func FileUsage(l *session.Log) APIUsage {
	es := l.Entries()
	var u APIUsage
	// Runs are read on every core and summed in the file's order: the same
	// additions in the same order as pi's, so the same floating-point sums.
	inorder.Do(len(es), usageRun, func(lo, hi int) *[]usageRecord {
		out, _ := usageRecords.Get().(*[]usageRecord)
		if out == nil {
			out = new([]usageRecord)
		}
		for _, e := range es[lo:hi] {
			raw := e.Raw()
			if !bytes.Contains(raw, []byte(`"usage"`)) && !bytes.Contains(raw, []byte(`\u`)) {
				continue
			}
			if key, m, ok := e.UsageRecord(); ok {
				*out = append(*out, usageRecord{key, m})
			}
		}
		return out
	}, func(rs *[]usageRecord) error {
		for _, r := range *rs {
			u.add(r.key, r.m)
		}
		clear(*rs)
		*rs = (*rs)[:0]
		usageRecords.Put(rs)
		return nil
	})
	u.finish()
	return u
}

// usageRecord is what one entry adds to the file's usage.
type usageRecord struct {
	key string
	m   session.Usage
}

// usageRecords keeps the lists of a run's records for the next runs.
var usageRecords sync.Pool

// usageRun is how many entries FileUsage reads at a time on one core. (A
// variable for tests.)
var usageRun = 4096
