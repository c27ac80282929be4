package session

// Project is what identifies a session's project beyond its folder (SPEC §2):
// the git repository's root commit and its origin remote, where there is
// one. A session made before its project moved is found again through it.
type Project struct {
	GitRoot string `json:"gitRoot,omitempty"` // the oldest parentless commit reachable from HEAD
	Remote  string `json:"remote,omitempty"`  // origin's URL, without a password or token
}

// IsZero reports whether p identifies nothing.
func (p Project) IsZero() bool { return p.GitRoot == "" && p.Remote == "" }

// Same reports whether p and q name one project: the same root commit, or,
// when either lacks it, the same remote. Two projects with different root
// commits are different even with one remote (a history rewritten).
func (p Project) Same(q Project) bool {
	if p.GitRoot != "" && q.GitRoot != "" {
		return p.GitRoot == q.GitRoot
	}
	return p.Remote != "" && p.Remote == q.Remote
}

// WithProject records p in a new session's header (nothing when p is zero).
func WithProject(p Project) Option { return func(c *config) { c.project = p } }

// HeaderWithCwd returns the header's JSON with cwd set to cwd, every other
// member kept as it was: the header of a session re-homed to a moved folder.
func HeaderWithCwd(h Header, cwd string) []byte {
	ms, err := objectMembers(h.raw)
	if err != nil {
		h.Cwd = cwd
		return encodeHeader(h)
	}
	v := mustValue(cwd)
	found := false
	for i := range ms {
		if ms[i].name == "cwd" {
			ms[i].value, found = v, true // every duplicate: JSON.parse keeps the last
		}
	}
	if !found {
		ms = append(ms, member{"cwd", v})
	}
	return buildObject(ms)
}
