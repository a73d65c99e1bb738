// Command sdkserver is the second floor for bench/mcp: the smallest MCP
// server the go-sdk (the library agentls mcp must use) makes, over the SDK's
// own stdio transport. Its tool "none" returns a fixed text; its tool
// "read" returns, for a small file, the answer agentls's read gives (the
// same header, numbered lines and _meta), doing nothing else: what the
// client and the SDK spend on an answer of that size, without agentls's
// work. Its connect+initialize time is what linking and starting the SDK
// costs on this machine before a server does anything of its own.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noArgs struct{}

type readArgs struct {
	Path string `json:"path"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "none", Description: "returns ok"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok\n"}}}, nil, nil
		})
	var calls atomic.Int64 // calls may run at once
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "agentls's answer to a read of a small file"},
		func(_ context.Context, _ *mcp.CallToolRequest, in readArgs) (*mcp.CallToolResult, any, error) {
			data, err := os.ReadFile(in.Path)
			if err != nil {
				return nil, nil, err
			}
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			var b strings.Builder
			fmt.Fprintf(&b, "%s, lines 1-%d of %d", filepath.Base(in.Path), len(lines), len(lines))
			for i, l := range lines {
				fmt.Fprintf(&b, "\n%6d→%s", i+1, l)
			}
			return &mcp.CallToolResult{
				Meta: mcp.Meta{"callId": fmt.Sprintf("call-%d", calls.Add(1)), "details": map[string]any{
					"durationMs": 0.05, "fromLine": 1, "toLine": len(lines), "totalLines": len(lines)}},
				Content: []mcp.Content{&mcp.TextContent{Text: b.String()}},
			}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
