package toolargs

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	cases := []struct {
		name, args, want string
	}{
		// pi's tools.
		{"bash", `{"command":"go test ./..."}`, "go test ./..."},
		{"read", `{"path":"a.go"}`, "a.go"},
		{"grep", `{"pattern":"TODO","path":"src"}`, "TODO in src"},
		// Claude Code's, in their own case and argument names.
		{"Bash", `{"command":"make","description":"Build"}`, "make"},
		{"Read", `{"file_path":"/w/main.go","offset":3}`, "/w/main.go"},
		{"MultiEdit", `{"file_path":"/w/u.go","edits":[]}`, "/w/u.go"},
		{"Glob", `{"pattern":"**/*.go"}`, "**/*.go"},
		{"NotebookEdit", `{"notebook_path":"nb.ipynb"}`, "nb.ipynb"},
		{"Task", `{"description":"Survey","prompt":"long"}`, "Survey"},
		{"TodoWrite", `{"todos":[{},{}]}`, "2 items"},
		{"WebFetch", `{"url":"https://x.test","prompt":"p"}`, "https://x.test"},
		{"WebSearch", `{"query":"q"}`, "q"},
		// Codex's: argument vectors, a shell's script, a patch's files.
		{"shell", `{"command":["bash","-lc","ls | wc -l"]}`, "ls | wc -l"},
		{"shell", `{"command":["go","test","a b"]}`, "go test 'a b'"},
		{"shell", `{"command":["echo","it's"]}`, `echo 'it'\''s'`},
		{"exec_command", `{"cmd":"git status"}`, "git status"},
		{"local_shell_call", `{"type":"exec","command":["ls"]}`, "ls"},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Update File: a.go\n*** Add File: b.go\n*** Update File: a.go\n*** End Patch"}`, "a.go, b.go"},
		{"update_plan", `{"plan":[{"step":"x"}]}`, "1 item"},
		// Unknown tools, and shapes that do not hold what the table says.
		{"mcp__x__y", `{"command":"rm"}`, ""},
		{"Bash", `{"command":["x",1]}`, ""},
		{"Bash", `not json`, ""},
		{"Read", `{"file_path":7}`, ""},
	}
	for _, c := range cases {
		if got := Summary(c.name, []byte(c.args)); got != c.want {
			t.Errorf("Summary(%s, %s) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

func TestLookupIgnoresCase(t *testing.T) {
	for _, n := range []string{"bash", "Bash", "BASH", "webFetch"} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("Lookup(%q) found nothing", n)
		}
	}
	if _, ok := Lookup("bashful"); ok {
		t.Error("Lookup(bashful) found a shape")
	}
}

// TestTableNamesOnce checks that no name is in two rows (the later would
// silently win).
func TestTableNamesOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Table() {
		for _, n := range e.Names {
			if n != strings.ToLower(n) || seen[n] {
				t.Errorf("name %q repeated or not lower case", n)
			}
			seen[n] = true
		}
	}
}

func TestImageNote(t *testing.T) {
	data := base64.StdEncoding.EncodeToString(make([]byte, 3000))
	if got, want := ImageNote("image/png", data), "[image: image/png, 3 KB]"; got != want {
		t.Errorf("ImageNote = %q, want %q", got, want)
	}
	if got, want := ImageNote("", "iVBO"), "[image: unknown type, 1 KB]"; got != want {
		t.Errorf("ImageNote = %q, want %q", got, want)
	}
}

func TestSourceNotes(t *testing.T) {
	entry := `{"type":"message","sourceBlocks":[{"type":"tool_reference","tool_name":"WebFetch"},{"type":"document"},"x"],"message":{}}`
	got := strings.Join(SourceNotes([]byte(entry)), " ")
	if want := "[tool_reference: WebFetch] [document]"; got != want {
		t.Errorf("SourceNotes = %q, want %q", got, want)
	}
	if n := SourceNotes([]byte(`{"type":"message"}`)); n != nil {
		t.Errorf("SourceNotes of a plain entry = %q", n)
	}
}
