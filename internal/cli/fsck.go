package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/spf13/cobra"
)

// FsckReport is what `arbor fsck --json` prints (SPEC §10): the damage found in
// a session file, line numbers counting from 1.
type FsckReport struct {
	OK             bool     `json:"ok"`
	Path           string   `json:"path"`
	Version        int      `json:"version"`
	Lines          int      `json:"lines"`
	Entries        int      `json:"entries"`
	BadLines       []int    `json:"badLines"`
	TornTail       bool     `json:"tornTail"`
	DuplicateIDs   []string `json:"duplicateIds"`
	Cycles         []string `json:"cycles"`
	Orphans        []string `json:"orphans"`
	MissingNewline bool     `json:"missingNewline"`
	NoHeader       bool     `json:"noHeader"`
	ExtraHeaders   []int    `json:"extraHeaders"`
	ReadOnly       bool     `json:"readOnly"`
	// Empty is a file with no line but blank ones: no session yet, not damage
	// (SPEC §8): the first append writes a header there.
	Empty bool `json:"empty"`
	// Repaired lists what --repair did, one sentence each.
	Repaired []string `json:"repaired,omitempty"`
}

func fsckReportOf(path string, l *session.Log) FsckReport {
	r := l.Report()
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	lines := func(n []int) []int {
		if n == nil {
			return []int{}
		}
		return n
	}
	if r.NoHeader && r.Entries == 0 && len(r.BadLines) == 0 && !r.TornTail {
		return FsckReport{OK: true, Empty: true, Path: path, Version: r.Version, Lines: r.Lines,
			BadLines: []int{}, DuplicateIDs: []string{}, Cycles: []string{}, Orphans: []string{}, ExtraHeaders: []int{}}
	}
	return FsckReport{
		OK: r.Clean(), Path: path, Version: r.Version, Lines: r.Lines, Entries: r.Entries,
		BadLines: lines(r.BadLines), TornTail: r.TornTail, DuplicateIDs: orEmpty(r.DuplicateIDs),
		Cycles: orEmpty(r.Cycles), Orphans: orEmpty(r.Orphans), MissingNewline: r.MissingNewline,
		NoHeader: r.NoHeader, ExtraHeaders: lines(r.ExtraHeaders), ReadOnly: l.ReadOnly() != nil,
	}
}

// repairable reports whether --repair would change the file.
func (r *FsckReport) repairable() bool { return r.TornTail || r.MissingNewline || r.NoHeader }

func newCmdFsck(ios *IO, g *Global) *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "fsck <session>",
		Short: "Check a session file for damage, and repair it without losing a byte",
		Long: `Check a session file: lines that do not parse (by line number, from 1), a torn
last line, a missing final newline, a missing or repeated header, duplicate
entry ids, parent loops and entries whose parent is unknown.

With --repair, apply now the repairs arbor makes to a damaged file, under the
writer lock, never deleting a byte:
  - a torn last line is moved to <file>.torn, if the file has stopped growing
    (an append never moves it: it ends the fragment with a newline in place,
    since another program may still be writing it);
  - a complete last line missing its newline gets one;
  - a file without a header keeps its entries under a new header, the original
    saved as <file>.bak (an old-version file is migrated, saved as <file>.v<N>.bak).
A file of which no line is a session header or entry is not a session: fsck
reports it, and nothing in arbor writes to it.
Unreadable lines, duplicate ids, loops and unknown parents stay in the file:
loading skips or works around them, and fsck keeps reporting them.

Exit status: 0 when the file is sound (after --repair: when the repair left it
sound), 1 when damage is found or the file cannot be read or repaired, 2 for
bad usage.`,
		Example: `  arbor fsck notes.jsonl
  arbor fsck 0195f1c2 --json
  arbor fsck notes.jsonl --repair`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runFsck(ios, g, args[0], repair)
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "repair what can be repaired without deleting a byte (sidecar files keep the originals)")
	return cmd
}

