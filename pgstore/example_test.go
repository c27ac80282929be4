package pgstore_test

import (
	"fmt"
	"os"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/store"
)

// A fleet of agents shares one database: Open it (the schema is brought up to
// date), then use it as any store.Store. This example needs a server, so it
// is compiled but not run; ARBOR_PG_URL would name one.
func ExampleOpen() {
	st, err := pgstore.Open(os.Getenv("ARBOR_PG_URL")) // postgres://user:password@host/db
	if err != nil {
		fmt.Println(err) // names the server, never the password
		return
	}
	defer st.Close()
	s, err := st.Create("/home/me/project", "", store.Options{Durability: store.Turn})
	if err != nil {
		panic(err)
	}
	s.Log().AppendUser("Rename Foo to Bar.")
	s.Log().AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("Done.")}, StopReason: session.StopEnd})
	s.Close()

	list, _ := st.List(catalog.Scope{Cwd: "/home/me/project"}, catalog.ListOptions{})
	fmt.Println(len(list), "sessions; this one is", s.Ref())
}

// Redact keeps passwords out of messages and logs.
func ExampleRedact() {
	fmt.Println(pgstore.Redact("postgres://agent:s3cret@db.internal:5432/arbor?sslmode=require"))
	// Output: postgres://agent:xxxxx@db.internal:5432/arbor?sslmode=require
}
