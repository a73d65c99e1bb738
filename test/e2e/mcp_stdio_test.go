package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// A roots/list_changed that arrives while the server waits for the answer
// to its roots/list makes it ask once more when that answer is in: the
// requests never overlap, so an older answer cannot land after a newer one
// and undo it, and the workspace ends as the client's latest roots.
func TestMCPRootsChangeDuringSyncAsksAgain(t *testing.T) {
	d := rootsNewDirs(t)
	m, ctx := rootsStartMCP(t, []map[string]any{rootsFolder(d.A)}, "--root", d.C)
	if r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")}); r.IsError {
		t.Fatalf("read in the first root: %s", r.Text())
	}
	var mu sync.Mutex
	asked, inFlight, most := 0, 0, 0
	firstAsked, secondSent, secondAnswered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	m.setHandler(func(req mcpMsg) (any, int) {
		if req.Method != "roots/list" {
			return m.answer(req)
		}
		mu.Lock()
		asked++
		k := asked
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		if k == 1 {
			close(firstAsked)
			<-secondSent
			time.Sleep(100 * time.Millisecond) // the server reads the second notification meanwhile
			return map[string]any{"roots": []map[string]any{rootsFolder(d.A), rootsFolder(d.B)}}, 0
		}
		if k == 2 {
			defer close(secondAnswered)
		}
		return map[string]any{"roots": []map[string]any{rootsFolder(d.B)}}, 0
	})
	m.notify("notifications/roots/list_changed", map[string]any{})
	select {
	case <-firstAsked:
	case <-ctx.Done():
		t.Fatalf("no roots/list after roots/list_changed; got:\n%s", lastBytes(m.dump(), 3000))
	}
	m.notify("notifications/roots/list_changed", map[string]any{})
	close(secondSent)
	select {
	case <-secondAnswered:
	case <-ctx.Done():
		t.Fatalf("a change during the roots sync was not asked about again; got:\n%s", lastBytes(m.dump(), 3000))
	}
	// A tool call waits for the sync; the latest roots are the workspace.
	if r := m.tool(t, ctx, "read", map[string]any{"path": filepath.Join(d.A, "a.txt")}); !r.IsError {
		t.Errorf("a root the latest answer dropped is in the workspace: %s", r.Text())
	}
	if r := m.tool(t, ctx, "read", map[string]any{"path": "b.txt"}); r.IsError {
		t.Errorf("the latest roots are not the workspace: %s", r.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d roots/list requests were in flight at once, want 1", most)
	}
}
