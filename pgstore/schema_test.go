package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/store"
)

func execSQL(t *testing.T, url string, sqls ...string) {
	t.Helper()
	ctx := context.Background()
	c := connect(t, url)
	defer c.Close(ctx)
	for _, q := range sqls {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMigrations: a new database gets the schema (and says it was new),
// migrating again changes nothing, a role that may not create tables works on a migrated database
// (and gets one clear error on a new one), and a database whose schema is
// newer than this arbor is refused.
func TestMigrations(t *testing.T) {
	st, url := open(t)
	from, to, err := st.Migrate()
	if err != nil || from != 0 || to != pgstore.SchemaVersion {
		t.Fatalf("migrate a new database: %d→%d %v, want 0→%d", from, to, err, pgstore.SchemaVersion)
	}
	again, err := pgstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	from, to, err = again.Migrate()
	again.Close()
	if err != nil || from != pgstore.SchemaVersion || to != pgstore.SchemaVersion {
		t.Fatalf("migrate again: %d→%d %v", from, to, err)
	}
	role := strings.TrimPrefix(strings.Split(url, "?")[0], "postgres:///") + "_agent"
	execSQL(t, url, "CREATE ROLE "+role+" LOGIN",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+role)
	agentURL := strings.Replace(url, "user=arbor", "user="+role, 1)
	ag, err := pgstore.Open(agentURL)
	if err != nil {
		t.Fatalf("a role without CREATE on a migrated database: %v", err)
	}
	s, err := ag.Create("/p", "", store.Options{Immediate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Log().AppendMessage(message(t, "user", "as the agent role")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ag.Close()

	fresh := pgtestDB(t)
	_, err = pgstore.Open(strings.Replace(fresh, "user=arbor", "user="+role, 1))
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "arbor_schema") && !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a role without CREATE on a new database: %v", err)
	}

	execSQL(t, url, "UPDATE arbor_schema SET version = version + 1")
	if _, err := pgstore.Open(url); err == nil || !strings.Contains(err.Error(), "upgrade arbor") {
		t.Errorf("a newer schema: %v", err)
	}
}
