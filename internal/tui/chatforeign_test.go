package tui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/importers"
	"github.com/charmbracelet/x/ansi"
)

// The chat shows Claude Code's and Codex's calls by their command or path,
// a tool_reference result by the tool it references, an image result by its
// type and size, and no empty thinking.
func TestChatForeignTools(t *testing.T) {
	h := newChat(t)
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"claude-tools.jsonl", []string{"⚙ Bash go test ./...", "⚙ Read /work/app/main.go", "⚙ Grep func main in /work/app",
			"⚙ TodoWrite 2 items", "[tool_reference: WebFetch]", "[image: image/png, 1 KB]"}},
		{"rollout-2026-03-02T10-00-00-cccccccc-0000-4000-8000-000000000003.jsonl", []string{"⚙ shell rg -n 'func main' .",
			"⚙ local_shell_call ls -la 'my dir'", "⚙ apply_patch main.go, notes.md"}},
	} {
		s, err := importers.ReadFile(filepath.Join("..", "..", "testdata", "foreign", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, it := range itemsOfBranch(s.Log(), nil) {
			for _, l := range h.c.draw(it, 100) {
				lines = append(lines, ansi.Strip(l))
			}
		}
		screen := strings.Join(lines, "\n")
		for _, w := range tc.want {
			if !strings.Contains(screen, w) {
				t.Errorf("%s: the chat lacks %q; it shows:\n%s", tc.file, w, screen)
			}
		}
		if strings.Contains(screen, "thinking") {
			t.Errorf("%s: the chat shows empty thinking:\n%s", tc.file, screen)
		}
	}
}
