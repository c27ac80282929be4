package store_test

import (
	"fmt"
	"os"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/store"
)

// A program that should work on files and on PostgreSQL alike writes against
// Store: create, append through the session's Log, close, then find it again.
func Example() {
	home, _ := os.MkdirTemp("", "arbor")
	defer os.RemoveAll(home)
	var st store.Store = store.OpenFiles(home) // or pgstore.Open(ctx, dsn)
	defer st.Close()

	s, err := st.Create("/home/me/project", home+"/sessions", store.Options{})
	if err != nil {
		panic(err)
	}
	s.Log().SetSessionName("rename Foo")
	s.Log().AppendUser("Rename Foo to Bar.")
	s.Log().AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("Done.")}, StopReason: session.StopEnd})
	if err := s.Close(); err != nil {
		panic(err)
	}

	latest, err := st.Latest(catalog.Scope{Dir: home + "/sessions"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q: %d messages, first %q\n", latest.Name, latest.MessageCount, latest.FirstMessage)
	// Output: "rename Foo": 2 messages, first "Rename Foo to Bar."
}
