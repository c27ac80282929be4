// Command gensession writes the sessions arbor's scale benchmarks run on
// (see BENCHMARKS.md):
//
//	go run ./internal/sessiongen/gensession -entries 1000000 > /tmp/chain1m.jsonl   # one chain, ~390 MB
//	go run ./internal/sessiongen/gensession -plain > /tmp/plain1m.jsonl              # short messages, ~170 MB
//	go run ./internal/sessiongen/gensession -big 50000000 > /tmp/big50m.jsonl       # one 50 MB message
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/arborlog/arbor/internal/sessiongen"
)

func main() {
	entries := flag.Int("entries", 1000000, "message entries in the chain")
	text := flag.Int("text", 24, "bytes of most texts in the chain")
	plain := flag.Bool("plain", false, "short user and assistant messages without usage (~170 bytes an entry) instead")
	big := flag.Int("big", 0, "write a short session with one message of this many bytes instead")
	flag.Parse()
	var err error
	switch {
	case *plain:
		err = sessiongen.Plain(os.Stdout, *entries)
	case *big > 0:
		err = sessiongen.BigMessage(os.Stdout, *big)
	default:
		err = sessiongen.Chain(os.Stdout, *entries, *text)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gensession:", err)
		os.Exit(1)
	}
}
