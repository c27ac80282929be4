package pgstore_test

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/store"
)

func TestMain(m *testing.M) {
	if url := os.Getenv("ARBOR_PG_CHILD_URL"); url != "" {
		os.Exit(childWriter(url, os.Getenv("ARBOR_PG_CHILD_SESSION")))
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// childWriter is a writer process: it opens the session, then appends until
// it is killed, printing each entry id once it is acknowledged.
func childWriter(url, id string) int {
	st, err := pgstore.Open(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := st.Open(id, store.Options{Durability: store.Always})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		m, _ := session.ParseMessage(fmt.Appendf(nil, `{"role":"user","content":"child %d","timestamp":1700000000000}`, i))
		e, err := s.Log().AppendMessage(m)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, e.ID)
		out.Flush()
	}
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
