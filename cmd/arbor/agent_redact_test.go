package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/redact/redacttest"
)

// TestAgentRedactsCorpus pushes redact's corpus through the bash and read
// tools of a print-mode run: no secret of it may reach the session file, a
// blob (the result is cut past maxResultBytes and kept whole as a blob),
// the --mode json events on stdout, or any request the provider received;
// and the look-alikes must reach the model unchanged.
func TestAgentRedactsCorpus(t *testing.T) {
	cases, err := redacttest.Positives()
	if err != nil {
		t.Fatal(err)
	}
	negatives, err := redacttest.Negatives()
	if err != nil {
		t.Fatal(err)
	}
	var corpus strings.Builder
	for _, c := range cases {
		corpus.WriteString(c.Text)
	}
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			w.config(`{"maxResultBytes": 4000}`)
			if err := os.WriteFile(filepath.Join(w.project, "secrets.txt"), []byte(corpus.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.project, "lookalikes.txt"), []byte(strings.Join(negatives, "")), 0o600); err != nil {
				t.Fatal(err)
			}
			s := agenttest.New(t, kind,
				agenttest.Reply{Calls: []agenttest.Call{
					{ID: "call_1", Name: "bash", Args: `{"command":"cat secrets.txt"}`},
					{ID: "call_2", Name: "read", Args: `{"path":"secrets.txt"}`},
					{ID: "call_3", Name: "bash", Args: `{"command":"cat lookalikes.txt"}`},
				}},
				agenttest.Reply{Text: "read them"})
			r := w.run("", with(s, "-p", "--mode", "json", "look at the secrets")...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			session, err := os.ReadFile(w.only())
			if err != nil {
				t.Fatal(err)
			}
			blobs := readAll(t, filepath.Join(w.home, "arbor", "blobs"))
			if len(blobs) == 0 {
				t.Fatal("no blob was written: the test does not cover blobs")
			}
			places := map[string]string{"the session file": string(session), "stdout (--mode json)": r.stdout}
			for i, req := range reqs {
				places["request "+string(rune('1'+i))] = string(req.Raw)
			}
			for name, data := range blobs {
				places["blob "+name] = data
			}
			for _, c := range cases {
				escaped, _ := json.Marshal(c.Secret)
				for where, data := range places {
					if strings.Contains(data, c.Secret) || strings.Contains(data, string(escaped[1:len(escaped)-1])) {
						t.Errorf("positives.txt:%d (%s) reached %s", c.Line, c.Rule, where)
					}
				}
			}
			// The results reached the model, redacted, with the look-alikes whole.
			msgs := s.Messages(reqs[1])
			var results []string
			for _, m := range msgs {
				if m.ID != "" {
					results = append(results, m.Text)
				}
			}
			if len(results) != 3 || !strings.Contains(results[0], "[REDACTED:secret-assignment]") || !strings.Contains(results[1], "arbor blob sha256:") {
				t.Fatalf("tool results sent: %d, the first %.300q", len(results), results)
			}
			if want := strings.Join(negatives, ""); strings.TrimSuffix(results[2], "\n") != strings.TrimSuffix(want, "\n") {
				t.Errorf("the look-alikes changed on their way to the model:\n%s", results[2])
			}
			var blobText string
			for _, data := range blobs {
				blobText += data
			}
			for _, rule := range []string{"private-key", "pypi-token", "url-credentials"} {
				if !strings.Contains(blobText, "[REDACTED:"+rule+"]") {
					t.Errorf("the blobs do not hold the redacted output (%s)", rule)
				}
			}
		})
	}
}

// readAll returns the files under dir by name.
func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(p)] = string(data)
		}
		return nil
	})
	return out
}
