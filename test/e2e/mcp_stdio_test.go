package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// mcpLine is one JSON-RPC message of agentls mcp's output.
type mcpLine struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// agentls mcp over real pipes (the poller path): bad lines are answered and
// the session goes on; closing stdin ends the process.
func TestMCPOverPipes(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := harness.Command(t, []string{"mcp", "--root", ws})
	stdin, stdout := harness.StartPiped(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan mcpLine, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m mcpLine
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// reply waits for the response with this id, answering server requests.
	reply := func(id string) mcpLine {
		t.Helper()
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatal("agentls mcp closed its output")
				}
				if m.Method != "" && m.ID != nil { // a request to us (roots/list): not supported
					send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"no"}}`)
					continue
				}
				if string(m.ID) == id {
					return m
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no reply with id %s", id)
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":`)
	if m := reply("null"); m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("malformed line answered with %+v", m)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if m := reply("2"); m.Error != nil || !strings.Contains(string(m.Result), `"agentls"`) {
		t.Fatalf("initialize: %+v %s", m.Error, m.Result)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`)
	if m := reply("3"); m.Error != nil || !strings.Contains(string(m.Result), "alpha") {
		t.Fatalf("read: %+v %s", m.Error, m.Result)
	}
	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after stdin closed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("agentls mcp still running 5 s after its stdin closed")
	}
}
