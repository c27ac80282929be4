package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/store"
)

// FuzzPiLines feeds pi's RPC mode arbitrary input: every line it writes is
// JSON, and every command line that is not blank gets exactly one response.
func FuzzPiLines(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","type":"get_state"}`,
		`{"id":1,"type":"get_entries","since":"x"}` + "\n" + `{"type":"set_session_name","name":"n"}`,
		`{"type":"prompt","message":"hi"}` + "\r\n" + `not json`,
		`{"id":{"a":[1]},"type":"fork","entryId":"\u2028"}`,
		`[1,2]` + "\n" + `"str"` + "\n" + `null`,
		`{"type":"get_tree"}{"type":"abort"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// bash runs its command: a fuzzer's input is not run (TestPiBash
		// covers the command).
		for _, l := range strings.Split(in, "\n") {
			var head struct{ Type string }
			if json.Unmarshal([]byte(l), &head) == nil && head.Type == "bash" {
				t.Skip()
			}
		}
		home := t.TempDir()
		st := store.OpenFiles(home)
		defer st.Close()
		cfg := Config{Store: st, Scope: catalog.Scope{Dir: home}, Cwd: home, Where: home,
			NewAgent: func(string) (*agent.Agent, error) { return nil, errors.New("no model in this test") }}
		var out bytes.Buffer
		if err := Pi(cfg, strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		responses := 0
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("output line %q is not JSON: %v", l, err)
			}
			if m["type"] == "response" {
				responses++
			}
		}
		commands := 0
		for _, l := range strings.Split(in, "\n") {
			if strings.TrimSpace(strings.TrimSuffix(l, "\r")) != "" {
				commands++
			}
		}
		if responses != commands {
			t.Fatalf("%d command lines, %d responses:\n%s", commands, responses, out.String())
		}
	})
}

type nopWriteCloser struct{ *bytes.Buffer }

func (nopWriteCloser) Close() error { return nil }

// FuzzServeLines feeds arbor serve arbitrary input: it ends (every request
// answered, none waited for in vain) and writes only JSON lines.
func FuzzServeLines(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"getState"}`,
		`{"jsonrpc":"2.0","id":null,"method":"getState"}` + "\n" + `{"jsonrpc":"2.0","method":"abort"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"listBranches"},{"jsonrpc":"2.0","method":"x"}]` + "\n" + `[]`,
		`{"jsonrpc":"1.0","id":"a","method":"getTree"}` + "\n" + `{"id":2}` + "\n" + `nonsense`,
		`{"jsonrpc":"2.0","id":3,"method":"setSessionName","params":{"name":"n"}}`,
		`{"jsonrpc":"2.0","id":[1],"method":"getEntries","params":{"since":"x"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		home := t.TempDir()
		st := store.OpenFiles(home)
		defer st.Close()
		cfg := Config{Store: st, Scope: catalog.Scope{Dir: home}, Cwd: home, Where: home,
			NewAgent: func(string) (*agent.Agent, error) { return nil, errors.New("no model in this test") }}
		out := nopWriteCloser{&bytes.Buffer{}}
		done := make(chan error, 1)
		go func() { done <- Serve(cfg, strings.NewReader(in), out) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("serve did not end on input %q", in)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if !json.Valid([]byte(l)) {
				t.Fatalf("output line %q is not JSON", l)
			}
		}
	})
}

// FuzzWriteRawArray: a list of messages is written as encoding/json marshals
// it, whether a message is written as it is (marshalsAsIs) or compacted and
// escaped; a message that is not JSON becomes null.
func FuzzWriteRawArray(f *testing.F) {
	for _, s := range []string{`{"role":"user","content":"hi"}`, `{"a": 1}`, "{\"a\":\"\u2028\"}", `{"a":"<b>&"}`,
		`{"a":"\\u003c"}`, `[1,2 ,3]`, "{\"a\":\"x\ty\"}", `{"a":}`, `"x"`, ` {}`, `{}` + "\n", `{"a":"\"}`, `1e5`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var out bytes.Buffer
		bw := bufio.NewWriter(&out)
		writeRawArray(bw, []json.RawMessage{b, b})
		bw.Flush()
		want := []byte("[null,null]")
		if json.Valid(b) {
			var err error
			if want, err = json.Marshal([]json.RawMessage{b, b}); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("%q: written %q, encoding/json %q", b, out.Bytes(), want)
		}
		if marshalsAsIs(b) && !bytes.Equal(want, []byte("["+string(b)+","+string(b)+"]")) {
			t.Fatalf("%q is said to marshal as it is, but encoding/json makes %q", b, want)
		}
	})
}

// TestWriteRawArrayOnEveryCore: checked a run at a time on every core, a
// long list of messages is written in order as encoding/json marshals it,
// whatever the run size, with messages that must be compacted or escaped
// among those written as they are.
func TestWriteRawArrayOnEveryCore(t *testing.T) {
	var ms []json.RawMessage
	for i := range 5000 {
		switch i % 7 {
		case 3:
			ms = append(ms, json.RawMessage(fmt.Sprintf(`{"role": "user", "content": "%d <b> & \u2028"}`, i)))
		case 5:
			ms = append(ms, json.RawMessage(fmt.Sprintf("{\"n\":%d,\n\"t\":\"\u2029\"}", i)))
		default:
			ms = append(ms, json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"reply %d"}]}`, i)))
		}
	}
	want, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(n int) { rawRun = n }(rawRun)
	for _, run := range []int{1, 3, 1024, 10000} {
		rawRun = run
		var out bytes.Buffer
		bw := bufio.NewWriter(&out)
		writeRawArray(bw, ms)
		bw.Flush()
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("runs of %d: the list written differs from encoding/json's (%d and %d bytes)", run, out.Len(), len(want))
		}
	}
}
