package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// A catalog lists and searches the sessions of a folder (or of a project,
// or of every project), reading each file once and indexing it under home.
func Example() {
	home, _ := os.MkdirTemp("", "arbor")
	defer os.RemoveAll(home)
	dir := filepath.Join(home, "sessions")
	for _, prompt := range []string{"Fix the flaky scanner test.", "Write the release notes."} {
		s, _ := jsonl.Create("/home/me/project", dir)
		s.AppendUser(prompt)
		s.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("On it.")}, StopReason: session.StopEnd})
		s.Close()
	}

	c := catalog.Open(home)
	defer c.Close()
	scope := catalog.Scope{Dir: dir}
	list, err := c.List(scope, catalog.ListOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(list), "sessions")

	q, _ := catalog.ParseQuery("scanner")
	hits, err := c.Search(scope, q, catalog.SearchOptions{Limit: 5})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Println(h.Role, h.Snippet)
	}
	// Output:
	// 2 sessions
	// user Fix the flaky scanner test.
}
