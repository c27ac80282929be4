package agent

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestDecodedKeepsResultsOfEarlierCalls: a result is sent when any assistant
// message sent before it made its call, the last one or an earlier one, and
// left out when none did (never made, or made by a reply that failed).
func TestDecodedKeepsResultsOfEarlierCalls(t *testing.T) {
	call := func(id, stop string) json.RawMessage {
		return json.RawMessage(`{"role":"assistant","content":[{"type":"toolCall","id":"` + id + `","name":"read","arguments":{}}],"stopReason":"` + stop + `"}`)
	}
	result := func(id string) json.RawMessage {
		return json.RawMessage(`{"role":"toolResult","toolCallId":"` + id + `","toolName":"read","content":"x"}`)
	}
	msgs := []json.RawMessage{
		call("c1", "toolUse"), call("c2", "toolUse"),
		result("c2"), result("c1"), result("c3"),
		call("c4", "error"), result("c4"),
		call("c5", "toolUse"), result("c1"), result("c5"),
	}
	want := []string{"assistant c1", "assistant c2", "toolResult c2", "toolResult c1", "assistant c5", "toolResult c1", "toolResult c5"}
	for _, checked := range []bool{false, true} {
		var got []string
		for m := range (Request{Messages: msgs, checked: checked}).Decoded() {
			id := m.ToolCallID
			if m.Role == "assistant" {
				id = m.Content.Blocks[0].ID
			}
			got = append(got, m.Role+" "+id)
		}
		if !slices.Equal(got, want) {
			t.Errorf("checked %v: sent %q, want %q", checked, got, want)
		}
	}
}
