package e2e

// Paths cannot escape the roots through any tool, and the lifecycle details
// a client library hides: wire order and the cancel grace.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// lifecycleStart starts agentls on root and initializes it with params (nil: defaults).
func lifecycleStart(t *testing.T, root string, params map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: root, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	c.Initialize(ctx, params)
	return c, ctx
}

// lifecyclePathFixture builds <dir>/ws (the workspace) next to <dir>/ws2, a sibling
// whose name has the workspace's name as a prefix, holding a secret.
func lifecyclePathFixture(t *testing.T) (ws, sibling string) {
	t.Helper()
	dir := resolvedWorkspace(t, map[string]string{
		"ws/in.txt":      "inside\n",
		"ws/my file.txt": "spaced\n",
		"ws/sub/x.txt":   "x\n",
		"ws2/s.txt":      "SECRET-SIBLING\n",
	})
	ws, sibling = filepath.Join(dir, "ws"), filepath.Join(dir, "ws2")
	links := map[string]string{
		"pl":       "/etc/passwd",
		"sib":      "../ws2",
		"sibabs":   sibling,
		"chain1":   "/etc",
		"sub/deep": "../chain1",
		"dang":     "/nonexistent-agentls/x",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"selfloop": "selfloop",
		"rootlink": "/",
		"inabs":    filepath.Join(ws, "in.txt"),
		"indir":    "sub",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, sibling
}

func TestLifecyclePathResolverRefusesHostileInputs(t *testing.T) {
	t.Parallel()
	ws, sibling := lifecyclePathFixture(t)
	c, ctx := lifecycleStart(t, ws, nil)
	const (
		climb   = `(?i)\.\.|outside`
		outside = `(?i)outside`
		link    = `(?i)symlink|outside`
		loop    = `(?i)loop`
		home    = `~|(?i)home`
		nul     = `(?i)NUL`
		device  = `(?i)device|kernel|not a regular|outside`
	)
	// The resolver's cases are unit tests (internal/ops); these are the
	// ones only the whole server meets: kernel files, devices, the
	// sibling-prefix trap through the client, links out.
	cases := []struct{ path, why string }{
		{"../ws2/s.txt", climb},
		{sibling + "/s.txt", outside}, // the sibling-prefix trap
		{ws + "2/s.txt", outside},     // spelled as the root plus "2"
		{"sub/deep/passwd", link},     // symlink chain ending outside
		{"rootlink/etc/passwd", link}, // symlink to /
		{"selfloop", loop},
		{"~root/.bashrc", home},
		{"in.txt\x00.png", nul},
		{"/dev/zero", device},
		{"/proc/self/environ", device},
		{"/sys/kernel/mm/transparent_hugepage/enabled", device},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.path, "\x00", "NUL"), func(t *testing.T) {
			r, err := c.TryCallTool(ctx, "read", map[string]any{"path": tc.path})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			text := r.Text()
			if !r.IsError {
				t.Fatalf("read %q was not refused:\n%s", tc.path, text)
			}
			if strings.Contains(text, "SECRET-SIBLING") || strings.Contains(text, "root:") {
				t.Fatalf("read %q escaped:\n%s", tc.path, text)
			}
			if !regexp.MustCompile(tc.why).MatchString(text) {
				t.Errorf("read %q: the message does not say why (want /%s/): %s", tc.path, tc.why, text)
			}
		})
	}

	t.Run("other tools do not escape either", func(t *testing.T) {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"ls", map[string]any{"path": "../ws2"}},
			{"ls", map[string]any{"path": "sib"}},
			{"ls", map[string]any{"path": sibling}},
			{"grep", map[string]any{"pattern": "SECRET", "path": "sib"}},
			{"grep", map[string]any{"pattern": "SECRET", "path": "../ws2"}},
			{"grep", map[string]any{"pattern": "root", "path": "/etc/passwd"}},
			{"find", map[string]any{"pattern": "*", "path": "sibabs"}},
			{"find", map[string]any{"pattern": "*", "path": ".."}},
		} {
			r := c.CallTool(ctx, tc.tool, tc.args)
			if !r.IsError || strings.Contains(r.Text(), "s.txt") && !strings.Contains(r.Text(), "refused") || strings.Contains(r.Text(), "root:") {
				t.Errorf("%s %v: not refused: %s", tc.tool, tc.args, r.Text())
			}
		}
		// Walking the whole workspace must not follow the outward links.
		g := c.CallTool(ctx, "grep", map[string]any{"pattern": "SECRET-SIBLIN[G]|root:[x]:"})
		if strings.Contains(g.Text(), "SECRET-SIBLING") || strings.Contains(g.Text(), "root:x:") {
			t.Errorf("grep over the workspace followed an outward symlink:\n%s", g.Text())
		}
		f := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
		if strings.Contains(f.Text(), "s.txt") || strings.Contains(f.Text(), "passwd") {
			t.Errorf("find over the workspace followed an outward symlink:\n%s", f.Text())
		}
	})

}

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
			c, ws, ctx := start(t, nil)
			elapsed := cancelBlockingCall(t, ctx, c, map[string]any{"seconds": 10, "marker": "wound-down.txt", "windDown": tc.windDown.Seconds()})
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

// cancelBlockingCall starts test_block with args as request 2 of a fresh
// client (initialize is 1), sends $/cancelRequest for it by hand once it
// runs, checks the reply is -32800 and returns how long the reply took.
func cancelBlockingCall(t *testing.T, ctx context.Context, c *harness.Client, args map[string]any) time.Duration {
	t.Helper()
	errCh := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(ctx, "tools/call", map[string]any{"name": "test_block", "arguments": args}, &r)
		errCh <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the blocking call never started")
	}
	t0 := time.Now()
	if err := c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2}); err != nil {
		t.Fatal(err)
	}
	err := <-errCh
	elapsed := time.Since(t0)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32800 {
		t.Fatalf("err = %v, want RequestCancelled -32800", err)
	}
	return elapsed
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
