package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

// A session in a file: Create makes a new one in a folder (written from its
// first message on), every append is one line, and ContinueRecent opens the
// newest again to carry on, as pi --continue does.
func Example() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)

	s, err := jsonl.Create("/home/me/project", dir)
	if err != nil {
		panic(err)
	}
	s.AppendUser("Rename Foo to Bar.")
	s.AppendAssistant(session.Assistant{Content: []session.Block{session.TextBlock("Done.")}, StopReason: session.StopEnd})
	if err := s.Close(); err != nil {
		panic(err)
	}

	s, err = jsonl.ContinueRecent("/home/me/project", dir)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	s.AppendUser("Thanks.")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	fmt.Println(len(files), "file,", s.Len(), "entries, cwd", s.Header().Cwd)
	// Output: 1 file, 3 entries, cwd /home/me/project
}

// Read loads a session without the writer lock and never writes to it: what
// a viewer uses while an agent may be appending.
func ExampleRead() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	s, _ := jsonl.Create("/p", dir)
	s.AppendUser("hello")
	path := s.Path()

	l, err := jsonl.Read(path) // while s still holds the file
	if err != nil {
		panic(err)
	}
	s.Close()
	fmt.Println(l.Len(), "entry:", l.Leaf().Role())
	// Output: 1 entry: user
}
