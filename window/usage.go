package window

import "github.com/arborlog/arbor/session"

// FileUsage sums the provider usage recorded in l, on every branch: the
// APIUsage of Measure, without measuring a context.
func FileUsage(l *session.Log) APIUsage {
	var u APIUsage
	for _, e := range l.Entries() {
		if key, m, ok := e.UsageRecord(); ok {
			u.add(key, m)
		}
	}
	u.finish()
	return u
}
