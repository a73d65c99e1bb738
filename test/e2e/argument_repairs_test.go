package e2e

// What only the wire can send or observe: arguments that are not an object
// and a client that declared no capabilities. The argument repairs are
// pinned by cmd/agentls/testdata/script/arguments; callIds on results and
// notifications by TestInitializeDetailsBeforeReplyAndCallIDs and
// TestInitializeProgress.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/test/harness"
)

// Arguments sent as one JSON string are parsed; arguments that are no
// object at all are isError results with a message, and the session
// survives them. `agentls call` cannot send either.
func TestArgumentsThatAreNotAnObject(t *testing.T) {
	c, _, ctx := start(t, map[string]string{"a.txt": numberedLines(30, func(i int) string { return fmt.Sprintf("row %d", i) })})
	var r harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": `{"path":"a.txt","offset":3,"limit":1}`}, &r); err != nil {
		t.Fatal(err)
	}
	wantResult(t, "JSON string arguments", r, false, "a.txt, lines 3-3 of 30", "row 3")
	wantContains(t, "normalized", fmt.Sprint(r.Details["normalized"]), "parsed the JSON string")
	for name, args := range map[string]any{"a number": 42, "a string that is not JSON": "path=a.txt", "true": true} {
		t.Run(name, func(t *testing.T) {
			var r harness.Result
			if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": args}, &r); err != nil {
				t.Fatalf("protocol error %v; docs/tools.md: invalid input is an isError result", err)
			}
			if !r.IsError || strings.TrimSpace(r.Text()) == "" {
				t.Errorf("isError = %v, text %q; want an error telling how to correct the call", r.IsError, r.Text())
			}
		})
	}
	wantResult(t, "after hostile input", c.CallTool(ctx, "read", map[string]any{"path": "a.txt", "limit": 1}), false, "1→row 1")
}

// A client that declares nothing is never sent a request it cannot answer:
// in default mode every "ask" becomes an approval-needed result; in bypass
// an open document's unsaved text is not applied through workspace/applyEdit
// but refused, while a clean open document is edited on disk.
func TestCapabilityLessClientIsNeverAsked(t *testing.T) {
	for _, mode := range []string{"default", "bypass"} {
		t.Run(mode, func(t *testing.T) {
			ws := newWorkspace(t, map[string]string{"a.txt": "alpha\n", "dirty.txt": "disk\n", ".env": "TOKEN=x\n"})
			c := harness.Start(t, harness.Options{Root: ws})
			var mu sync.Mutex
			var requests []string
			c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				mu.Lock()
				requests = append(requests, method)
				mu.Unlock()
				return nil, fmt.Errorf("cannot answer %s", method)
			}
			ctx := testCtx(t, sessionTimeout)
			var init map[string]any
			if mode == "bypass" {
				init = bypass()
			}
			c.Initialize(ctx, init)
			for name, text := range map[string]string{"a.txt": "alpha\n", "dirty.txt": "unsaved\n"} {
				c.Conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
					"uri": fileURI(filepath.Join(ws, name)), "languageId": "plaintext", "version": 1, "text": text}})
			}
			c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
			c.CallTool(ctx, "read", map[string]any{"path": "dirty.txt"})
			if mode == "default" {
				for name, call := range map[string]struct {
					tool string
					args map[string]any
				}{
					"write":            {"write", map[string]any{"path": "b.txt", "content": "b\n"}},
					"edit":             {"edit", editCall("a.txt", "alpha", "beta")},
					"mutating bash":    {"bash", map[string]any{"command": "touch c.txt"}},
					"secret file read": {"read", map[string]any{"path": ".env"}},
				} {
					wantResult(t, name, c.CallTool(ctx, call.tool, call.args), true, "approval")
				}
				for _, f := range []string{"b.txt", "c.txt"} {
					if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
						t.Errorf("%s created without approval", f)
					}
				}
			} else {
				wantResult(t, "clean open document", c.CallTool(ctx, "edit", editCall("a.txt", "alpha", "beta")), false)
				wantResult(t, "dirty open document", c.CallTool(ctx, "edit", editCall("dirty.txt", "unsaved", "x")), true)
				if got := readFile(t, filepath.Join(ws, "dirty.txt")); got != "disk\n" {
					t.Errorf("dirty document's file = %q, want it untouched", got)
				}
				c.CallTool(ctx, "bash", map[string]any{"command": "rm -f a.txt"})
			}
			mu.Lock()
			defer mu.Unlock()
			if len(requests) != 0 {
				t.Errorf("server sent requests the client never declared: %v", requests)
			}
		})
	}
}
