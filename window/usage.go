package window

import (
	"bytes"

	"github.com/arborlog/arbor/session"
)

// FileUsage sums the provider usage recorded in l, on every branch: the
// APIUsage of Measure, without measuring a context.
//
// Most entries of a long session are tool results without usage; a byte
// search skips them before UsageRecord decodes anything. An entry that could
// spell "usage" with escapes (\u) is decoded in full, so the sum is exact.
func FileUsage(l *session.Log) APIUsage {
	var u APIUsage
	for _, e := range l.Entries() {
		raw := e.Raw()
		if !bytes.Contains(raw, []byte(`"usage"`)) && !bytes.Contains(raw, []byte(`\u`)) {
			continue
		}
		if key, m, ok := e.UsageRecord(); ok {
			u.add(key, m)
		}
	}
	u.finish()
	return u
}
