package rpc_test

import (
	"context"
	"fmt"
	"os"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/rpc"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/store"
)

// echo is a Provider that repeats the prompt: a real configuration builds
// agent.NewAnthropic or agent.NewOpenAI.
type echo struct{}

func (echo) API() string { return "echo" }

func (echo) Stream(_ context.Context, r agent.Request, _ func(agent.Delta)) (*session.Assistant, error) {
	var last session.MessageData
	for m := range r.Decoded() {
		last = m
	}
	return &session.Assistant{Content: []session.Block{session.TextBlock("You said: " + last.Content.Text(" "))}, StopReason: session.StopEnd}, nil
}

// An Engine holds one session and its agent; Serve (JSON-RPC) and Pi (pi's
// RPC mode) put it on a pipe, and a Go program can call it directly.
func ExampleEngine() {
	home, _ := os.MkdirTemp("", "arbor")
	defer os.RemoveAll(home)
	st := store.OpenFiles(home)
	defer st.Close()
	cfg := rpc.Config{Store: st, Scope: catalog.Scope{Dir: home}, Cwd: "/home/me/project", Where: home,
		NewAgent: func(string) (*agent.Agent, error) {
			return &agent.Agent{Provider: echo{}, Model: agent.Model{Provider: "echo", ID: "echo-1"}}, nil
		}}
	e, err := rpc.New(cfg, func(agent.Event) {}) // events go to the protocol's client
	if err != nil {
		panic(err)
	}
	defer e.Close()

	reply, err := e.Prompt(context.Background(), "hello", nil)
	if err != nil {
		panic(err)
	}
	s := e.State()
	fmt.Println(reply.Text())
	fmt.Println(s.Provider, s.Model, s.MessageCount, "messages")
	// Output:
	// You said: hello
	// echo echo-1 2 messages
}
