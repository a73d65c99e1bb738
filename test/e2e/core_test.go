package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/test/harness"
)

func TestLifecycleInitializeListCallShutdownExit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"hello.txt": "hello\nworld\n"})
	c := harness.Start(t, harness.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	res := c.Initialize(ctx, map[string]any{
		"rootUri":          "file://" + ws,
		"workspaceFolders": []any{map[string]any{"uri": "file://" + ws, "name": "ws"}},
		"clientInfo":       map[string]any{"name": "e2e"},
	})
	info := res["serverInfo"].(map[string]any)
	if info["name"] != "agentls" {
		t.Errorf("serverInfo.name = %v", info["name"])
	}
	agentls := res["capabilities"].(map[string]any)["experimental"].(map[string]any)["agentls"].(map[string]any)
	if !strings.Contains(fmt.Sprint(agentls["tools"]), "read") || agentls["protocolVersion"] == nil || agentls["watcher"] == nil {
		t.Errorf("capabilities.experimental.agentls = %v", agentls)
	}
	if !strings.Contains(fmt.Sprint(res["instructions"]), "Read a file before editing") {
		t.Errorf("instructions = %v", res["instructions"])
	}

	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 || list.Tools[0]["name"] != "read" {
		t.Fatalf("tools/list = %v", list.Tools)
	}

	r := c.CallTool(ctx, "read", map[string]any{"path": "hello.txt"})
	if r.IsError || !strings.Contains(r.Text(), "1→hello") || !strings.Contains(r.Text(), "2→world") {
		t.Fatalf("read = %+v", r)
	}
	if r.CallID == "" {
		t.Error("callId missing")
	}
	if code := c.Shutdown(ctx); code != 0 {
		t.Fatalf("exit code = %d, want 0", code)
	}
}

func TestExitWithoutShutdownExitsWithOne(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	c.Conn.Notify(ctx, "exit", nil)
	if code := c.Wait(5 * time.Second); code != 1 {
		t.Fatalf("exit code = %d, want 1", code)
	}
}

func TestRequestsBeforeInitializeAreRefused(t *testing.T) {
	t.Parallel()
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Call(ctx, "tools/list", nil, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32002 {
		t.Fatalf("err = %v, want -32002", err)
	}
}

// A client that writes requests without waiting for the initialize reply
// (or right behind shutdown) gets them judged in the state the earlier
// request left: initialize and shutdown take effect in wire order. A second
// initialize in the same write is refused, never run twice.
func TestLifecycleRequestsTakeEffectInWireOrder(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for i := range 5 {
		cmd := harness.Command(t, []string{"--root", ws})
		stdin, stdout := harness.StartPiped(t, cmd)
		stopOnCleanup(t, cmd, stdin)
		var batch strings.Builder
		for id, m := range []string{"initialize", "tools/list", "initialize", "shutdown", "tools/list"} {
			params := "{}"
			if m == "initialize" {
				params = `{"processId":null,"rootUri":null,"capabilities":{}}`
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id+1, m, params)
			fmt.Fprintf(&batch, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		if _, err := io.WriteString(stdin, batch.String()); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(stdout)
		got := map[float64]map[string]any{}
		for len(got) < 5 {
			body, err := readFrame(br)
			if err != nil {
				t.Fatalf("round %d: %v (replies so far %v)", i, err, got)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if id, ok := m["id"].(float64); ok && m["method"] == nil {
				got[id] = m
			}
		}
		for id, want := range map[float64]int{1: 0, 2: 0, 3: -32600, 4: 0, 5: -32600} {
			if code := replyCode(got[id]); code != want {
				t.Errorf("round %d: reply %v = %v, want code %d (0: a result)", i, id, got[id], want)
			}
		}
	}
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	err := c.Call(ctx, "tools/nope", nil, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.MethodNotFound {
		t.Fatalf("err = %v, want MethodNotFound", err)
	}
}

// 200 calls back to back on one connection all get correct replies, while a
// slow call cancelled by $/cancelRequest replies -32800 within 100 ms.
func TestManyCallsAndCancellation(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 10 {
		files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("content of file %d\n", i)
	}
	c, _, ctx := start(t, files)

	slowCtx, cancelSlow := context.WithCancel(ctx)
	defer cancelSlow()
	slowErr := make(chan error, 1)
	go func() {
		_, err := c.TryCallTool(slowCtx, "test_block", map[string]any{})
		slowErr <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the slow call never started")
	}

	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := i % 10
			r, err := c.TryCallTool(ctx, "read", map[string]any{"path": fmt.Sprintf("f%d.txt", n)})
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("content of file %d", n); !strings.Contains(r.Text(), want) {
				errs <- fmt.Errorf("call %d: got %q, want %q", i, r.Text(), want)
			}
		}()
		if i == 100 {
			cancelSlow()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case err := <-slowErr:
		var je *jsonrpc2.Error
		if !errors.As(err, &je) && !errors.Is(err, context.Canceled) {
			t.Fatalf("slow call err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("slow call never returned")
	}
}

// The cancellation reply is timed on the wire: a fresh client's ids are
// sequential (initialize is 1), so the blocking call is id 2 and the test
// sends $/cancelRequest for it by hand, without the client giving up first.
func TestCancelRequestRepliesRequestCancelledWithin100ms(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	c, ws, ctx := start(t, nil)
	elapsed := cancelBlockingCall(t, ctx, c, map[string]any{"seconds": 10, "marker": "cancelled.txt"})
	if elapsed > 100*time.Millisecond {
		t.Errorf("cancel reply took %v, want < 100ms", elapsed)
	}
	// The tool's own context was cancelled: it left its marker.
	waitFile(t, filepath.Join(ws, "cancelled.txt"), 2*time.Second)
	// The connection still works.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "cancelled.txt"}); r.IsError {
		t.Fatalf("read after cancel: %s", r.Text())
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

// Closing stdin while a call runs cancels the call's context and the process
// exits within 1 s.
func TestClosingStdinCancelsCallsAndExits(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	go c.TryCallTool(ctx, "test_block", map[string]any{"seconds": 30, "marker": "eof-cancelled.txt"})
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the blocking call never started")
	}
	t0 := time.Now()
	c.CloseStdin()
	select {
	case <-c.Exited():
	case <-time.After(time.Second):
		t.Fatalf("process still running 1s after stdin closed")
	}
	t.Logf("exited %v after EOF", time.Since(t0))
	if _, err := os.Stat(filepath.Join(ws, "eof-cancelled.txt")); err != nil {
		t.Fatalf("the call's context was not cancelled: %v", err)
	}
}
