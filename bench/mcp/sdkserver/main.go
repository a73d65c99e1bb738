// Command sdkserver is the second floor for bench/mcp: the smallest MCP
// server the go-sdk (the library agentls mcp must use) makes, over the SDK's
// own stdio transport, with one tool that returns a fixed text. Its
// connect+initialize time is what linking and starting the SDK costs on
// this machine before a server does anything of its own.
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noArgs struct{}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "none", Description: "returns ok"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok\n"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
