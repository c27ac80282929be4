package session

import (
	"strings"
	"testing"
)

func TestHeaderProjectRoundTrip(t *testing.T) {
	p := Project{GitRoot: strings.Repeat("ab", 20), Remote: "git@example.com:a/b.git"}
	l := New("/p", WithProject(p), WithID("s1"), WithTimestamp("2026-01-01T00:00:00.000Z"))
	raw := string(l.Header().Raw())
	want := `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","project":{"gitRoot":"` + p.GitRoot + `","remote":"git@example.com:a/b.git"}}`
	if raw != want {
		t.Fatalf("header\n got %s\nwant %s", raw, want)
	}
	h, ok := ParseHeader([]byte(raw))
	if !ok || h.Project != p {
		t.Fatalf("read back %+v (%v), want %+v", h.Project, ok, p)
	}
	if b := string(New("/p", WithID("s2")).Header().Raw()); strings.Contains(b, "project") {
		t.Errorf("a session without a project writes one: %s", b)
	}
}

func TestHeaderProjectUntrusted(t *testing.T) {
	for _, line := range []string{
		`{"type":"session","id":"x","project":null}`,
		`{"type":"session","id":"x","project":"abc"}`,
		`{"type":"session","id":"x","project":{"gitRoot":7,"remote":["r"]}}`,
	} {
		h, ok := ParseHeader([]byte(line))
		if !ok || !h.Project.IsZero() {
			t.Errorf("%s: project %+v, ok %v; want a header without a project", line, h.Project, ok)
		}
	}
}

func TestProjectSame(t *testing.T) {
	a := Project{GitRoot: "r1", Remote: "u"}
	for _, c := range []struct {
		q    Project
		same bool
	}{
		{Project{GitRoot: "r1"}, true},
		{Project{GitRoot: "r2", Remote: "u"}, false},
		{Project{Remote: "u"}, true},
		{Project{Remote: "v"}, false},
		{Project{}, false},
	} {
		if got := a.Same(c.q); got != c.same {
			t.Errorf("%+v.Same(%+v) = %v", a, c.q, got)
		}
	}
}
