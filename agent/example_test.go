package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arborlog/arbor/agent"
	"github.com/arborlog/arbor/session"
)

// scripted is a Provider that answers from a script: a real agent uses
// NewAnthropic or NewOpenAI.
type scripted struct{ replies []session.Assistant }

func (s *scripted) API() string { return "scripted" }

func (s *scripted) Stream(_ context.Context, _ agent.Request, _ func(agent.Delta)) (*session.Assistant, error) {
	r := s.replies[0]
	s.replies = s.replies[1:]
	return &r, nil
}

// An Agent runs a prompt to the end: it sends the session's context, runs
// the tools the model calls, appends every message to the log, and stops
// when the model answers without calling a tool.
func ExampleAgent_Run() {
	clock := agent.Tool{Name: "clock", Description: "the time", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, *agent.ToolEnv, json.RawMessage) agent.ToolOutput {
			return agent.ToolOutput{Text: "09:30"}
		}}
	model := &scripted{replies: []session.Assistant{
		{Content: []session.Block{session.ToolCallBlock("call_1", "clock", nil)}, StopReason: session.StopToolUse},
		{Content: []session.Block{session.TextBlock("It is 09:30.")}, StopReason: session.StopEnd},
	}}
	l := session.New("/home/me/project")
	a := &agent.Agent{Log: l, Provider: model, Model: agent.Model{Provider: "scripted", ID: "m1"}, Tools: []agent.Tool{clock}}

	reply, err := a.Run(context.Background(), "What time is it?")
	if err != nil {
		panic(err)
	}
	fmt.Println(reply.Text())
	var roles []string
	for _, m := range l.Context().Messages {
		roles = append(roles, m.Role)
	}
	fmt.Println(strings.Join(roles, " "))
	// Output:
	// It is 09:30.
	// user assistant toolResult assistant
}
