package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/arborlog/arbor/session"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

const (
	readMaxLines = 2000
	readMaxBytes = 50 * 1024
)

var readTool = Tool{
	Name:        "read",
	Description: fmt.Sprintf("Read the contents of a file. Supports text files and images (jpg, png, gif, webp). For text files, output is cut at %d lines or %dKB (whichever comes first). Use offset/limit for large files.", readMaxLines, readMaxBytes/1024),
	Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}},"required":["path"]}`),
	Run:         runRead,
}

var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// isBinary reports whether data looks like a binary file: a NUL byte or
// invalid UTF-8 in its first 8 KB.
func isBinary(data []byte) bool {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n == 1 && len(head) > 3 {
			return true
		}
		head = head[n:]
	}
	return false
}

// notRegular says why a path the model gave is not read or written: only
// regular files are. A named pipe would hold the call (and the run, deaf to
// abort and Ctrl-C) until another program opened its other end, and a device
// such as /dev/zero never ends.
func notRegular(fi os.FileInfo) error {
	what := "not a regular file"
	switch t := fi.Mode().Type(); {
	case t&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case t&os.ModeDevice != 0:
		what = "a device, not a regular file"
	case t&os.ModeSocket != 0:
		what = "a socket, not a regular file"
	}
	return errors.New(what)
}

// readRegular reads the regular file p. It opens p without waiting (a FIFO
// opens at once with O_NONBLOCK) and refuses what the descriptor is not a
// regular file, so nothing the path names blocks or floods the read.
func readRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(fi)
	}
	return io.ReadAll(f)
}

// writeRegular replaces the content of p (created with perm when it does
// not exist), only when it is a regular file: opening a FIFO to write would
// wait for a reader.
func writeRegular(p string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if err != nil {
		if fi, serr := os.Stat(p); serr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return notRegular(fi) // a FIFO without a reader: ENXIO
		}
		return err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(fi)
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func runRead(_ context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Path   string   `json:"path"`
		Offset *float64 `json:"offset"`
		Limit  *float64 `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if a.Path == "" {
		return errorOutput("read: path is required")
	}
	p := env.resolve(a.Path)
	fi, err := os.Stat(p)
	if err != nil {
		return errorOutput("read %s: %v", a.Path, pathErr(err))
	}
	if fi.IsDir() {
		return errorOutput("read %s: is a directory (use ls)", a.Path)
	}
	data, err := readRegular(p)
	if err != nil {
		return errorOutput("read %s: %v", a.Path, pathErr(err))
	}
	if mime, ok := imageTypes[strings.ToLower(filepath.Ext(p))]; ok {
		return ToolOutput{Text: fmt.Sprintf("Read image file [%s]", mime), Images: []session.Block{{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: mime}}, File: p}
	}
	if isBinary(data) {
		return errorOutput("read %s: a binary file of %d bytes; it cannot be shown as text", a.Path, len(data))
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := 0
	if a.Offset != nil && *a.Offset > 1 {
		start = int(*a.Offset) - 1
	}
	if start >= len(lines) && len(lines) > 0 {
		return errorOutput("read %s: offset %d is beyond the end of the file (%d lines)", a.Path, start+1, len(lines))
	}
	end := len(lines)
	if a.Limit != nil && *a.Limit > 0 {
		end = min(end, start+int(*a.Limit))
	}
	var b strings.Builder
	shown := start
	for i := start; i < end; i++ {
		if i-start >= readMaxLines || b.Len()+len(lines[i])+1 > readMaxBytes {
			break
		}
		b.WriteString(lines[i])
		b.WriteByte('\n')
		shown = i + 1
	}
	text := b.String()
	if shown < end {
		if shown == start {
			return errorOutput("read %s: line %d is longer than %dKB; read it with bash (for example: sed -n '%dp' %s | head -c %d)", a.Path, start+1, readMaxBytes/1024, start+1, a.Path, readMaxBytes)
		}
		text += fmt.Sprintf("\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", start+1, shown, len(lines), shown+1)
	} else if shown < len(lines) {
		text += fmt.Sprintf("\n[%d more lines in file. Use offset=%d to continue.]", len(lines)-shown, shown+1)
	}
	return ToolOutput{Text: text, File: p}
}

