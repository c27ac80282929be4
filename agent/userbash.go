package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/arborlog/arbor/session"
)

// BashResult is what a person's own command (pi's "!command" and RPC bash)
// produced, in pi's BashResult shape.
type BashResult struct {
	Output         string `json:"output"`
	ExitCode       *int   `json:"exitCode,omitempty"` // none when cancelled
	Cancelled      bool   `json:"cancelled"`
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath,omitempty"` // the whole output, when cut
}

// Record is the bashExecution message pi records for the result
// (excludeFromContext: kept in the session, not sent to the model).
func (r BashResult) Record(command string, excludeFromContext bool) session.BashExecution {
	return session.BashExecution{Command: command, Output: r.Output, ExitCode: r.ExitCode, Cancelled: r.Cancelled,
		Truncated: r.Truncated, FullOutputPath: r.FullOutputPath, ExcludeFromContext: excludeFromContext}
}

// The limits of pi's bash executor: the output kept is its last 2000 lines
// or 50 KB; past 50 KB everything goes to a temporary file too; at most
// twice that is held in memory.
const (
	userBashMaxBytes = 50 * 1024
	userBashMaxLines = 2000
)

var ansiRE = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

// cleanOutput strips terminal escapes and carriage returns and replaces
// control characters and invalid UTF-8 (pi's sanitizeBinaryOutput).
func cleanOutput(s string) string {
	s = ansiRE.ReplaceAllString(s, "")
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return -1
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}

// userOutput collects a command's output as pi's executor does: a rolling
// window of the last 100 KB, and past 50 KB a temporary file with all of it.
type userOutput struct {
	mu        sync.Mutex
	pending   []byte // an incomplete UTF-8 sequence or escape at the end of the last write
	chunks    []string
	held      int
	total     int
	discarded bool
	file      *os.File
	onChunk   func(string)
}

func (o *userOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.total += len(p)
	data := append(o.pending, p...)
	cut := len(data)
	// Keep an unfinished rune or escape sequence for the next write.
	if i := bytes.LastIndexByte(data, 0x1b); i >= 0 && !ansiRE.Match(data[i:]) && len(data)-i < 64 {
		cut = i
	}
	for cut > 0 && cut > len(data)-utf8.UTFMax && !utf8.Valid(data[:cut]) {
		cut--
	}
	o.pending = append([]byte(nil), data[cut:]...)
	o.add(string(data[:cut]))
	return len(p), nil
}

func (o *userOutput) add(raw string) {
	text := cleanOutput(raw)
	if text == "" {
		return
	}
	if o.total > userBashMaxBytes && o.file == nil {
		if f, err := os.CreateTemp("", "arbor-bash-*.log"); err == nil {
			o.file = f
			for _, c := range o.chunks {
				_, _ = f.WriteString(c)
			}
		}
	}
	if o.file != nil {
		_, _ = o.file.WriteString(text)
	}
	o.chunks = append(o.chunks, text)
	o.held += len(text)
	for o.held > 2*userBashMaxBytes && len(o.chunks) > 1 {
		o.held -= len(o.chunks[0])
		o.chunks = o.chunks[1:]
		o.discarded = true
	}
	if o.onChunk != nil {
		o.onChunk(text)
	}
}

// tailLines keeps the last maxLines lines or maxBytes bytes of s (pi's
// truncateTail), and says whether it cut.
func tailLines(s string, maxLines, maxBytes int) (string, bool) {
	lines := strings.Split(s, "\n")
	if len(lines) <= maxLines && len(s) <= maxBytes {
		return s, false
	}
	var kept []string
	size := 0
	for i := len(lines) - 1; i >= 0 && len(kept) < maxLines; i-- {
		n := len(lines[i])
		if len(kept) > 0 {
			n++
		}
		if size+n > maxBytes {
			if len(kept) == 0 {
				line := lines[i][len(lines[i])-maxBytes:]
				for len(line) > 0 && !utf8.RuneStart(line[0]) {
					line = line[1:]
				}
				kept = append(kept, line)
			}
			break
		}
		kept = append(kept, lines[i])
		size += n
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return strings.Join(kept, "\n"), true
}

// RunUserBash runs a person's own command in cwd with bash, in its own
// process group (killed whole when ctx is cancelled), as pi's bash executor
// does: onChunk (may be nil) receives the output as it comes, cleaned of
// terminal escapes; the result keeps the last 2000 lines or 50 KB, the whole
// output going to a temporary file when it passes 50 KB.
func RunUserBash(ctx context.Context, cwd, command string, onChunk func(string)) (BashResult, error) {
	out := &userOutput{onChunk: onChunk}
	started, err := runGroup(ctx, cwd, command, out)
	if !started {
		return BashResult{}, err
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	out.add(string(out.pending))
	full := strings.Join(out.chunks, "")
	text, cut := tailLines(full, userBashMaxLines, userBashMaxBytes)
	if cut && out.file == nil {
		if f, ferr := os.CreateTemp("", "arbor-bash-*.log"); ferr == nil {
			_, _ = f.WriteString(full)
			out.file = f
		}
	}
	r := BashResult{Output: text, Truncated: cut || out.discarded}
	if out.file != nil {
		r.FullOutputPath = out.file.Name()
		_ = out.file.Close()
	}
	if ctx.Err() != nil {
		r.Cancelled = true
		return r, nil
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return r, err
	}
	r.ExitCode = &code
	return r, nil
}
