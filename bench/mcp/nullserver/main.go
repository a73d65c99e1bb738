// Command nullserver is the floor for bench/mcp: an MCP server over stdio
// that does no work and links nothing but the standard library. It answers
// initialize, ping and tools/call (with a fixed text result) on the line it
// reads them. Connecting to it measures what the client, process start and
// one exchange cost on this machine before any server does anything.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue // notifications and noise
		}
		var result any = struct{}{}
		switch m.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": m.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "nullserver", "version": "1"},
			}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok\n"}}}
		}
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		os.Stdout.Write(append(out, '\n'))
	}
}
