package e2e

import (
	"strings"
	"testing"
)

// A second request with the id of one still in flight gets an error
// (-32600), not a second result: the client could not tell the replies
// apart. Once the first is answered, the id may be used again.
func TestSecondRequestWithAnInFlightIDIsRefused(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "x\n"}))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	replies := func(n int) []map[string]any {
		var got []map[string]any
		waitUntil(framingWait, func() bool {
			got = got[:0]
			for _, f := range r.all() {
				if f.M != nil && framingIDIs(77)(f.M) {
					got = append(got, f.M)
				}
			}
			return len(got) >= n
		})
		return got
	}
	r.send(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": framingTool("bash", map[string]any{"command": "sleep 1; echo first"})})
	r.send(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": map[string]any{}})
	got := replies(2)
	if len(got) != 2 {
		t.Fatalf("%d replies with id 77, want 2 (an error, then the bash result); frames:\n%s", len(got), r.dump())
	}
	if code, msg := framingErr(got[0]); code != -32600 || !strings.Contains(msg, "still in flight") {
		t.Errorf("first reply %v, want the duplicate refused with -32600", got[0])
	}
	if !strings.Contains(compactJSON(got[1]["result"]), "first") {
		t.Errorf("second reply %v, want the bash result", got[1])
	}
	r.send(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": map[string]any{}})
	if got := replies(3); len(got) != 3 || got[2]["error"] != nil {
		t.Errorf("id 77 reused after its answer: %d replies, last %v; want a third, a result", len(got), got[len(got)-1])
	}
}
