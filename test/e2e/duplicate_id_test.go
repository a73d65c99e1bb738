package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// A second request with the id of one still in flight gets an error
// (-32600), not a second result: the client could not tell the replies
// apart. Once the first is answered, the id may be used again.
func TestSecondRequestWithAnInFlightIDIsRefused(t *testing.T) {
	slow(t)
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "x\n"}))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	slow := map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 1; echo first"}}}
	second := map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": map[string]any{}}
	r.send(slow)
	r.send(second)
	deadline := time.Now().Add(framingWait)
	var replies []map[string]any
	for time.Now().Before(deadline) && len(replies) < 2 {
		replies = replies[:0]
		for _, f := range r.all() {
			if f.M != nil && framingIDIs(77)(f.M) {
				replies = append(replies, f.M)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(replies) != 2 {
		t.Fatalf("%d replies with id 77, want 2 (an error, then the bash result); frames:\n%s", len(replies), r.dump())
	}
	code, msg := framingErr(replies[0])
	if code != -32600 || !strings.Contains(msg, "still in flight") {
		t.Errorf("first reply %v, want the duplicate refused with -32600", replies[0])
	}
	res, _ := replies[1]["result"].(map[string]any)
	if res == nil || !strings.Contains(compactJSON(res), "first") {
		t.Errorf("second reply %v, want the bash result", replies[1])
	}
	if m := r.reply(r.request("tools/list", nil)); m["error"] != nil {
		t.Fatalf("tools/list after: %v", m["error"])
	}
	n := 0
	for _, f := range r.all() {
		if f.M != nil && framingIDIs(77)(f.M) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d replies with id 77, want 2", n)
	}
	again := map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": map[string]any{}}
	r.send(again)
	deadline = time.Now().Add(framingWait)
	for time.Now().Before(deadline) {
		n := 0
		var last map[string]any
		for _, f := range r.all() {
			if f.M != nil && framingIDIs(77)(f.M) {
				n++
				last = f.M
			}
		}
		if n == 3 {
			if last["error"] != nil {
				t.Errorf("id 77 reused after its answer: %v, want a result", last["error"])
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no reply to id 77 reused after its answer; frames:\n%s", r.dump())
}

// The same in MCP mode (agentls mcp), where the SDK would drop the second
// request without any reply.
func TestSecondMCPRequestWithAnInFlightIDIsRefused(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "x\n"})
	cmd := exec.Command(harness.Binary(t), "mcp", "--root", ws)
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
	io.WriteString(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"dup","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`+"\n"+
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`+"\n")
	lines := make(chan string)
	go func() {
		defer close(lines)
		br := bufio.NewReader(out)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			lines <- l
		}
	}()
	var five []string
	timeout := time.After(framingWait)
	for ping := false; !ping || len(five) < 2; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("agentls mcp ended")
			}
			if strings.HasPrefix(l, `{"jsonrpc":"2.0","id":5,`) {
				five = append(five, l)
			}
			ping = ping || strings.HasPrefix(l, `{"jsonrpc":"2.0","id":6,`)
		case <-timeout:
			t.Fatalf("ping answered: %v; replies to id 5: %q; want the duplicate's error and the read's result", ping, five)
		}
	}
	for wait := time.After(200 * time.Millisecond); ; {
		select {
		case l := <-lines:
			if strings.HasPrefix(l, `{"jsonrpc":"2.0","id":5,`) {
				t.Fatalf("a third reply to id 5: %q", l)
			}
			continue
		case <-wait:
		}
		break
	}
	errs := 0
	for _, l := range five {
		if strings.Contains(l, `"code":-32600`) && strings.Contains(l, "still in flight") {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("replies to id 5: %q; want exactly one -32600 refusal", five)
	}
}
