package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

func TestLifecycleInitializeListCallShutdownExit(t *testing.T) {
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
	c, _, ctx := start(t, nil)
	c.Conn.Notify(ctx, "exit", nil)
	if code := c.Wait(5 * time.Second); code != 1 {
		t.Fatalf("exit code = %d, want 1", code)
	}
}

func TestRequestsBeforeInitializeAreRefused(t *testing.T) {
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Call(ctx, "tools/list", nil, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32002 {
		t.Fatalf("err = %v, want -32002", err)
	}
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
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
	c, ws, ctx := start(t, nil)
	errCh := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(ctx, "tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 10, "marker": "cancelled.txt"}}, &r)
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
