package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/redact"
	"github.com/arborlog/arbor/session"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	io         *IO
	g          *Global
	arg        string
	out        string // "" for the default name, "-" for stdout
	format     string
	leaf       string
	force      bool
	redact     bool
	noTools    bool
	branchOnly bool
}

// exportResult is what `arbor export --json` prints.
type exportResult struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	Bytes  int    `json:"bytes"`
}

func newCmdExport(ios *IO, g *Global) *cobra.Command {
	o := &exportOptions{io: ios, g: g}
	cmd := &cobra.Command{
		Use:   "export <session> [out]",
		Short: "Write a session as one HTML page, Markdown, or a linear JSONL session",
		Long: `Export a session for someone who does not run arbor.

--format html (the default) writes one self-contained page: the session's
tree with the active path marked, filters and search, and the selected
path's conversation with Markdown, code, tool calls, thinking, compactions
and branch summaries, images, labels and cursors; deep links to any entry;
a JSONL download; light and dark themes. It needs no network and runs no
content from the session.
--format md writes the active path (or --leaf's) as Markdown, for a pull
request or notes.
--format jsonl writes that path as a new linear pi session (new id,
parentSession pointing here) that pi and arbor open with the same context.

The output is [out], or '-' for stdout; by default it is named after the
session file (<name>.html, <name>.md, <name>.export.jsonl) in the current
folder (when that folder holds the session, name the output instead). An
existing file is never overwritten without --force, and the session file
is never written.

--redact masks API keys, tokens, passwords and private keys. --no-tools
leaves tool output out (html, md). --branch-only puts only the exported
path in the page instead of the whole tree.`,
		Example: `  arbor export my-session
  arbor export examples/refactor.jsonl /tmp/refactor.html --redact
  arbor export 0195f1c2 --format md - > notes.md
  arbor export my-session --format jsonl --leaf e1b8045d out.jsonl`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			o.arg = args[0]
			if len(args) == 2 {
				o.out = args[1]
				if o.out == "" {
					return usagef("the output file name is empty; give a path or '-' for stdout")
				}
			}
			f, err := export.ParseFormat(o.format)
			if err != nil {
				return usageError{err}
			}
			if f == export.FormatJSONL && o.noTools {
				return usagef("--no-tools cannot be used with --format jsonl: the session would lose its tool results")
			}
			if c.Flags().Changed("leaf") && o.leaf == "" {
				return usagef("--leaf needs an entry id")
			}
			if o.out == "-" && o.g.JSON {
				return usagef("--json describes the file written, and '-' writes none: the %s on stdout is the output", f)
			}
			return runExport(o, f)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "html", "html, md or jsonl")
	cmd.Flags().StringVar(&o.leaf, "leaf", "", "export the path to this entry (default: the active cursor's leaf)")
	cmd.Flags().BoolVarP(&o.force, "force", "f", false, "overwrite the output file if it exists")
	cmd.Flags().BoolVar(&o.redact, "redact", false, "mask secrets with the agent's rules and $ARBOR_DIR/config.json's redaction patterns")
	cmd.Flags().BoolVar(&o.noTools, "no-tools", false, "leave tool output out (html, md)")
	cmd.Flags().BoolVar(&o.branchOnly, "branch-only", false, "put only the exported path in the page, not the whole tree (html)")
	return cmd
}

