package main

import (
	"strings"
	"testing"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/compaction"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
)

const summaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"

// checkCompacted asserts that a request went out with the summary in place
// of the compacted history and the newest prompt kept.
func checkCompacted(t *testing.T, s *agenttest.Server, req agenttest.Request, summary, prompt string) {
	t.Helper()
	var got []string
	for _, m := range s.Messages(req) {
		if m.Role != "system" {
			got = append(got, m.Role+":"+m.Text)
		}
	}
	if len(got) != 2 || got[0] != "user:"+summaryPrefix+summary+"\n</summary>" || got[1] != "user:"+prompt {
		t.Errorf("request after compaction: %q", got)
	}
}

func summaryRequest(t *testing.T, s *agenttest.Server, req agenttest.Request) {
	t.Helper()
	sys := req.Body["system"]
	if s.Kind == "openai" {
		msgs := s.Messages(req)
		if len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Text != compaction.SystemPrompt || !strings.Contains(msgs[1].Text, "<conversation>") {
			t.Errorf("summary request: %+v", msgs)
		}
		return
	}
	if list, _ := sys.([]any); len(list) != 1 {
		t.Errorf("summary request system: %v", sys)
	}
}

func TestAgentCompactsAtThreshold(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			w.config(`{"compaction":{"keepRecentTokens":1}}`)
			s := agenttest.New(t, kind, agenttest.Reply{Text: "A1", Input: 2900, Output: 100})
			if r := w.run("", with(s, "-p", "Q1")...); r.code != 0 {
				t.Fatal(r.stderr)
			}
			s.Add(agenttest.Reply{Text: "## Goal\nthe summary", Input: 700, Output: 30}, agenttest.Reply{Text: "A2"})
			r := w.run("", with(s, "-p", "-c", "--tools", "ls", "--context-window", "3000", "--reserve", "500", "Q2")...)
			if r.code != 0 || r.stdout != "A2\n" {
				t.Fatalf("%d %q %q", r.code, r.stdout, r.stderr)
			}
			reqs := s.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			summaryRequest(t, s, reqs[1])
			checkCompacted(t, s, reqs[2], "## Goal\nthe summary", "Q2")
			if got := strings.Join(roles(t, w.only()), " "); got != "model_change thinking_level_change user assistant user compaction assistant" {
				t.Errorf("entries: %s", got)
			}
			// The compaction records what its summary cost, as pi 1.6.0 does.
			l, err := jsonl.Read(w.only())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range l.Entries() {
				if e.Type == session.TypeCompaction && !strings.Contains(string(e.Raw()), `"usage":{"input":700,"output":30,`) {
					t.Errorf("compaction without the summary's usage: %s", e.Raw())
				}
			}
		})
	}
}

func TestAgentCompactsAfterOverflow(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			w.config(`{"compaction":{"keepRecentTokens":1}}`)
			s := agenttest.New(t, kind, agenttest.Reply{Text: "A1"})
			if r := w.run("", with(s, "-p", "Q1")...); r.code != 0 {
				t.Fatal(r.stderr)
			}
			s.Add(agenttest.Reply{Overflow: true}, agenttest.Reply{Text: "the summary"}, agenttest.Reply{Text: "A2"})
			r := w.run("", with(s, "-p", "-c", "--mode", "json", "Q2")...)
			if r.code != 0 {
				t.Fatalf("%d %q %q", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, `{"type":"compaction_start","reason":"overflow"}`) || !strings.Contains(r.stdout, `"willRetry":true`) {
				t.Errorf("compaction events missing:\n%s", r.stdout)
			}
			reqs := s.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			summaryRequest(t, s, reqs[2])
			checkCompacted(t, s, reqs[3], "the summary", "Q2")
			if got := strings.Join(roles(t, w.only()), " "); got != "model_change thinking_level_change user assistant user compaction assistant" {
				t.Errorf("entries (the overflow is not kept): %s", got)
			}
			// A second overflow right after the retry is an error: compaction runs once.
			s.Add(agenttest.Reply{Overflow: true}, agenttest.Reply{Text: "again"}, agenttest.Reply{Overflow: true})
			r = w.run("", with(s, "-p", "-c", "Q3")...)
			if r.code != 1 || !strings.Contains(r.stderr, "400") {
				t.Errorf("second overflow: %d %q", r.code, r.stderr)
			}
			// Text mode says what happened before the failure.
			for _, line := range []string{"arbor: the request did not fit the model's context window; compacting the session to send it again\n",
				"arbor: compacted: the older part of the session ("} {
				if !strings.Contains(r.stderr, line) {
					t.Errorf("stderr does not say %q:\n%s", line, r.stderr)
				}
			}
		})
	}
}
