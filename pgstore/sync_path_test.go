package pgstore_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
)

// TestPullPathStaysInItsFolder: the file a pull creates is named from the
// database's header; a hostile timestamp or cwd never names a place outside
// the project's folder under root.
func TestPullPathStaysInItsFolder(t *testing.T) {
	root := t.TempDir()
	for _, h := range []session.Header{
		{ID: "0195aaaa-0000-7000-8000-000000000001", Timestamp: "../../../../escape", Cwd: "/p"},
		{ID: "0195aaaa-0000-7000-8000-000000000001", Timestamp: "/abs", Cwd: "/../../x"},
		{ID: "0195aaaa-0000-7000-8000-000000000001", Timestamp: `..\..\x`, Cwd: ".."},
	} {
		p, err := pgstore.PullPath(root, h)
		if err != nil {
			t.Errorf("PullPath(%+v): %v", h, err)
			continue
		}
		if rel, err := filepath.Rel(root, p); err != nil || strings.Count(rel, string(filepath.Separator)) != 1 || strings.HasPrefix(rel, "..") {
			t.Errorf("PullPath(timestamp %q, cwd %q) = %s: not a file in a folder directly under %s", h.Timestamp, h.Cwd, p, root)
		}
	}
	if _, err := pgstore.PullPath(root, session.Header{ID: "../x", Timestamp: "t"}); err == nil {
		t.Error("PullPath with a hostile id succeeded")
	}
}
