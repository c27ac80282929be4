package rpc

import (
	"encoding/json"

	"github.com/arborlog/arbor/session"
)

// The parameters of arbor serve's notifications, in rho's shapes
// (rho-protocol's types.rs); a field rho lacks is an addition after rho's.
type (
	// ReadyNote is "ready": rho's {} with the server's pid and session.
	ReadyNote struct {
		Pid     int    `json:"pid"`
		Session string `json:"session"`
	}
	// DeltaNote is "message/delta" and "reasoning/delta".
	DeltaNote struct {
		Delta string `json:"delta"`
	}
	// ToolCallNote is "tool/call": arguments is the call's JSON text, as rho sends it.
	ToolCallNote struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	// ToolResultNote is "tool/result": output is the result's text.
	ToolResultNote struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		IsError bool   `json:"is_error"`
		Output  string `json:"output"`
	}
	// UsageDelta is one model response's tokens and price.
	UsageDelta struct {
		InputTokens  int64   `json:"inputTokens"`
		OutputTokens int64   `json:"outputTokens"`
		CachedTokens int64   `json:"cachedTokens"`
		Cost         float64 `json:"cost"`
		RequestCount int     `json:"requestCount"`
	}
	// UsageContext is the context's size after a model response.
	UsageContext struct {
		EstimatedUsed      int `json:"estimatedUsed"`
		ContextWindow      int `json:"contextWindow"`
		CompletionReserve  int `json:"completionReserve"`
		UtilizationPercent int `json:"utilizationPercent"`
	}
	// UsageNote is "usage", sent after each model response.
	UsageNote struct {
		Iteration int          `json:"iteration"`
		Usage     UsageDelta   `json:"usage"`
		Context   UsageContext `json:"context"`
	}
	// RunUsage is a prompt's tokens and price over all its model responses.
	RunUsage struct {
		InputTokens  int64   `json:"inputTokens"`
		OutputTokens int64   `json:"outputTokens"`
		TotalTokens  int64   `json:"totalTokens"`
		TotalCost    float64 `json:"totalCost"`
		RequestCount int     `json:"requestCount"`
	}
	// ToolOutcome is how a tool call ended: kind "success" or "error" (with its output).
	ToolOutcome struct {
		Kind   string `json:"kind"`
		Output string `json:"output,omitempty"`
	}
	// ToolCallRecord is one tool call of a prompt.
	ToolCallRecord struct {
		Name       string      `json:"name"`
		Arguments  string      `json:"arguments"`
		Outcome    ToolOutcome `json:"outcome"`
		DurationMs int64       `json:"durationMs,omitempty"`
	}
	// AgentEndNote is "agent/end".
	AgentEndNote struct {
		Reply        string           `json:"reply"`
		Iterations   int              `json:"iterations"`
		Usage        RunUsage         `json:"usage"`
		ToolCalls    []ToolCallRecord `json:"toolCalls"`
		DurationMs   int64            `json:"durationMs"`
		FinishReason string           `json:"finishReason"`
	}
	// AgentErrorNote is "agent/error"; aborted is arbor's addition.
	AgentErrorNote struct {
		Error   string `json:"error"`
		Aborted bool   `json:"aborted"`
	}
	// StateChangeNote is "state/change" (compacting, compacted) with pi's
	// compaction event beside it.
	StateChangeNote struct {
		State string          `json:"state"`
		Event json.RawMessage `json:"event,omitempty"`
	}
)

// notifications names each notification's parameter type, for OpenRPC.
var notifications = []struct {
	Name   string
	Params any
}{
	{"ready", ReadyNote{}},
	{"agent/start", Empty{}},
	{"agent/end", AgentEndNote{}},
	{"agent/error", AgentErrorNote{}},
	{"state/change", StateChangeNote{}},
	{"message/delta", DeltaNote{}},
	{"reasoning/delta", DeltaNote{}},
	{"tool/call", ToolCallNote{}},
	{"tool/result", ToolResultNote{}},
	{"usage", UsageNote{}},
}

// usageDelta is rho's per-response usage of an assistant message's usage.
func usageDelta(u session.Usage) UsageDelta {
	return UsageDelta{InputTokens: int64(u.Input), OutputTokens: int64(u.Output),
		CachedTokens: int64(u.CacheRead), Cost: u.Cost.Total, RequestCount: 1}
}

// argsText is a tool call's arguments as JSON text ("{}" when there are none).
func argsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}
