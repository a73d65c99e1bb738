package mcp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Read, BASH and Grep got a bare JSON-RPC -32602 from the SDK: a case
// variant of one tool's name is that tool, and a name like nothing there
// is a result naming the tools there are.
func TestToolNameCaseVariantsReachTheTool(t *testing.T) {
	_, cs, _ := start(t, nil)
	for _, tc := range []struct{ name, args, want string }{
		{"Read", "a.txt", "beta"},
		{"READ", "a.txt", "beta"},
		{"Grep", "", ""},
		{"BASH", "", ""},
	} {
		args := map[string]any{"path": tc.args}
		switch tc.name {
		case "Grep":
			args = map[string]any{"pattern": "alpha"}
			tc.want = "a.txt"
		case "BASH":
			args = map[string]any{"command": "echo hi"}
			tc.want = "hi"
		}
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", tc.name, err)
		}
		if r.IsError || !strings.Contains(textOf(r), tc.want) {
			t.Errorf("%s: isError=%v %q, want %q", tc.name, r.IsError, textOf(r), tc.want)
		}
	}
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "Raed", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil {
		t.Fatalf("unknown name: protocol error %v", err)
	}
	if !r.IsError || !strings.Contains(textOf(r), "read") {
		t.Errorf("unknown name: want a result naming read, got %q", textOf(r))
	}
}
