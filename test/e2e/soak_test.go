package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
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
			if mode == "mcp" {
				args = append([]string{"mcp"}, args...)
			}
			cmd := exec.Command(harness.Binary(t), args...)
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
			frame := func(body string) []byte {
				if mode == "mcp" {
					return []byte(body + "\n")
				}
				return []byte("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
			}
			var buf, calls bytes.Buffer
			if mode == "mcp" {
				buf.Write(frame(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`))
				buf.Write(frame(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			} else {
				buf.Write(frame(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{},"initializationOptions":{"mode":"bypass"}}}`))
				buf.Write(frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
			}
			in.Write(buf.Bytes())
			// Pipelined, at most soakWindow calls unanswered: a client's
			// steady load, not one 30,000-call backlog.
			var got atomic.Int64
			stop := make(chan struct{})
			t.Cleanup(func() { close(stop) })
			go func() {
				for i := 1; i <= soakCalls; i++ {
					for int64(i)-got.Load() > soakWindow {
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
					}
					calls.Reset()
					call := `"name":"read","arguments":{"path":"a.txt"}`
					if i%100 == 99 {
						call = `"name":"grep","arguments":{"pattern":"hel+o"}`
					}
					calls.Write(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, i, call)))
					if _, err := in.Write(calls.Bytes()); err != nil {
						return
					}
				}
			}()
			answered := map[int]bool{}
			done := make(chan error, 1)
			go func() { done <- soakRead(mode, bufio.NewReaderSize(out, 1<<16), answered, &got) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%d of %d calls answered: %v", len(answered), soakCalls+1, err)
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("not all calls answered in 2 minutes")
			}
			// Idle RSS only falls (the scavenger returns pages): the bound
			// holds once it is met, so wait up to the 5 s, not always 5 s.
			idle := time.Now()
			var rss int64
			waitUntil(5*time.Second, func() bool { _, kb := procStatus(t, cmd.Process.Pid); rss = int64(kb) << 10; return rss <= soakRSS })
			t.Logf("%s: %d calls answered; RSS after %v idle: %d MiB", mode, soakCalls, time.Since(idle).Round(time.Millisecond), rss>>20)
			if rss > soakRSS {
				t.Errorf("%s: RSS %d MiB after %d calls and 5 s idle, want ≤ %d MiB", mode, rss>>20, soakCalls, soakRSS>>20)
			}
		})
	}
}

// soakRead reads replies until ids 0..soakCalls all have one.
func soakRead(mode string, br *bufio.Reader, answered map[int]bool, got *atomic.Int64) error {
	for len(answered) < soakCalls+1 {
		var body []byte
		if mode == "mcp" {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return err
			}
			body = line
		} else {
			n := -1
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return err
				}
				line = strings.TrimRight(line, "\r\n")
				if line == "" {
					break
				}
				if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
					n, _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
			body = make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				return err
			}
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil || m.ID == nil || m.Method != "" {
			continue // a notification (tools/details, progress) or a server request
		}
		if len(m.Error) > 0 {
			return fmt.Errorf("call %d: error %s", *m.ID, m.Error)
		}
		answered[*m.ID] = true
		got.Store(int64(len(answered)))
	}
	return nil
}
