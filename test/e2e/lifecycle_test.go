package e2e

// The lifecycle details a client library hides: wire order and the cancel
// grace.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/rpc"
)

// A client that writes requests without waiting for the initialize reply
// (or right behind shutdown) gets them judged in the state the earlier
// request left: initialize and shutdown take effect in wire order. A second
// initialize in the same write is refused, never run twice.
func TestLifecycleRequestsTakeEffectInWireOrder(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for i := range 5 {
		r := framingStart(t, ws)
		var batch strings.Builder
		for id, m := range []string{"initialize", "tools/list", "initialize", "shutdown", "tools/list"} {
			params := "{}"
			if m == "initialize" {
				params = `{"processId":null,"rootUri":null,"capabilities":{}}`
			}
			batch.Write(framingFrameOf(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id+1, m, params)))
		}
		r.writeBytes([]byte(batch.String()))
		for id, want := range map[int]int{1: 0, 2: 0, 3: -32600, 4: 0, 5: -32600} {
			if code, msg := framingErr(r.reply(id)); code != want {
				t.Errorf("round %d: reply %d has code %d %q, want %d (0: a result)", i, id, code, msg, want)
			}
		}
	}
}

// A cancelled call gets rpc.CancelGrace to wind down before the -32800
// goes out: one that cleans up within it has done so when the client sees
// the reply; one that takes longer does not hold the reply past the grace.
func TestCancelReplyWaitsForWindDownWithinGrace(t *testing.T) {
	slow(t)
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	for _, tc := range []struct {
		name      string
		windDown  time.Duration
		markerNow bool // the marker exists the moment the reply arrives
	}{
		{"quick clean-up is done before the reply", 50 * time.Millisecond, true},
		{"slow clean-up does not hold the reply", 3 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := framingWS(t, nil)
			r := framingStart(t, ws)
			r.initialize(nil)
			id := r.request("tools/call", framingTool("test_block", map[string]any{"seconds": 10, "marker": "wound-down.txt", "windDown": tc.windDown.Seconds()}))
			if _, ok := r.wait(5*time.Second, func(m map[string]any) bool { return m["method"] == "tools/progress" }); !ok {
				t.Fatal("the blocking call never started")
			}
			start := time.Now()
			r.notify("$/cancelRequest", map[string]any{"id": id})
			f, ok := r.rawClient.wait(framingWait, func(f framingFrame) bool { return f.M != nil && framingIDIs(id)(f.M) })
			if code, msg := framingErr(f.M); !ok || code != -32800 {
				t.Fatalf("reply %v %d %q, want RequestCancelled -32800", ok, code, msg)
			}
			elapsed := f.At.Sub(start)
			_, statErr := os.Stat(filepath.Join(ws, "wound-down.txt"))
			if got := statErr == nil; got != tc.markerNow {
				t.Errorf("marker present at the reply = %v, want %v (reply after %v)", got, tc.markerNow, elapsed)
			}
			if !tc.markerNow && elapsed > rpc.CancelGrace+time.Second {
				t.Errorf("reply took %v, want about rpc.CancelGrace (%v)", elapsed, rpc.CancelGrace)
			}
			if !tc.markerNow && elapsed < rpc.CancelGrace {
				t.Errorf("reply after %v, before rpc.CancelGrace (%v) ran out", elapsed, rpc.CancelGrace)
			}
		})
	}
}

func waitFile(t *testing.T, p string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(p); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %v", p, d)
}
