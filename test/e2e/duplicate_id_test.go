package e2e

import (
	"strings"
	"testing"
	"time"
)

// A second request with the id of one still in flight gets an error
// (-32600), not a second result: the client could not tell the replies
// apart. Once the first is answered, the id may be used again.
func TestSecondRequestWithAnInFlightIDIsRefused(t *testing.T) {
	r := a8pStart(t, a8pWS(t, map[string]string{"a.txt": "x\n"}))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	slow := map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 1; echo first"}}}
	second := map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": map[string]any{}}
	r.send(slow)
	r.send(second)
	deadline := time.Now().Add(a8pWait)
	var replies []map[string]any
	for time.Now().Before(deadline) && len(replies) < 2 {
		replies = replies[:0]
		for _, f := range r.all() {
			if f.M != nil && a8pIDIs(77)(f.M) {
				replies = append(replies, f.M)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(replies) != 2 {
		t.Fatalf("%d replies with id 77, want 2 (an error, then the bash result); frames:\n%s", len(replies), r.dump())
	}
	code, msg := a8pErr(replies[0])
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
		if f.M != nil && a8pIDIs(77)(f.M) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d replies with id 77, want 2", n)
	}
	again := map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": map[string]any{}}
	r.send(again)
	deadline = time.Now().Add(a8pWait)
	for time.Now().Before(deadline) {
		n := 0
		var last map[string]any
		for _, f := range r.all() {
			if f.M != nil && a8pIDIs(77)(f.M) {
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
