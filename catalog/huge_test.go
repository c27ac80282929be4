package catalog

import (
	"runtime"
	"strings"
	"testing"
)

// hugeLine is the size of the one message of TestHugeLine: large enough to
// be read in pieces and to pass firstMax and textMax.
const hugeLine = 24 << 20

// heapAllocated returns how many bytes of Go heap f allocates.
func heapAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A session whose first message is one 24 MB line is listed and searched
// with memory of about the line's size, not many times it (the first search
// allocated 1.2 GB): the listing keeps the first MiB of the message, the
// text index the first 4 MiB of the entry's text.
func TestHugeLine(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	var sb strings.Builder
	sb.WriteString("nearstart ")
	for sb.Len() < hugeLine-len(" farend") {
		sb.WriteString("lorem ipsum dolor sit amet ")
	}
	sb.WriteString(" farend")
	text := sb.String()
	w := newSession(t, dir, "huge", "/w")
	w.user(text)
	w.assistant("ok", "", nil)

	c := Open(home)
	defer c.Close()
	scope := Scope{Dir: dir}
	var list []Info
	var err error
	listed := heapAllocated(func() { list, err = c.List(scope, ListOptions{}) })
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %v, %d sessions", err, len(list))
	}
	if got := list[0].FirstMessage; got != text[:firstMax] {
		t.Errorf("firstMessage holds %d bytes, want the message's first %d", len(got), firstMax)
	}
	if listed > 2*hugeLine {
		t.Errorf("listing a session of one %d MB line allocated %d MB", hugeLine>>20, listed>>20)
	}

	search := func(query string) []Hit {
		q, err := ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := c.Search(scope, q, SearchOptions{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	var hits []Hit
	searched := heapAllocated(func() { hits = search("nearstart") }) // builds the index
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "nearstart") {
		t.Errorf("search nearstart: %+v, want the huge message", hits)
	}
	// The line is read twice (for the index and for the hit), and the 4 MiB
	// of text it gives are indexed and matched for the snippet at a cost that
	// does not grow with the line.
	if searched > 3*hugeLine+150<<20 {
		t.Errorf("the first search of a session of one %d MB line allocated %d MB", hugeLine>>20, searched>>20)
	}
	t.Logf("list %d MB, first search %d MB", listed>>20, searched>>20)
	// Past textMax the entry's words are not searched, by the index or by a
	// scan of the file (a regular expression).
	if hits := search("farend"); len(hits) != 0 {
		t.Errorf("search farend found %d hits in text past the first %d bytes", len(hits), textMax)
	}
	if hits := search("re:far[e]nd"); len(hits) != 0 {
		t.Errorf("regex search farend found %d hits in text past the first %d bytes", len(hits), textMax)
	}
}
