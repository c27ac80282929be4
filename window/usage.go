package window

import "github.com/arborlog/arbor/session"

// FileUsage sums the provider usage of every assistant message in l, on every
// branch: the APIUsage of Measure, without measuring a context.
func FileUsage(l *session.Log) APIUsage {
	var u APIUsage
	for _, e := range l.Entries() {
		if e.Type == session.TypeMessage && e.Role() == session.RoleAssistant {
			u.add(usageOf(e))
		}
	}
	return u
}
