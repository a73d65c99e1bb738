package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkReadThroughServer is one MCP tools/call of read, client and
// server in one process (no pipes): the per-call cost of the SDK's
// dispatch, our middleware and the executor. bench/mcp measures the same
// over stdio against server-filesystem.
func BenchmarkReadThroughServer(b *testing.B) {
	_, cs, dir := start(b, nil)
	params := &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": dir + "/a.txt"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := cs.CallTool(ctx, params)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}
