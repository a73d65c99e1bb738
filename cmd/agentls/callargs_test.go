package main

import (
	"strings"
	"testing"
)

// `agentls call read path=README` took path=README for a second tool; a
// positional argument that is neither JSON nor a tool name is an error
// that shows the call written as expected.
func TestCallKeyValueArgumentIsAnErrorShowingTheJSONForm(t *testing.T) {
	_, err := parseCalls([]string{"read", "path=README"})
	if err == nil {
		t.Fatal("path=README was taken as a tool name")
	}
	if want := `agentls call read '{"path":"README"}'`; !strings.Contains(err.Error(), want) {
		t.Errorf("want %q in: %v", want, err)
	}
	if _, err := parseCalls([]string{`"read"`}); err == nil {
		t.Error("a quoted word was taken as a tool name")
	}
	calls, err := parseCalls([]string{"read", `{"path":"a"}`, "mcp__srv__do-it", "ls"})
	if err != nil || len(calls) != 3 {
		t.Fatalf("real tool names refused: %v %v", calls, err)
	}
}
