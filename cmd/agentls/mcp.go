package main

import (
	"fmt"
	"io"
)

// cmdMCP serves the tools as an MCP server over stdio.
func cmdMCP(g globalFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentls mcp: not built yet")
	return 2
}