func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

var writeTool = Tool{
	Name:         "write",
	Description:  "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
	Parameters:   json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},"content":{"type":"string","description":"Content to write to the file"}},"required":["path","content"]}`),
	Run:          runWrite,
	ChangesFiles: true,
}

func runWrite(_ context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if a.Path == "" {
		return errorOutput("write: path is required")
	}
	p := env.resolve(a.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return errorOutput("write %s: %v", a.Path, pathErr(err))
	}
	if err := writeRegular(p, []byte(a.Content), 0o644); err != nil {
		return errorOutput("write %s: %v", a.Path, pathErr(err))
	}
	return ToolOutput{Text: fmt.Sprintf("Successfully wrote %d bytes to %s", len(a.Content), a.Path)}
}

var editTool = Tool{
	Name:        "edit",
	Description: "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},` +
		`"edits":{"type":"array","description":"One or more targeted replacements, each matched against the original file.","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Exact text for one targeted replacement. It must be unique in the original file."},"newText":{"type":"string","description":"Replacement text for this targeted edit."}},"required":["oldText","newText"]}}},"required":["path","edits"]}`),
	Run:          runEdit,
	ChangesFiles: true,
}

type replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

func runEdit(_ context.Context, env *ToolEnv, raw json.RawMessage) ToolOutput {
	var a struct {
		Path  string        `json:"path"`
		Edits []replacement `json:"edits"`
		// pi before 1.x sent one replacement at the top level.
		OldText *string `json:"oldText"`
		NewText *string `json:"newText"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorOutput("%v", err)
	}
	if a.OldText != nil && a.NewText != nil {
		a.Edits = append(a.Edits, replacement{*a.OldText, *a.NewText})
	}
	if a.Path == "" || len(a.Edits) == 0 {
		return errorOutput("edit: path and at least one edit (oldText, newText) are required")
	}
	p := env.resolve(a.Path)
	data, err := readRegular(p)
	if err != nil {
		return errorOutput("edit %s: %v", a.Path, pathErr(err))
	}
	if isBinary(data) {
		return errorOutput("edit %s: a binary file; it cannot be edited as text", a.Path)
	}
	text := string(data)
	type span struct{ at, end, i int }
	var spans []span
	for i, e := range a.Edits {
		if e.OldText == "" {
			return errorOutput("edit %s: edits[%d].oldText is empty", a.Path, i)
		}
		n := strings.Count(text, e.OldText)
		switch {
		case n == 0:
			return errorOutput("Could not find edits[%d].oldText in %s. The old text must match exactly including all whitespace and newlines; read the file again to see its current content.", i, a.Path)
		case n > 1:
			return errorOutput("Found %d occurrences of edits[%d].oldText in %s. The text must be unique; add more surrounding context.", n, i, a.Path)
		}
		at := strings.Index(text, e.OldText)
		spans = append(spans, span{at, at + len(e.OldText), i})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].at < spans[j].at })
	for k := 1; k < len(spans); k++ {
		if spans[k].at < spans[k-1].end {
			return errorOutput("edit %s: edits[%d] and edits[%d] overlap; merge them into one edit", a.Path, spans[k-1].i, spans[k].i)
		}
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s.at])
		b.WriteString(a.Edits[s.i].NewText)
		last = s.end
	}
	b.WriteString(text[last:])
	fi, _ := os.Stat(p)
	mode := os.FileMode(0o644)
	if fi != nil {
		mode = fi.Mode().Perm()
	}
	if err := writeRegular(p, []byte(b.String()), mode); err != nil {
		return errorOutput("edit %s: %v", a.Path, pathErr(err))
	}
	return ToolOutput{Text: fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(spans), a.Path)}
}