func runFsck(ios *IO, g *Global, arg string, repair bool) error {
	path, err := g.resolve(arg)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such session file; check the path, or run 'arbor ls' to see sessions", path)
	}
	var repaired []string
	if repair {
		if err := refuseForeign(path); err != nil {
			return err
		}
		// The session is loaded twice, to repair it and to check it after;
		// the collector must not let the heap grow to twice what is live (as
		// a read, boundHeap).
		boundHeap(fileSize(path))
		s, err := jsonl.Open(path)
		if errors.Is(err, jsonl.ErrNotSession) {
			// Not a session: nothing to repair, and arbor writes nothing to it. Report it as it is.
			s = nil
		} else if err != nil {
			return fmt.Errorf("repair %s: %w", path, err)
		}
		if s != nil {
			repaired, err = s.Repair()
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("repair %s: %w", path, err)
			}
		}
	}
	if ok, err := fsckForeign(ios, g, path); ok {
		return err
	}
	if repair {
		// The repair's load is garbage now. The check's read allocates the
		// file's bytes at once, before the collector could free it: on a
		// million entries the two would be over 1 GB together.
		runtime.GC()
	}
	l, err := jsonl.Read(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	rep := fsckReportOf(path, l)
	rep.Repaired = repaired
	if g.JSON {
		if err := ios.JSON(rep); err != nil {
			return err
		}
	} else {
		printFsck(ios, &rep)
	}
	if rep.OK {
		return nil
	}
	if rep.NoHeader && rep.Entries == 0 && rep.Lines > 0 {
		return fmt.Errorf("%s is not a session file: no line of it is a session header or entry; arbor leaves it as it is", path)
	}
	if rep.repairable() {
		return fmt.Errorf("%s is damaged; 'arbor fsck --repair %s' repairs it, keeping the original bytes in sidecar files", path, path)
	}
	return fmt.Errorf("%s is damaged; loading skips or works around what is listed, and the bytes stay in the file", path)
}

func printFsck(ios *IO, r *FsckReport) {
	for _, a := range r.Repaired {
		ios.Printf("repaired: %s\n", a)
	}
	state := "ok"
	switch {
	case r.Empty:
		state = "empty, no session yet (the first append writes its header)"
	case !r.OK:
		state = "damaged"
	}
	ios.Printf("%s: %s (format version %d, %s, %s)\n", r.Path, state, r.Version, count(r.Lines, "line"), count(r.Entries, "entry"))
	if r.ReadOnly {
		ios.Printf("  format version %d is newer than this arbor writes: it opens read-only\n", r.Version)
	}
	if r.NoHeader {
		if r.Entries == 0 {
			ios.Printf("  no line is a session header or entry: this is not a session file, and arbor does not write to it\n")
		} else {
			ios.Printf("  no session header: --repair keeps the entries under a new one (original saved as .bak)\n")
		}
	}
	if len(r.BadLines) > 0 {
		ios.Printf("  unreadable lines (skipped when loading, kept in the file): %s\n", joinInts(r.BadLines))
	}
	if len(r.ExtraHeaders) > 0 {
		ios.Printf("  extra session headers (ignored): lines %s\n", joinInts(r.ExtraHeaders))
	}
	if r.TornTail {
		ios.Printf("  torn last line (a write cut short): --repair moves it to .torn; an append ends it in place\n")
	}
	if r.MissingNewline {
		ios.Printf("  the last line lacks its newline: --repair or the next append adds it\n")
	}
	if len(r.DuplicateIDs) > 0 {
		ios.Printf("  duplicate ids (the first entry with each id is used): %s\n", strings.Join(r.DuplicateIDs, ", "))
	}
	if len(r.Cycles) > 0 {
		ios.Printf("  parent loops, cut at: %s\n", strings.Join(r.Cycles, ", "))
	}
	if len(r.Orphans) > 0 {
		ios.Printf("  entries whose parent is unknown (shown as roots): %s\n", strings.Join(r.Orphans, ", "))
	}
}

// joinInts lists line numbers for a person: runs as ranges ("3-9"), and
// after 20 items the count of the rest.
func joinInts(ns []int) string {
	const shown = 20
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, fmt.Sprint(ns[i]))
		case j == i+1:
			parts = append(parts, fmt.Sprint(ns[i]), fmt.Sprint(ns[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	if len(parts) > shown {
		rest := 0
		for _, p := range parts[shown:] {
			var a, b int
			if n, _ := fmt.Sscanf(p, "%d-%d", &a, &b); n == 2 {
				rest += b - a + 1
			} else {
				rest++
			}
		}
		return strings.Join(parts[:shown], ", ") + fmt.Sprintf(" and %d more (--json lists them all)", rest)
	}
	return strings.Join(parts, ", ")
}
