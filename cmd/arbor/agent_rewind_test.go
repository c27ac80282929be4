package main

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/google/go-cmp/cmp"
)

type fileState struct {
	Mode   fs.FileMode
	Data   string
	Target string
}

func projectTree(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		st := fileState{Mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			st.Target, err = os.Readlink(p)
		case info.Mode().IsRegular():
			b, rerr := os.ReadFile(p)
			st.Data, err = string(b), rerr
		}
		out[rel] = st
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// userEntries lists the ids of a session file's user messages.
func userEntries(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "message" && e.Message.Role == "user" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func TestAgentRewindRestoresTheTreeAndUndoes(t *testing.T) {
	w := newWorld(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(w.home, "arbor"), 0o755))
	must(os.WriteFile(filepath.Join(w.home, "arbor", "config.json"), []byte(`{"checkpoints":{"enabled":true}}`), 0o644))
	must(os.WriteFile(filepath.Join(w.project, "a.txt"), []byte("one\ntwo\n"), 0o644))
	must(os.MkdirAll(filepath.Join(w.project, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(w.project, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	s := agenttest.New(t, "openai",
		agenttest.Reply{Calls: []agenttest.Call{
			{ID: "c1", Name: "write", Args: `{"path":"b.txt","content":"written\n"}`},
			{ID: "c2", Name: "edit", Args: `{"path":"a.txt","edits":[{"oldText":"two","newText":"TWO"}]}`},
			{ID: "c3", Name: "bash", Args: `{"command":"sed -i s/one/ONE/ a.txt && mkdir -p d/e && printf '\\000\\001' > d/e/bin && ln -s a.txt link && chmod +x b.txt"}`},
		}},
		agenttest.Reply{Text: "first done"},
		agenttest.Reply{Calls: []agenttest.Call{
			{ID: "c4", Name: "bash", Args: `{"command":"rm link && mv b.txt d/moved.txt && echo HEAD-by-agent > outside-never"}`},
		}},
		agenttest.Reply{Text: "second done"})
	r := w.run("", with(s, "-p", "first")...)
	if r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	// The user edits a file between turns.
	must(os.WriteFile(filepath.Join(w.project, "a.txt"), []byte("user edit\n"), 0o644))
	atSecond := projectTree(t, w.project)
	r = w.run("", with(s, "-c", "-p", "second")...)
	if r.code != 0 {
		t.Fatalf("second run: %d %s", r.code, r.stderr)
	}
	final := projectTree(t, w.project)
	files, _ := filepath.Glob(filepath.Join(w.home, "arbor", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions: %v", files)
	}
	users := userEntries(t, files[0])
	if len(users) != 2 {
		t.Fatalf("user entries: %v", users)
	}

	r = w.run("", "rewind", files[0], users[1], "--dry-run")
	if r.code != 0 || r.stdout == "" {
		t.Fatalf("dry run: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if d := cmp.Diff(final, projectTree(t, w.project)); d != "" {
		t.Fatalf("--dry-run changed the folder:\n%s", d)
	}
	r = w.run("", "rewind", files[0], users[1])
	if r.code != 0 {
		t.Fatalf("rewind: %d %s", r.code, r.stderr)
	}
	if d := cmp.Diff(atSecond, projectTree(t, w.project)); d != "" {
		t.Errorf("after rewind to the second message (-want +got):\n%s", d)
	}
	if r.stdout == "" || r.stdout[len(r.stdout)-7:] != "second\n" {
		t.Errorf("rewind did not print the message's text: %q", r.stdout)
	}
	r = w.run("", "rewind", files[0], "--undo")
	if r.code != 0 {
		t.Fatalf("undo: %d %s", r.code, r.stderr)
	}
	if d := cmp.Diff(final, projectTree(t, w.project)); d != "" {
		t.Errorf("after --undo (-want +got):\n%s", d)
	}
}
