package checkpoint

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
)

// Kind is what happened to a path between two snapshots.
type Kind string

const (
	Created  Kind = "created"
	Modified Kind = "modified" // content, symlink target or type
	Deleted  Kind = "deleted"
	ModeOnly Kind = "mode" // permissions only
)

// Change is one path that differs between two snapshots. From is nil for a
// created path, To for a deleted one. Added and Removed count lines of text
// files; Binary is set when either side holds a NUL byte.
type Change struct {
	Path    string
	Kind    Kind
	From    *File
	To      *File
	Added   int
	Removed int
	Binary  bool
}

// Diff lists what changes from snapshot a to snapshot b, sorted by path.
func (s *Store) Diff(a, b *Manifest) ([]Change, error) {
	var out []Change
	i, j := 0, 0
	for i < len(a.Files) || j < len(b.Files) {
		switch {
		case j == len(b.Files) || i < len(a.Files) && a.Files[i].Path < b.Files[j].Path:
			c := Change{Path: a.Files[i].Path, Kind: Deleted, From: &a.Files[i]}
			out = append(out, c)
			i++
		case i == len(a.Files) || b.Files[j].Path < a.Files[i].Path:
			out = append(out, Change{Path: b.Files[j].Path, Kind: Created, To: &b.Files[j]})
			j++
		default:
			f, t := &a.Files[i], &b.Files[j]
			i++
			j++
			switch {
			case f.Mode.Type() != t.Mode.Type() || f.Hash != t.Hash || f.Target != t.Target:
				out = append(out, Change{Path: t.Path, Kind: Modified, From: f, To: t})
			case f.Mode != t.Mode:
				out = append(out, Change{Path: t.Path, Kind: ModeOnly, From: f, To: t})
			}
		}
	}
	for k := range out {
		if err := s.countLines(&out[k]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// content is a side's bytes: nil for anything but a regular file.
func (s *Store) content(f *File) ([]byte, error) {
	if f == nil || !f.Mode.IsRegular() {
		return nil, nil
	}
	return s.Content(f.Hash)
}

func (s *Store) countLines(c *Change) error {
	if c.Kind == ModeOnly {
		return nil
	}
	a, err := s.content(c.From)
	if err != nil {
		return err
	}
	b, err := s.content(c.To)
	if err != nil {
		return err
	}
	if isBinary(a) || isBinary(b) {
		c.Binary = true
		return nil
	}
	for _, op := range lineDiff(splitLines(a), splitLines(b)) {
		switch op.kind {
		case '+':
			c.Added++
		case '-':
			c.Removed++
		}
	}
	return nil
}

func isBinary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 }

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type lineOp struct {
	kind byte // ' ', '-', '+'
	text string
}

// lineDiff is a longest-common-subsequence diff after the common prefix and
// suffix are set aside; a middle too large for the table is shown as all
// removed and all added (the counts are then an upper bound).
func lineDiff(a, b []string) []lineOp {
	var ops []lineOp
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, lineOp{' ', a[p]})
		p++
	}
	sa, sb := len(a), len(b)
	for sa > p && sb > p && a[sa-1] == b[sb-1] {
		sa--
		sb--
	}
	ma, mb := a[p:sa], b[p:sb]
	if len(ma)*len(mb) > 1<<22 {
		for _, l := range ma {
			ops = append(ops, lineOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, lineOp{'+', l})
		}
	} else {
		// lcs[i][j]: length of the LCS of ma[i:] and mb[j:].
		w := len(mb) + 1
		lcs := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, lineOp{' ', ma[i]})
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				ops = append(ops, lineOp{'-', ma[i]})
				i++
			default:
				ops = append(ops, lineOp{'+', mb[j]})
				j++
			}
		}
	}
	for k := sa; k < len(a); k++ {
		ops = append(ops, lineOp{' ', a[k]})
	}
	return ops
}

// Patch renders a change as a unified diff (three lines of context), the
// form `git diff` prints; binary files, symlinks and modes get one line.
func (s *Store) Patch(c Change) (string, error) {
	var sb strings.Builder
	from, to := "a/"+c.Path, "b/"+c.Path
	if c.From == nil {
		from = "/dev/null"
	}
	if c.To == nil {
		to = "/dev/null"
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	if c.From != nil && c.To != nil && c.From.Mode != c.To.Mode {
		fmt.Fprintf(&sb, "mode %v -> %v\n", c.From.Mode, c.To.Mode)
	}
	if c.Kind == ModeOnly {
		return sb.String(), nil
	}
	for _, f := range []*File{c.From, c.To} {
		if f != nil && f.Mode&fs.ModeSymlink != 0 {
			fmt.Fprintf(&sb, "symlink %s -> %s\n", f.Path, f.Target)
		}
	}
	a, err := s.content(c.From)
	if err != nil {
		return "", err
	}
	b, err := s.content(c.To)
	if err != nil {
		return "", err
	}
	if isBinary(a) || isBinary(b) {
		fmt.Fprintf(&sb, "Binary files differ (%d -> %d bytes)\n", len(a), len(b))
		return sb.String(), nil
	}
	writeHunks(&sb, lineDiff(splitLines(a), splitLines(b)))
	return sb.String(), nil
}

func writeHunks(sb *strings.Builder, ops []lineOp) {
	const ctx = 3
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk runs from ctx lines before this change to ctx lines after
		// the last change that is at most 2*ctx lines from the next.
		start := max(0, k-ctx)
		end := k
		for e := k; e < len(ops); e++ {
			if ops[e].kind != ' ' {
				end = e
			} else if e-end > 2*ctx {
				break
			}
		}
		end = min(len(ops), end+ctx+1)
		aLine, bLine := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				aLine++
			}
			if op.kind != '-' {
				bLine++
			}
		}
		na, nb := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(sb, "@@ -%d,%d +%d,%d @@\n", aLine, na, bLine, nb)
		for _, op := range ops[start:end] {
			sb.WriteByte(op.kind)
			sb.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = end
	}
}
