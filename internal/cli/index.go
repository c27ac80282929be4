package cli

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"strings"
	"time"

	"github.com/arborlog/arbor/catalog"
	"github.com/spf13/cobra"
)

func newCmdIndex(ios *IO, g *Global) *cobra.Command {
	var rebuild bool
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Bring the session index up to date (or rebuild it)",
		Long: `arbor keeps an index of sessions in $ARBOR_DIR/index.db so that 'arbor ls' never
reads an unchanged file again and 'arbor search' is instant. Every command keeps
it up to date by itself: a file that grew is read from where the index stopped,
a file that shrank or was replaced is read again, and a missing or damaged index
is rebuilt silently. The index is only a cache; deleting it loses nothing.

'arbor index' reads what changed now, full text included, so that the next
search does not have to. --rebuild throws the index away first and reads every
session in scope again.`,
		Example: `  arbor index --all
  arbor index --rebuild --session-dir ~/.pi/agent/sessions`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cat := g.catalog(ios)
			defer cat.Close()
			start := time.Now()
			st, err := cat.Update(g.scope(), rebuild)
			if err != nil {
				return err
			}
			if g.JSON {
				return ios.JSON(st)
			}
			ios.Printf("%s in %s; read %s (%s) in %s\n", count(st.Sessions, "session"), g.scope(), count(st.FilesRead, "file"), sizeString(st.BytesRead), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "delete the index and read every session again")
	addAllFlag(cmd, g)
	return cmd
}

// printJSON writes v as JSON.stringify would: compact, no HTML escaping, and
// U+2028 and U+2029 as they are (encoding/json escapes them), so listings and
// hits compare byte for byte with pi's output.
func printJSON(ios *IO, v any) error {
	b, err := json.Marshal(v, json.Deterministic(true), jsontext.AllowInvalidUTF8(true))
	if err != nil {
		return err
	}
	_, err = ios.Out.Write(append(b, '\n'))
	return err
}

// addAllFlag registers --all on a command that lists or searches.
func addAllFlag(cmd *cobra.Command, g *Global) {
	cmd.Flags().BoolVar(&g.All, "all", false, "every project, not only the current one")
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if g.All && g.SessionDir != "" {
			return usagef("--all and --session-dir cannot be used together")
		}
		return run(c, args)
	}
}

// catalog opens the catalog of $ARBOR_DIR, with a progress bar on stderr when
// it is a terminal and many files must be read.
func (g *Global) catalog(ios *IO) *catalog.Catalog {
	c := catalog.Open("")
	if ios.ErrIsTTY() {
		c.Progress = progressBar(ios)
	}
	return c
}

// progressBar draws "[=====>    ] 120/2000 sessions" on stderr, at most every
// 100 ms, and clears it when done. Short jobs draw nothing (on ios's clock: a
// test's stopped clock draws nothing).
func progressBar(ios *IO) func(done, total int) {
	start := ios.Now()
	var last time.Time
	drawn := false
	return func(done, total int) {
		now := ios.Now()
		if done < total && (now.Sub(start) < 300*time.Millisecond || now.Sub(last) < 100*time.Millisecond) {
			return
		}
		if done == total {
			if drawn {
				fmt.Fprint(ios.ErrOut, "\r\033[K")
			}
			return
		}
		last, drawn = now, true
		const width = 30
		n := width * done / total
		bar := strings.Repeat("=", n) + ">" + strings.Repeat(" ", width-n)
		fmt.Fprintf(ios.ErrOut, "\r[%s] %d/%d sessions indexed", bar[:width], done, total)
	}
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