func runExport(o *exportOptions, f export.Format) error {
	l, path, err := o.g.read(o.arg)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	opts := export.Options{Leaf: o.leaf, NoTools: o.noTools, BranchOnly: o.branchOnly, Source: abs}
	if o.redact {
		// The agent's rules and the patterns its configuration adds.
		cfgPath := configPath()
		cfg, err := agent.LoadConfig(cfgPath)
		if err != nil {
			return err
		}
		if opts.Redact, err = redact.New(cfg.Redact.Patterns); err != nil {
			return fmt.Errorf("%s: %w", cfgPath, err)
		}
	}
	if o.leaf != "" {
		if _, err := targetOrErr(l, path, o.leaf); err != nil {
			return err
		}
	}
	if o.out == "-" && o.io.IsTTY() {
		// On a terminal the page or text is shown with its control
		// characters as escapes, as everywhere; piped, it is written as made.
		var b strings.Builder
		if err := exportWrite(&b, l, path, f, opts); err != nil {
			return err
		}
		_, err := io.WriteString(o.io.Out, termtext.Block(b.String()))
		return err
	}
	if o.out == "-" {
		return exportWrite(o.io.Out, l, path, f, opts)
	}
	out, n, err := exportFile(l, path, o.out, f, opts, o.force, o.arg)
	if err != nil {
		return err
	}
	if o.g.JSON {
		return o.io.JSON(exportResult{Path: out, Format: string(f), Bytes: n})
	}
	o.io.Printf("%s\n", out)
	return nil
}

// exportWrite writes the session l (read from path) in format f to w.
func exportWrite(w io.Writer, l *session.Log, path string, f export.Format, opts export.Options) error {
	var err error
	switch f {
	case export.FormatHTML:
		err = export.HTML(w, l, opts)
	case export.FormatMarkdown:
		err = export.Markdown(w, l, opts)
	case export.FormatJSONL:
		err = export.JSONL(w, l, opts)
	}
	if errors.Is(err, export.ErrEmpty) {
		return fmt.Errorf("%s has no entries yet: nothing to export", path)
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return nil
}

// exportFile writes the session l (read from path, given as arg) in format f
// to the new file out ("" for the default name in the current folder) and
// returns its name and size. It never overwrites the session, nor another
// file unless force.
func exportFile(l *session.Log, path, out string, f export.Format, opts export.Options, force bool, arg string) (string, int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0, err
	}
	if out == "" {
		out = export.DefaultName(path, f)
		if f == export.FormatJSONL {
			out = outBase(path) + ".export.jsonl"
		}
		if sameDir(out, abs) {
			return "", 0, fmt.Errorf("the current folder holds %s: name the output file (arbor export %s <out>) to write next to the session", path, arg)
		}
	}
	n, err := writeNew(out, abs, force, func(w io.Writer) error { return exportWrite(w, l, path, f, opts) })
	return out, n, err
}

func outBase(path string) string {
	base := filepath.Base(path)
	return base[:len(base)-len(filepath.Ext(base))]
}

func sameDir(out, session string) bool {
	a, err1 := filepath.Abs(filepath.Dir(out))
	if err1 != nil {
		return false
	}
	sa, err2 := os.Stat(a)
	sb, err3 := os.Stat(filepath.Dir(session))
	return err2 == nil && err3 == nil && os.SameFile(sa, sb)
}

// writeNew has write fill a temporary file next to out and then puts it in
// place, so a reader never sees half a page. It refuses the session file
// itself, and an existing file unless force. It returns the size written.
func writeNew(out, session string, force bool, write func(io.Writer) error) (int, error) {
	if st, err := os.Stat(out); err == nil {
		if ss, err := os.Stat(session); err == nil && os.SameFile(st, ss) {
			return 0, fmt.Errorf("%s is the session file itself: choose another output file", out)
		}
		if st.IsDir() {
			return 0, fmt.Errorf("%s is a folder: give a file name", out)
		}
		if !force {
			return 0, fmt.Errorf("%s already exists: choose another name, or overwrite it with 'arbor export --force'", out)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("write %s: %w", out, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", out, err)
	}
	defer os.Remove(tmp.Name())
	cw := &countWriter{w: tmp}
	err = write(cw)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", out, cerr)
	}
	if err != nil {
		return 0, err
	}
	// A page holds the session's text: readable by its owner only, as the
	// session file is, whatever the umask.
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return 0, fmt.Errorf("write %s: %w", out, err)
	}
	if force {
		err = os.Rename(tmp.Name(), out)
	} else {
		// Link fails if out appeared meanwhile: never overwrite without --force.
		err = os.Link(tmp.Name(), out)
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", out, err)
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}
