// Command arbor shows, searches and edits coding-agent sessions (pi's format).
package main

import (
	"os"

	"github.com/arborlog/arbor/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
