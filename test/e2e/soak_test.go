package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// soakCalls is how many pipelined calls each mode gets; soakRSS bounds the
// server's resident set after them and a short idle.
const (
	soakCalls  = 30000
	soakWindow = 1000
	soakRSS    = 64 << 20
)

// pipelinedReply is a reply's id and its error, if any.
type pipelinedReply struct {
	id  int
	err string
}

// pipelinedReplies reads replies, newline-terminated (MCP) or LSP-framed,
// and skips notifications and server requests.
func pipelinedReplies(lines bool) rawReader[pipelinedReply] {
	return func(br *bufio.Reader, r *rawClient[pipelinedReply]) {
		for {
			var body []byte
			var err error
			if lines {
				body, err = br.ReadBytes('\n')
			} else {
				body, err = readFrame(br)
			}
			if err != nil {
				return
			}
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(body, &m) == nil && m.ID != nil && m.Method == "" {
				r.add(pipelinedReply{*m.ID, string(m.Error)})
			}
		}
	}
}

// After 30,000 pipelined calls (reads and, every hundredth, a grep; up to
// 1,000 unanswered) and at most 5 s of idle, the server's resident set is at
// most 64 MiB, in LSP mode and in MCP mode (agentls mcp), and every call was
// answered.
func TestManyPipelinedCallsKeepMemoryBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("soak: pipelines many thousands of calls")
	}
	if runtime.GOOS != "linux" {
		t.Skip("resident set read from /proc (Linux only)")
	}
	for _, mode := range []string{"lsp", "mcp"} {
		t.Run(mode, func(t *testing.T) {
			ws := framingWS(t, map[string]string{"a.txt": "hello\n"})
			args := []string{"--root", ws}
			init := []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{},"initializationOptions":{"mode":"bypass"}}}`,
				`{"jsonrpc":"2.0","method":"initialized","params":{}}`}
			if mode == "mcp" {
				args = append([]string{"mcp"}, args...)
				init = []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
			}
			cmd := harness.Command(t, args, "XDG_CACHE_HOME="+t.TempDir())
			cmd.Dir = ws
			r := spawnRawCmd(t, cmd, mode == "mcp", pipelinedReplies(mode == "mcp"))
			for _, m := range init {
				r.writeFrame([]byte(m))
			}
			// Pipelined, at most soakWindow calls unanswered: a client's
			// steady load, not one 30,000-call backlog.
			go func() {
				for i := 1; i <= soakCalls; i++ {
					for i-r.count() > soakWindow && !r.isExited() {
						time.Sleep(time.Millisecond)
					}
					call := `"name":"read","arguments":{"path":"a.txt"}`
					if i%100 == 99 {
						call = `"name":"grep","arguments":{"pattern":"hel+o"}`
					}
					if r.writeFrame(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, i, call)) != nil {
						return
					}
				}
			}()
			if !r.watch(time.After(2*time.Minute), func(log []pipelinedReply) bool { return len(log) >= soakCalls+1 }) {
				t.Fatalf("%d of %d calls answered within 2 minutes", r.count(), soakCalls+1)
			}
			ids := map[int]bool{}
			for _, m := range r.all() {
				if ids[m.id] = true; m.err != "" {
					t.Fatalf("call %d: error %s", m.id, m.err)
				}
			}
			if len(ids) != soakCalls+1 {
				t.Fatalf("%d distinct calls answered of %d", len(ids), soakCalls+1)
			}
			// Idle RSS only falls (the scavenger returns pages): the bound
			// holds once it is met, so wait up to the 5 s, not always 5 s.
			idle := time.Now()
			var rss int64
			waitUntil(5*time.Second, func() bool { _, kb := procStatus(t, r.cmd.Process.Pid); rss = int64(kb) << 10; return rss <= soakRSS })
			t.Logf("%s: %d calls answered; RSS after %v idle: %d MiB", mode, soakCalls, time.Since(idle).Round(time.Millisecond), rss>>20)
			if rss > soakRSS {
				t.Errorf("%s: RSS %d MiB after %d calls and 5 s idle, want ≤ %d MiB", mode, rss>>20, soakCalls, soakRSS>>20)
			}
		})
	}
}
