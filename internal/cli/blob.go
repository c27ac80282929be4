package cli

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/window/blob"
	"github.com/spf13/cobra"
)

// blobResult is what `arbor blob --json` prints: the content as text when it
// is UTF-8, else as base64.
type blobResult struct {
	Ref    string `json:"ref"`
	Bytes  int    `json:"bytes"`
	UTF8   bool   `json:"utf8"`
	Text   string `json:"text,omitempty"`
	Base64 string `json:"base64,omitempty"`
}

func newCmdBlob(ios *IO, g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "blob <ref>",
		Short: "Print a tool output kept outside the session log",
		Long: `Print the full output of a tool result that was cut to fit a context budget.
When a tool result is larger than its share of the budget, the context holds
its first lines and a note naming a blob: the whole output, stored once under
$ARBOR_DIR/blobs by its SHA-256. <ref> is that name (sha256:<hex>), the hex
digest, or a unique prefix of at least 8 hex digits.

Piped, the bytes are printed as stored. On a terminal, control characters and
bidirectional controls are shown as escapes (\x1b, \u202e), as everywhere.`,
		Example: `  arbor blob sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
  arbor blob 9f86d081 | less`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			st := blob.Store{Dir: filepath.Join(catalog.Home(), "blobs")}
			data, err := st.Get(args[0])
			if errors.Is(err, blob.ErrNotFound) {
				return fmt.Errorf("%w; blobs are written by 'arbor context --budget' and by agents that bound their tool results", err)
			}
			if err != nil {
				return err
			}
			if g.JSON {
				ref, _ := st.Resolve(args[0])
				res := blobResult{Ref: blob.Prefix + ref, Bytes: len(data), UTF8: utf8.Valid(data)}
				if res.UTF8 {
					res.Text = string(data)
				} else {
					res.Base64 = base64.StdEncoding.EncodeToString(data)
				}
				return ios.JSON(res)
			}
			if ios.IsTTY() {
				data = []byte(termtext.Block(string(data)))
			}
			_, err = ios.Out.Write(data)
			return err
		},
	}
}
