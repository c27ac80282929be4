package redact_test

import (
	"fmt"

	"github.com/arborlog/arbor/redact"
)

// A Redactor replaces secrets in tool output before it is kept, and counts
// them so the caller can record how many it removed.
func Example() {
	r, err := redact.New(nil) // the built-in rules; pass patterns to add your own
	if err != nil {
		panic(err)
	}
	out, n := r.Redact("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\nok  \tproject\t1.2s")
	fmt.Println(out)
	fmt.Println(n, "secret removed")
	// Output:
	// export GITHUB_TOKEN=[REDACTED:github-token]
	// ok  	project	1.2s
	// 1 secret removed
}
