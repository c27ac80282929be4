package rpc

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "write docs/openrpc.json from the Go types")

// TestOpenRPCUpToDate fails when docs/openrpc.json no longer describes the
// methods and types of arbor serve (go test ./rpc -run OpenRPC -update
// writes it again).
func TestOpenRPCUpToDate(t *testing.T) {
	got, err := OpenRPC()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "docs", "openrpc.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with the Go types: run go test ./rpc -run OpenRPC -update", path)
	}
	var doc struct {
		Methods []struct {
			Name   string
			Params []struct{ Name string }
		}
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range doc.Methods {
		names[m.Name] = true
	}
	for m := range (&server{e: &Engine{}}).methods() {
		if !names[m] {
			t.Errorf("method %s is not in the document", m)
		}
	}
	for _, m := range doc.Methods {
		if m.Name == "prompt" && (len(m.Params) != 3 || m.Params[0].Name != "message" || m.Params[1].Name != "steer") {
			t.Errorf("prompt's params %v", m.Params)
		}
	}
}
