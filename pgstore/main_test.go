package pgstore_test

import (
	"os"
	"testing"

	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// open returns a store on a new database of the shared cluster.
func open(t testing.TB) (*pgstore.Store, string) {
	t.Helper()
	url := pgtest.Shared(t).NewDB(t)
	s, err := pgstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}

func pgtestDB(t *testing.T) string { return pgtest.Shared(t).NewDB(t) }
