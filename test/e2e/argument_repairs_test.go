package e2e

// What only the wire can send or observe: arguments that are not an object,
// callIds on results and notifications, and a client that declared no
// capabilities. The argument repairs themselves are pinned by the scripts in
// cmd/agentls/testdata/script/arguments.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// repairsNotesFor returns the params of notifications of method stamped with callID.
func repairsNotesFor(c *harness.Client, method, callID string) []map[string]any {
	var out []map[string]any
	for _, n := range c.Notes(method) {
		var p map[string]any
		if json.Unmarshal(n.Params, &p) == nil && p["callId"] == callID {
			out = append(out, p)
		}
	}
	return out
}

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

// A given callId is echoed on the result and stamped on the call's
// progress and details notifications; a generated one is distinct per call
// and stamps them too; batch members keep theirs. details.durationMs never
// leaks into the content.
func TestCallIDStamping(t *testing.T) {
	slow(t)
	c, _, ctx := start(t, map[string]string{"a.txt": "x\n"})
	t.Run("given callId", func(t *testing.T) {
		var r harness.Result
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "bash", "callId": "mine-bash",
			"arguments": map[string]any{"command": "for i in 1 2 3 4 5; do echo tick$i; sleep 0.1; done"}}, &r); err != nil {
			t.Fatal(err)
		}
		if r.CallID != "mine-bash" {
			t.Errorf("callId = %q", r.CallID)
		}
		prog := repairsNotesFor(c, "tools/progress", "mine-bash")
		if len(prog) == 0 {
			t.Fatal("no tools/progress stamped with the given callId")
		}
		for _, p := range prog {
			if p["tool"] != "bash" {
				t.Errorf("progress tool = %v, want bash", p["tool"])
			}
		}
		if _, ok := r.Details["durationMs"].(float64); !ok {
			t.Errorf("details.durationMs missing: %v", r.Details)
		}
		if b, _ := json.Marshal(r.Content); strings.Contains(string(b), "durationMs") {
			t.Error("details leaked into content")
		}
		c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
		r, _ = callWithID(t, c, ctx, "edit", "mine-edit", editCall("a.txt", "x", "y"))
		notes := repairsNotesFor(c, "tools/details", "mine-edit")
		if r.IsError || len(notes) != 1 || notes[0]["tool"] != "edit" {
			t.Fatalf("edit %s: tools/details stamped mine-edit = %v", r.Text(), notes)
		}
		if d, _ := notes[0]["details"].(map[string]any); d["kind"] != "edit" || d["newHash"] != r.Details["newHash"] {
			t.Errorf("notified details %v, result details %v", d, r.Details)
		}
	})
	t.Run("generated callIds", func(t *testing.T) {
		r1 := c.CallTool(ctx, "write", map[string]any{"path": "g1.txt", "content": "1\n"})
		r2 := c.CallTool(ctx, "write", map[string]any{"path": "g2.txt", "content": "2\n"})
		if r1.CallID == "" || r2.CallID == "" || r1.CallID == r2.CallID {
			t.Fatalf("generated callIds %q %q", r1.CallID, r2.CallID)
		}
		for _, r := range []harness.Result{r1, r2} {
			if n := repairsNotesFor(c, "tools/details", r.CallID); len(n) != 1 || n[0]["tool"] != "write" {
				t.Errorf("tools/details with callId %s: %v, want one from write", r.CallID, n)
			}
		}
		r, _ := callWithID(t, c, ctx, "bash", "", map[string]any{"command": "echo hi; sleep 0.1"})
		if _, ok := c.WaitNote(time.Second, func(n harness.Note) bool {
			return n.Method == "tools/progress" && strings.Contains(string(n.Params), `"callId":"`+r.CallID+`"`)
		}); !ok || r.CallID == "" {
			t.Errorf("no tools/progress stamped with the generated callId %q", r.CallID)
		}
	})
	t.Run("batch members keep their callIds", func(t *testing.T) {
		var res struct {
			Results []harness.Result `json:"results"`
		}
		err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "b-1"},
			map[string]any{"name": "nope", "arguments": map[string]any{}, "callId": "b-2"},
			map[string]any{"name": "write", "arguments": map[string]any{"path": "b3.txt", "content": "3"}, "callId": "b-3"},
		}}, &res)
		if err != nil || len(res.Results) != 3 {
			t.Fatalf("%v, %d results", err, len(res.Results))
		}
		for i, want := range []string{"b-1", "b-2", "b-3"} {
			if res.Results[i].CallID != want || res.Results[i].IsError != (i == 1) {
				t.Errorf("result %d callId %q isError %v, want %q isError %v", i, res.Results[i].CallID, res.Results[i].IsError, want, i == 1)
			}
		}
		if n := repairsNotesFor(c, "tools/details", "b-3"); len(n) != 1 {
			t.Errorf("%d tools/details stamped b-3", len(n))
		}
	})
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

// checkText asserts what a result's text holds and lacks, and what lenient
// input repair reported in details.normalized.
func checkText(t *testing.T, r harness.Result, want, notWant, wantNorm []string) {
	t.Helper()
	wantContains(t, "text", r.Text(), want...)
	wantLacks(t, "text", r.Text(), notWant...)
	wantContains(t, "details.normalized", fmt.Sprint(r.Details["normalized"]), wantNorm...)
}
