package e2e

// Contract tests of the wire protocol (docs/protocol.md), the shared
// rules of docs/tools.md and issue #6's acceptance, through the real
// binary. Items other tests already cover are not repeated here.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/test/harness"
)

// --- a raw client: every byte of stdout is checked ---------------------------

// apRaw drives agentls over raw pipes and parses its stdout strictly: every
// byte must belong to a well-formed Content-Length frame holding a JSON-RPC
// 2.0 message.
type apRaw struct{ *rawClient[map[string]any] }

func apStartRaw(t *testing.T, root string, env ...string) *apRaw {
	t.Helper()
	return &apRaw{startRaw(t, []string{"--root", root}, env, apReadFrames)}
}

// apReadFrames parses stdout until EOF; the first violation ends parsing and
// records the rest of the stream.
func apReadFrames(br *bufio.Reader, r *rawClient[map[string]any]) {
	fail := func(format string, args ...any) { r.noteBad(fmt.Sprintf(format, args...)) }
	for {
		length := -1
		first := true
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if !(first && line == "" && err == io.EOF) {
					fail("stdout ended inside a header: %q", line)
				}
				return
			}
			first = false
			if !strings.HasSuffix(line, "\r\n") {
				rest, _ := io.ReadAll(br)
				fail("header line without CRLF: %q (then %.200q)", line, rest)
				return
			}
			line = strings.TrimSuffix(line, "\r\n")
			if line == "" {
				break
			}
			name, value, ok := strings.Cut(line, ": ")
			if !ok {
				rest, _ := io.ReadAll(br)
				fail("not a header: %q (then %.200q)", line, rest)
				return
			}
			if strings.EqualFold(name, "Content-Length") {
				n, err := strconv.Atoi(value)
				if err != nil || n < 0 {
					fail("bad Content-Length %q", value)
					return
				}
				length = n
			}
		}
		if length < 0 {
			fail("a frame without Content-Length")
			return
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(br, body); err != nil {
			fail("body shorter than Content-Length: %v", err)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || m["jsonrpc"] != "2.0" {
			fail("frame body is not a JSON-RPC 2.0 message: %.200q", body)
			continue
		}
		r.add(m)
	}
}

// send writes one framed message.
func (r *apRaw) send(body string) { r.writeFrame([]byte(body)) }

// reply waits for the response to id (compared as JSON).
func (r *apRaw) reply(id any, timeout time.Duration) (map[string]any, bool) {
	want, _ := json.Marshal(id)
	return r.wait(timeout, func(f map[string]any) bool {
		if _, isNote := f["method"]; isNote {
			return false
		}
		got, _ := json.Marshal(f["id"])
		return bytes.Equal(got, want)
	})
}

func (r *apRaw) initialize(t *testing.T, params string) {
	t.Helper()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + params + `}`)
	f, ok := r.reply(1, 10*time.Second)
	if !ok || f["result"] == nil {
		t.Fatalf("initialize: %v (stderr: %s)", f, r.stderr.String())
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	// Tests change files and expect workspace/externalChange: only once
	// the watchers are armed.
	if _, ok := r.wait(10*time.Second, func(f map[string]any) bool { return f["method"] == harness.WatcherReady }); !ok {
		t.Fatalf("no %s within 10s", harness.WatcherReady)
	}
}

// --- malformed frames ----------------------------------------------------------

// Bad JSON-RPC gets a JSON-RPC error code (docs/protocol.md "Errors"), and the
// server neither panics nor stops serving.
func TestProtoMalformedFramesDoNotKillTheServer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		raw  string
	}{
		{"bad JSON body", "Content-Length: 9\r\n\r\n{\"jsonrp\""},
		{"missing Content-Length", "Content-Type: application/vscode-jsonrpc\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}"},
		{"non-numeric Content-Length", "Content-Length: ten\r\n\r\n{}"},
		{"JSON that is not JSON-RPC", "Content-Length: 9\r\n\r\n{\"foo\":1}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := apStartRaw(t, t.TempDir())
			r.initialize(t, `{"initializationOptions":{"mode":"bypass"}}`)
			r.writeRaw([]byte(tc.raw))
			// A protocol error is answered with a JSON-RPC error code.
			_, replied := r.wait(2*time.Second, func(f map[string]any) bool {
				c := replyCode(f)
				return c == -32700 || c == -32600
			})
			// The server still answers the next well-formed request.
			r.send(`{"jsonrpc":"2.0","id":77,"method":"tools/list","params":{}}`)
			_, served := r.reply(77, 3*time.Second)
			if strings.Contains(r.stderr.String(), "panic:") || strings.Contains(r.stderr.String(), "goroutine ") {
				t.Fatalf("the server panicked:\n%s", r.stderr.String())
			}
			if code := r.exitCode(0); code == 2 {
				t.Fatalf("exit code 2 (a Go panic)")
			}
			if !replied || !served {
				t.Errorf("error reply with -32700/-32600: %v; next request served: %v; process alive: %v, exit code %d",
					replied, served, !r.isExited(), r.exitCode(time.Second))
			}
		})
	}
}

// The same frames never panic the process: the defect above is about
// survival and the missing error reply, not a crash.
func TestProtoMalformedFramesDoNotPanic(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"Content-Length: 9\r\n\r\n{\"jsonrp\"",
		"Content-Type: x\r\n\r\n{}",
		"Content-Length: -5\r\n\r\n",
		"Content-Length: 2\r\n\r\n[]",
	} {
		r := apStartRaw(t, t.TempDir())
		r.initialize(t, `{"initializationOptions":{"mode":"bypass"}}`)
		r.writeRaw([]byte(raw))
		r.stdin.Close()
		code := r.exitCode(3 * time.Second)
		if code == 2 || code == -1 || strings.Contains(r.stderr.String(), "panic:") {
			t.Errorf("%q: exit code %d, stderr:\n%s", raw, code, r.stderr.String())
		}
		if bad := r.badFrames(); len(bad) > 0 {
			t.Errorf("%q: stdout not clean: %v", raw, bad)
		}
	}
}

// --- lifecycle -------------------------------------------------------------------

func TestProtoLifecycleEdges(t *testing.T) {
	t.Parallel()
	t.Run("notification before initialize is ignored, then initialize works", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{"a.txt": "A\n"})
		c := harness.Start(t, harness.Options{Root: ws})
		ctx := t.Context()
		c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{}}})
		c.Conn.Notify(ctx, "$/setTrace", map[string]any{"value": "off"})
		c.Initialize(ctx, bypass())
		if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
			t.Fatal(r.Text())
		}
	})
	t.Run("second initialize is refused and changes nothing", func(t *testing.T) {
		t.Parallel()
		c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
		other := t.TempDir()
		err := c.Call(ctx, "initialize", map[string]any{"rootUri": "file://" + other, "capabilities": map[string]any{}}, nil)
		if err == nil {
			t.Fatal("second initialize accepted")
		}
		t.Logf("second initialize: %v (code %d)", err, rpcCode(err))
		if code := rpcCode(err); code != -32600 {
			t.Errorf("code = %d, want -32600 (InvalidRequest)", code)
		}
		if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
			t.Fatalf("the first session was replaced: %s", r.Text())
		}
	})
	t.Run("after shutdown requests fail with -32600 and exit is 0", func(t *testing.T) {
		t.Parallel()
		c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
		// The null result itself is checked on the raw wire in
		// TestProtoStdoutCarriesOnlyFrames.
		if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		for _, m := range []struct {
			method string
			params any
		}{
			{"tools/list", map[string]any{}},
			{"tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}},
			{"tools/callBatch", map[string]any{"calls": []any{}}},
		} {
			err := c.Call(ctx, m.method, m.params, nil)
			if code := rpcCode(err); code != -32600 {
				t.Errorf("%s after shutdown: err %v, want -32600", m.method, err)
			}
		}
		c.Conn.Notify(ctx, "exit", nil)
		if code := c.Wait(5 * time.Second); code != 0 {
			t.Fatalf("exit code = %d, want 0", code)
		}
	})
	t.Run("exit before initialize exits 1", func(t *testing.T) {
		t.Parallel()
		c := harness.Start(t, harness.Options{Root: t.TempDir()})
		c.Conn.Notify(t.Context(), "exit", nil)
		if code := c.Wait(5 * time.Second); code != 1 {
			t.Fatalf("exit code = %d, want 1", code)
		}
	})
	t.Run("initialize with params [] works", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{"a.txt": "A\n"})
		c := harness.Start(t, harness.Options{Root: ws})
		var res map[string]any
		if err := c.Call(t.Context(), "initialize", []any{}, &res); err != nil {
			t.Fatal(err)
		}
		if res["serverInfo"].(map[string]any)["name"] != "agentls" {
			t.Fatalf("result = %v", res)
		}
	})
}

// Invalid initializationOptions fail initialize with -32602 naming the
// field; the server stays uninitialized, so a corrected initialize works.
// Unknown keys are window/logMessage warnings {type: 2, message}.
func TestProtoInitializationOptions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := t.Context()
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"mode": "turbo"}, "mode"},
		{map[string]any{"permissions": map[string]any{"allow": "Bash(ls)"}}, "allow"},
		{map[string]any{"limits": map[string]any{"readLines": -1}}, "readLines"},
	} {
		err := c.Call(ctx, "initialize", map[string]any{"initializationOptions": tc.opts, "capabilities": map[string]any{}}, nil)
		if rpcCode(err) != -32602 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want -32602 naming %s", tc.opts, err, tc.want)
		}
	}
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass", "frobnicate": true}})
	n, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
		return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "frobnicate")
	})
	if !ok {
		t.Fatalf("no window/logMessage for an unknown key: %v", c.Notes("window/logMessage"))
	}
	var p map[string]any
	json.Unmarshal(n.Params, &p)
	if p["type"] != float64(2) || p["message"] == "" {
		t.Errorf("logMessage = %s, want {type: 2, message}", n.Params)
	}
}

// --- protocol errors vs results ---------------------------------------------

func TestProtoInvalidParamsAreProtocolErrors(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	cases := []struct {
		name   string
		method string
		params any
		want   string
	}{
		{"unknown tools/list format", "tools/list", map[string]any{"format": "xml"}, "mcp, openai, anthropic"},
		{"tools/call name not a string", "tools/call", map[string]any{"name": 5, "arguments": map[string]any{}}, ""},
		{"tools/callBatch calls not a list", "tools/callBatch", map[string]any{"calls": "read"}, ""},
		{"tools/list includeDeferred not a bool", "tools/list", map[string]any{"includeDeferred": "yes"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Call(ctx, tc.method, tc.params, nil)
			if rpcCode(err) != -32602 || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Fatalf("err = %v, want -32602 containing %q", err, tc.want)
			}
		})
	}
	// The connection is intact.
	if err := c.Call(ctx, "tools/list", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// Bad tool input is a result, never a protocol error (docs/tools.md "Errors are
// results"): arguments of the wrong JSON type, and an empty tool name (an
// unknown tool).
func TestProtoBadToolInputIsAResult(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	for _, tc := range []struct {
		name string
		tool string
		args any
	}{
		{"arguments a number", "read", 5},
		{"arguments a non-JSON string", "read", "path=a.txt"},
		{"arguments null", "read", nil},
		{"arguments a list of values", "read", []any{"a.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r harness.Result
			err := c.Call(ctx, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args}, &r)
			if err != nil || !r.IsError || r.Text() == "" {
				t.Fatalf("err %v, result %+v", err, r)
			}
		})
	}
}

// An empty tool name is an unknown tool; docs/tools.md makes unknown tools
// results, while the server answers -32602.
func TestProtoEmptyToolNameIsAResult(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	var r harness.Result
	err := c.Call(ctx, "tools/call", map[string]any{"name": "", "arguments": map[string]any{}}, &r)
	if err != nil || !r.IsError || !strings.Contains(r.Text(), "Available tools") {
		t.Fatalf("err %v (code %d), result %+v", err, rpcCode(err), r)
	}
}

// `[]` (how Lua encodes {}) is accepted for any params object.
func TestProtoParamsAsEmptyArray(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", []any{}, &list); err != nil || len(list.Tools) == 0 || list.Tools[0]["inputSchema"] == nil {
		t.Fatalf("tools/list []: %v, %v", err, list.Tools)
	}
	var batch struct {
		Results []harness.Result `json:"results"`
	}
	if err := c.Call(ctx, "tools/callBatch", []any{}, &batch); err != nil || len(batch.Results) != 0 {
		t.Fatalf("tools/callBatch []: %v, %v", err, batch.Results)
	}
	if r := c.CallTool(ctx, "ls", []any{}); r.IsError || !strings.Contains(r.Text(), "a.txt") {
		t.Fatalf("ls with arguments []: %s", r.Text())
	}
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", []any{})
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatalf("after a [] folder change: %s", r.Text())
	}
}

// --- tools/list shapes ---------------------------------------------------------

func apKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Each format has exactly the documented keys (an Anthropic or OpenAI
// request refuses unknown ones), the same tools in the same order, and the
// same description and schema; the default is mcp.
func TestProtoToolsListExactShapes(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	list := func(params any) []map[string]any {
		var out struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", params, &out); err != nil {
			t.Fatal(err)
		}
		return out.Tools
	}
	def, mcp, openai, anthropic := list(map[string]any{}), list(map[string]any{"format": "mcp"}), list(map[string]any{"format": "openai"}), list(map[string]any{"format": "anthropic"})
	if a, b := compactJSON(def), compactJSON(mcp); a != b {
		t.Error("the default format is not mcp")
	}
	if len(mcp) != len(openai) || len(mcp) != len(anthropic) {
		t.Fatalf("tool counts differ: %d %d %d", len(mcp), len(openai), len(anthropic))
	}
	for i, m := range mcp {
		name := m["name"].(string)
		for _, k := range []string{"name", "description", "inputSchema", "annotations", "_meta"} {
			if _, ok := m[k]; !ok {
				t.Errorf("mcp %s lacks %s", name, k)
			}
		}
		if got := apKeys(m["annotations"].(map[string]any)); !slices.Equal(got, []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"}) {
			t.Errorf("mcp %s annotations = %v", name, got)
		}
		meta := m["_meta"].(map[string]any)
		for _, k := range []string{"concurrencySafe", "deferred"} {
			if _, ok := meta[k].(bool); !ok {
				t.Errorf("mcp %s _meta.%s is not a bool: %v", name, k, meta)
			}
		}
		if meta["deferred"] == true {
			t.Errorf("mcp %s: an active tool is marked deferred", name)
		}
		if desc, _ := m["description"].(string); desc == "" {
			t.Errorf("mcp %s has no description", name)
		}
		o := openai[i]
		if got := apKeys(o); !slices.Equal(got, []string{"function", "type"}) || o["type"] != "function" {
			t.Errorf("openai %s keys = %v", name, got)
		}
		fn := o["function"].(map[string]any)
		if got := apKeys(fn); !slices.Equal(got, []string{"description", "name", "parameters"}) {
			t.Errorf("openai %s function keys = %v", name, got)
		}
		a := anthropic[i]
		if got := apKeys(a); !slices.Equal(got, []string{"description", "input_schema", "name"}) {
			t.Errorf("anthropic %s keys = %v", name, got)
		}
		if fn["name"] != name || a["name"] != name || fn["description"] != m["description"] || a["description"] != m["description"] {
			t.Errorf("%s: name or description differ between formats", name)
		}
		if compactJSON(fn["parameters"]) != compactJSON(m["inputSchema"]) || compactJSON(a["input_schema"]) != compactJSON(m["inputSchema"]) {
			t.Errorf("%s: schemas differ between formats", name)
		}
	}
}

// --- tools/callBatch -------------------------------------------------------------

// Cancelling a batch stops the running member and the members after it
// never run; a running bash member's process is gone.
func TestProtoBatchCancelStopsTheRest(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	arg := fmt.Sprintf("1000.%d7", time.Now().UnixNano()%100000)
	errCh := make(chan error, 1)
	go func() {
		var out any
		// A fresh client's ids are sequential: initialize is 1, this is 2.
		_, err := c.Conn.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "read", "arguments": map[string]any{"path": "nothing.txt"}},
			map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep " + arg + "; touch late.txt"}, "callId": "b-sleep"},
			map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch after.txt"}},
			map[string]any{"name": "write", "arguments": map[string]any{"path": "written.txt", "content": "x"}},
		}}, &out)
		errCh <- err
	}()
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(arg)) > 0 }) {
		t.Fatal("the bash member never started")
	}
	c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2})
	select {
	case err := <-errCh:
		if rpcCode(err) != -32800 {
			t.Fatalf("err = %v, want -32800", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the cancelled batch did not reply")
	}
	waitGone(t, arg, 3*time.Second)
	time.Sleep(300 * time.Millisecond)
	for _, f := range []string{"late.txt", "after.txt", "written.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s exists: work ran after the batch was cancelled", f)
		}
	}
}

// A call that is not concurrency-safe waits for the ones before it, and the
// ones after it wait for it: a read after a write in one batch sees it.
func TestProtoBatchReadAfterWriteSeesIt(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	var out struct {
		Results []harness.Result `json:"results"`
	}
	calls := []any{
		map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 0.2; echo made > made.txt"}},
		map[string]any{"name": "read", "arguments": map[string]any{"path": "made.txt"}},
		map[string]any{"name": "write", "arguments": map[string]any{"path": "w.txt", "content": "written\n"}},
		map[string]any{"name": "grep", "arguments": map[string]any{"pattern": "written"}},
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 4 {
		t.Fatalf("%d results", len(out.Results))
	}
	if r := out.Results[1]; r.IsError || !strings.Contains(r.Text(), "1→made") {
		t.Errorf("read after bash: %s", r.Text())
	}
	if r := out.Results[3]; r.IsError || !strings.Contains(r.Text(), "w.txt") {
		t.Errorf("grep after write: %s", r.Text())
	}
}

// --- cancellation ids --------------------------------------------------------------

// $/cancelRequest with a string id replies -32800 to that id; an unknown id
// is harmless.
func TestProtoCancelStringAndUnknownIDs(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := apStartRaw(t, ws)
	r.initialize(t, `{"initializationOptions":{"mode":"bypass"}}`)
	r.send(`{"jsonrpc":"2.0","id":"blk-a","method":"tools/call","params":{"name":"test_block","arguments":{"seconds":20,"marker":"m.txt"}}}`)
	if _, ok := r.wait(5*time.Second, func(f map[string]any) bool { return f["method"] == "tools/progress" }); !ok {
		t.Fatal("the blocking call never started")
	}
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"no-such-id"}}`)
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":98765}}`)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`)
	if f, ok := r.reply(3, 3*time.Second); !ok || f["result"] == nil {
		t.Fatalf("after cancelling unknown ids: %v", f)
	}
	if _, done := r.reply("blk-a", 200*time.Millisecond); done {
		t.Fatal("cancelling an unknown id ended another call")
	}
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"blk-a"}}`)
	f, ok := r.reply("blk-a", 3*time.Second)
	if !ok || replyCode(f) != -32800 {
		t.Fatalf("reply to blk-a = %v, want -32800", f)
	}
	waitFile(t, filepath.Join(ws, "m.txt"), 2*time.Second)
}

// --- stdout ----------------------------------------------------------------------

// Nothing but protocol frames on stdout, whatever commands print, while the
// server logs, a tool panics and progress streams.
func TestProtoStdoutCarriesOnlyFrames(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		".agentls/tools/bad.json": `{"name": "bad", `,
		"a.txt":                   "A\n",
	})
	r := apStartRaw(t, ws, "AGENTLS_LOG_LEVEL=debug")
	r.initialize(t, `{"initializationOptions":{"mode":"bypass","unknownKey":1}}`)
	noisy := `for i in $(seq 1 3000); do echo "stdout line $i"; echo "stderr line $i" >&2; done
printf 'Content-Length: 3\r\n\r\nabc'
echo direct > /dev/stdout; echo direct-err > /dev/stderr; (echo tty > /dev/tty) 2>/dev/null; true`
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "bash", "arguments": map[string]any{"command": noisy}}})
	r.send(string(body))
	r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_panic","arguments":{}}}`)
	r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`)
	for _, id := range []int{2, 3, 4} {
		if f, ok := r.reply(id, 10*time.Second); !ok || f["result"] == nil {
			t.Fatalf("reply %d: %v; bad frames: %v", id, f, r.badFrames())
		}
	}
	r.send(`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`)
	if f, ok := r.reply(5, 3*time.Second); !ok || f["error"] != nil {
		t.Errorf("shutdown reply = %v", f)
	} else if res, has := f["result"]; !has || res != nil {
		t.Errorf("shutdown result = %v (present: %v), want null", res, has)
	}
	r.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if bad := r.badFrames(); len(bad) > 0 {
		t.Fatalf("stdout carried something other than frames: %v", bad)
	}
	n := len(r.all())
	t.Logf("%d frames, all well-formed", n)
}

// --- closing stdin ------------------------------------------------------------------

// EOF cancels everything: a running command's process group is killed, a
// pending tools/confirm does not keep the process alive, nothing is written.
func TestProtoClosingStdinKillsCommandsAndPendingAsks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "x\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	asked := make(chan struct{}, 8)
	// Registered after harness.Start, so it runs before the harness's
	// cleanup: the server may exit without cancelling the question, and the
	// client connection waits for its handlers when it closes.
	testDone := make(chan struct{})
	t.Cleanup(func() { close(testDone) })
	c.OnRequest = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		asked <- struct{}{}
		select { // never answers
		case <-ctx.Done():
		case <-testDone:
		}
		return nil, errors.New("no answer")
	}
	ctx := t.Context()
	c.Initialize(ctx, map[string]any{
		"initializationOptions": map[string]any{"permissions": map[string]any{"allow": []any{"Bash(sleep:*)"}}},
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	arg := fmt.Sprintf("1000.%d9", time.Now().UnixNano()%100000)
	go c.TryCallTool(ctx, "bash", map[string]any{"command": "sleep " + arg})
	go c.TryCallTool(ctx, "edit", editCall("a.txt", "x", "y"))
	select {
	case <-asked:
	case <-time.After(5 * time.Second):
		t.Fatal("the edit never asked")
	}
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(arg)) > 0 }) {
		t.Fatal("the command never started")
	}
	t0 := time.Now()
	c.CloseStdin()
	select {
	case <-c.Exited():
	case <-time.After(1500 * time.Millisecond):
		t.Fatal("still running 1.5 s after stdin closed")
	}
	t.Logf("exited %v after EOF", time.Since(t0))
	waitGone(t, arg, 2*time.Second)
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "x\n" {
		t.Fatalf("file changed: %q", got)
	}
}

// --- tools/confirm -------------------------------------------------------------------

// apAsker answers tools/confirm with answer(n, params) and records the
// questions.
type apAsker struct {
	mu     sync.Mutex
	asked  []map[string]any
	answer func(ctx context.Context, n int, p map[string]any) (any, error)
}

func (a *apAsker) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != "tools/confirm" {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no %s", method)
	}
	var p map[string]any
	json.Unmarshal(params, &p)
	a.mu.Lock()
	a.asked = append(a.asked, p)
	n := len(a.asked)
	f := a.answer
	a.mu.Unlock()
	return f(ctx, n, p)
}

func (a *apAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func (a *apAsker) last() map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.asked) == 0 {
		return nil
	}
	return a.asked[len(a.asked)-1]
}

func apDecide(d, msg string) func(context.Context, int, map[string]any) (any, error) {
	return func(context.Context, int, map[string]any) (any, error) {
		ans := map[string]any{"decision": d}
		if msg != "" {
			ans["message"] = msg
		}
		return ans, nil
	}
}

func apStartAsk(t *testing.T, files map[string]string, opts map[string]any) (*harness.Client, *apAsker, string, context.Context) {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, files)
	c := harness.Start(t, harness.Options{Root: ws})
	a := &apAsker{answer: apDecide("rejectOnce", "")}
	c.OnRequest = a.handle
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if opts == nil {
		opts = map[string]any{}
	}
	c.Initialize(ctx, map[string]any{
		"initializationOptions": opts,
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	return c, a, ws, ctx
}

func apSetAnswer(a *apAsker, f func(context.Context, int, map[string]any) (any, error)) {
	a.mu.Lock()
	a.answer = f
	a.mu.Unlock()
}

// tools/confirm carries the call's callId, the tool, its arguments, a reason
// and (for bash) the command preview; the reply keeps the callId.
func TestProtoConfirmRequestShape(t *testing.T) {
	t.Parallel()
	c, a, ws, ctx := apStartAsk(t, nil, nil)
	apSetAnswer(a, apDecide("allowOnce", ""))
	var r harness.Result
	args := map[string]any{"command": "touch made.txt"}
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "bash", "arguments": args, "callId": "cf-1"}, &r); err != nil {
		t.Fatal(err)
	}
	if r.IsError || r.CallID != "cf-1" {
		t.Fatalf("result %s: %s", r.CallID, r.Text())
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err != nil {
		t.Fatal("allowOnce did not run the command")
	}
	q := a.last()
	if q == nil || q["callId"] != "cf-1" || q["tool"] != "bash" || q["reason"] == "" || compactJSON(q["arguments"]) != compactJSON(args) {
		t.Fatalf("confirm params = %v", q)
	}
	prev, _ := q["preview"].(map[string]any)
	if prev["kind"] != "command" || prev["command"] != "touch made.txt" || prev["readOnly"] != false {
		t.Errorf("bash preview = %v", q["preview"])
	}
	for _, k := range []string{"destructive", "reasons"} {
		if _, ok := prev[k]; !ok {
			t.Errorf("bash preview lacks %s: %v", k, prev)
		}
	}
}

// rejectAlways: the call is an isError result with the user's message, and
// the same call is later denied without asking; a different call still asks.
func TestProtoConfirmRejectAlways(t *testing.T) {
	t.Parallel()
	c, a, ws, ctx := apStartAsk(t, map[string]string{"a.txt": "one\n"}, nil)
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	apSetAnswer(a, apDecide("rejectAlways", "never this file"))
	r := c.CallTool(ctx, "edit", editCall("a.txt", "one", "two"))
	if !r.IsError || !strings.Contains(r.Text(), "denied by the user: never this file") {
		t.Fatalf("rejectAlways: %s", r.Text())
	}
	apSetAnswer(a, apDecide("allowOnce", ""))
	r = c.CallTool(ctx, "edit", editCall("a.txt", "one", "three"))
	if !r.IsError || a.count() != 1 {
		t.Fatalf("after rejectAlways: asked %d times, %s", a.count(), r.Text())
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\n" {
		t.Fatalf("file changed: %q", got)
	}
	if r := c.CallTool(ctx, "bash", map[string]any{"command": "touch b.txt"}); r.IsError || a.count() != 2 {
		t.Fatalf("an unrelated call: asked %d times, %s", a.count(), r.Text())
	}
}

// allowAlways is as narrow as the request: the exact command line, this file.
func TestProtoConfirmAllowAlwaysIsNarrow(t *testing.T) {
	t.Parallel()
	c, a, ws, ctx := apStartAsk(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, nil)
	apSetAnswer(a, apDecide("allowAlways", ""))
	steps := []struct {
		tool  string
		args  map[string]any
		asks  bool
		allow bool
	}{
		{"bash", map[string]any{"command": "touch one.txt"}, true, true},
		{"bash", map[string]any{"command": "touch one.txt"}, false, true},
		{"bash", map[string]any{"command": "touch two.txt"}, true, false},
		{"bash", map[string]any{"command": "touch one.txt && touch three.txt"}, true, false},
		{"read", map[string]any{"path": "a.txt"}, false, true},
		{"read", map[string]any{"path": "b.txt"}, false, true},
		{"edit", editCall("a.txt", "a", "A"), true, true},
		{"edit", editCall("a.txt", "A", "AA"), false, true},
		{"edit", map[string]any{"path": "b.txt", "edits": []any{map[string]any{"oldText": "b", "newText": "B"}}}, true, false},
	}
	for i, st := range steps {
		before := a.count()
		if st.asks && !st.allow {
			apSetAnswer(a, apDecide("rejectOnce", "no"))
		} else {
			apSetAnswer(a, apDecide("allowAlways", ""))
		}
		r := c.CallTool(ctx, st.tool, st.args)
		if asked := a.count() > before; asked != st.asks {
			t.Errorf("step %d %s %v: asked=%v, want %v", i, st.tool, st.args, asked, st.asks)
		}
		if r.IsError == st.allow {
			t.Errorf("step %d %s %v: isError=%v: %s", i, st.tool, st.args, r.IsError, r.Text())
		}
	}
	for _, f := range []string{"two.txt", "three.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was created without approval", f)
		}
	}
}

// A confirm the editor fails, or answers with an unknown decision, is an
// isError result (never a protocol error) and nothing runs.
func TestProtoConfirmBadAnswersAreResults(t *testing.T) {
	t.Parallel()
	c, a, ws, ctx := apStartAsk(t, nil, nil)
	cases := []struct {
		name   string
		answer func(context.Context, int, map[string]any) (any, error)
		want   string
	}{
		{"editor error", func(context.Context, int, map[string]any) (any, error) {
			return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "dialog crashed")
		}, "did not run"},
		{"unknown decision", apDecide("maybe", ""), "maybe"},
		{"reject without a message", apDecide("rejectOnce", ""), "denied by the user"},
		{"answer not an object", func(context.Context, int, map[string]any) (any, error) { return "yes", nil }, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apSetAnswer(a, tc.answer)
			f := fmt.Sprintf("f%d.txt", i)
			r, err := c.TryCallTool(ctx, "bash", map[string]any{"command": "touch " + f})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			if !r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Fatalf("isError=%v: %s", r.IsError, r.Text())
			}
			if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

// Questions are asked one at a time (docs/protocol.md): while a question
// goes unanswered, a call that needs no approval runs, a second asking call
// waits, and cancelling the first call frees the turn for it.
func TestProtoConfirmUnansweredQuestion(t *testing.T) {
	t.Parallel()
	c, a, ws, ctx := apStartAsk(t, map[string]string{"a.txt": "A\n"}, nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	apSetAnswer(a, func(ctx context.Context, n int, p map[string]any) (any, error) {
		if n == 1 {
			select { // the first question is never answered
			case <-release:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		}
		return map[string]any{"decision": "allowOnce"}, nil
	})
	firstCtx, cancelFirst := context.WithCancel(ctx)
	defer cancelFirst()
	go c.TryCallTool(firstCtx, "bash", map[string]any{"command": "touch first.txt"})
	deadline := time.Now().Add(5 * time.Second)
	for a.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatalf("a read waited behind the unanswered question: %s", r.Text())
	}
	second := make(chan harness.Result, 1)
	go func() {
		r, _ := c.TryCallTool(ctx, "bash", map[string]any{"command": "touch second.txt"})
		second <- r
	}()
	select {
	case r := <-second:
		t.Fatalf("the second question was asked while the first was open: %s", r.Text())
	case <-time.After(300 * time.Millisecond):
	}
	cancelFirst()
	select {
	case r := <-second:
		if r.IsError {
			t.Fatalf("second call: %s", r.Text())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the first call did not free the turn")
	}
	if _, err := os.Stat(filepath.Join(ws, "second.txt")); err != nil {
		t.Fatal("second.txt missing")
	}
	if a.count() != 2 {
		t.Fatalf("asked %d times, want 2", a.count())
	}
}

// Built-in secret defaults ask (docs/tools.md, issue #6) and a workspace
// settings file cannot lift them; non-secrets and examples do not ask.
func TestProtoSecretDefaultsAsk(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".env.local": "K=v\n", ".env.example": "K=\n", "id_rsa": "k\n", "id_rsa.pub": "ssh-rsa AAAA\n",
		"cert.pem": "p\n", "server.key": "k\n", "plain.txt": "p\n", "junk/x": "x\n",
		".agentls/settings.json": `{"permissions": {"allow": ["Read(./.env.local)", "Read(./cert.pem)", "Bash(rm:*)"]}}`,
	}
	c, a, ws, ctx := apStartAsk(t, files, map[string]any{"mode": "acceptEdits"})
	cases := []struct {
		tool string
		args map[string]any
		asks bool
	}{
		{"read", map[string]any{"path": ".env.local"}, true},
		{"read", map[string]any{"path": "cert.pem"}, true},
		{"read", map[string]any{"path": "id_rsa"}, true},
		{"read", map[string]any{"path": "server.key"}, true},
		{"read", map[string]any{"path": ".env.example"}, false},
		{"read", map[string]any{"path": "id_rsa.pub"}, false},
		{"read", map[string]any{"path": "plain.txt"}, false},
		{"bash", map[string]any{"command": "cat .env.local"}, true},
		{"bash", map[string]any{"command": "rm -rf junk"}, true},
	}
	for _, tc := range cases {
		before := a.count()
		r := c.CallTool(ctx, tc.tool, tc.args)
		asked := a.count() > before
		if asked != tc.asks {
			t.Errorf("%s %v: asked=%v, want %v (%s)", tc.tool, tc.args, asked, tc.asks, r.Text())
		}
		if asked && !r.IsError {
			t.Errorf("%s %v: rejected but ran: %s", tc.tool, tc.args, r.Text())
		}
		if asked && tc.tool == "read" && !strings.Contains(fmt.Sprint(a.last()["reason"]), "secret") {
			t.Errorf("%s: reason = %v", tc.args["path"], a.last()["reason"])
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "junk")); err != nil {
		t.Error("rm ran although the user rejected it")
	}
}

// Read rules govern listings and matches, and apply to the real path of a
// symlink.
func TestProtoReadRulesGovernListingsAndSymlinks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"secret.txt": "needle-xyz\n", "pub.txt": "needle-xyz\n"})
	if err := os.Symlink("secret.txt", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	c := harness.Start(t, harness.Options{Root: ws})
	ctx := t.Context()
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass",
		"permissions": map[string]any{"deny": []any{"Read(./secret.txt)"}}}})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"ls", map[string]any{}},
		{"find", map[string]any{"pattern": "*.txt"}},
		{"grep", map[string]any{"pattern": "needle-xyz"}},
	} {
		r := c.CallTool(ctx, tc.tool, tc.args)
		// ls shows link.txt, but not the denied name it points to.
		for _, line := range strings.Split(r.Text(), "\n") {
			if strings.Contains(line, "secret.txt") || strings.Contains(line, "needle") && !strings.HasPrefix(line, "pub.txt") {
				t.Errorf("%s shows the denied file: %q", tc.tool, line)
			}
		}
		if tc.tool == "ls" && !strings.Contains(r.Text(), "link.txt@ -> (target hidden by a permission rule)") {
			t.Errorf("ls does not show the link with its target hidden:\n%s", r.Text())
		}
		if !strings.Contains(r.Text(), "pub.txt") {
			t.Errorf("%s misses pub.txt:\n%s", tc.tool, r.Text())
		}
	}
	for _, p := range []string{"secret.txt", "link.txt", filepath.Join(ws, "secret.txt")} {
		r := c.CallTool(ctx, "read", map[string]any{"path": p})
		if !r.IsError || strings.Contains(r.Text(), "needle-xyz") || !strings.Contains(r.Text(), "Read(./secret.txt)") {
			t.Errorf("read %s: %s", p, r.Text())
		}
	}
	if r := c.CallTool(ctx, "bash", map[string]any{"command": "cat secret.txt"}); strings.Contains(r.Text(), "needle-xyz") {
		t.Errorf("bash cat of a denied file: %s", r.Text())
	}
}

// --- deferred tools ------------------------------------------------------------------

func apToolDef(name string, deferred bool) string {
	b, _ := json.Marshal(map[string]any{
		"name": name, "description": "Audit protocol tool " + name + ".",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}},
		"command":     "echo " + name + " {{v}}", "readOnly": true, "deferred": deferred,
	})
	return string(b)
}

func apActive(t *testing.T, c *harness.Client, ctx context.Context) map[string]map[string]any {
	t.Helper()
	var out struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", nil, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]any{}
	for _, tool := range out.Tools {
		m[tool["name"].(string)] = tool
	}
	return m
}

// Calling a deferred tool by name works, activates it and sends
// tools/listChanged.
func TestProtoDeferredToolCalledByName(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{".agentls/tools/ap_hidden.json": apToolDef("ap_hidden", true)})
	if _, ok := apActive(t, c, ctx)["ap_hidden"]; ok {
		t.Fatal("a deferred tool is listed before activation")
	}
	r := c.CallTool(ctx, "ap_hidden", map[string]any{"v": "hi"})
	if r.IsError || !strings.Contains(r.Text(), "ap_hidden hi") {
		t.Fatalf("call by name: %s", r.Text())
	}
	if _, ok := c.WaitNote(2*time.Second, func(n harness.Note) bool { return n.Method == "tools/listChanged" }); !ok {
		t.Error("no tools/listChanged")
	}
	tool, ok := apActive(t, c, ctx)["ap_hidden"]
	if !ok || tool["_meta"].(map[string]any)["deferred"] != false {
		t.Fatalf("not active after the call: %v", tool)
	}
}

// deferThreshold: when more tools would be active than the threshold,
// non-core tools are deferred; core tools never are.
func TestProtoDeferThreshold(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 4 {
		n := fmt.Sprintf("ap_eager_%d", i)
		files[".agentls/tools/"+n+".json"] = apToolDef(n, false)
	}
	for _, tc := range []struct {
		threshold int
		active    bool
	}{{40, true}, {5, false}} {
		c, _, ctx := startWith(t, files, map[string]any{"initializationOptions": map[string]any{"mode": "bypass", "deferThreshold": tc.threshold}})
		act := apActive(t, c, ctx)
		for i := range 4 {
			if _, ok := act[fmt.Sprintf("ap_eager_%d", i)]; ok != tc.active {
				t.Errorf("threshold %d: ap_eager_%d active=%v, want %v", tc.threshold, i, ok, tc.active)
			}
		}
		for _, core := range []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"} {
			if _, ok := act[core]; !ok {
				t.Errorf("threshold %d: core tool %s deferred", tc.threshold, core)
			}
		}
	}
}

// --- workspace/externalChange --------------------------------------------------------

type apChange struct {
	URI       string `json:"uri"`
	Kind      string `json:"kind"`
	ReadStale bool   `json:"readStale"`
}

func apWaitChange(t *testing.T, c *harness.Client, since time.Time, suffix, kind string) {
	t.Helper()
	n, ok := c.WaitNote(3*time.Second, func(n harness.Note) bool {
		var p apChange
		json.Unmarshal(n.Params, &p)
		return n.Method == "workspace/externalChange" && n.At.After(since) && strings.HasSuffix(p.URI, suffix) && p.Kind == kind
	})
	if !ok {
		var got []string
		for _, n := range c.Notes("workspace/externalChange") {
			got = append(got, string(n.Params))
		}
		t.Fatalf("no %s %s after %v; got %v", kind, suffix, since.Format("15:04:05.000"), got)
	}
	var p apChange
	json.Unmarshal(n.Params, &p)
	if !p.ReadStale || !strings.HasPrefix(p.URI, "file://") {
		t.Errorf("notification = %s", n.Params)
	}
}

// created and deleted for read files, nothing for unread files or a touch
// that leaves the content; files of an added folder are watched too.
func TestProtoExternalChangeKinds(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "t.txt": "t\n"})
	for _, f := range []string{"a.txt", "b.txt", "t.txt"} {
		c.CallTool(ctx, "read", map[string]any{"path": f})
	}
	t0 := time.Now()
	os.Remove(filepath.Join(ws, "b.txt"))
	apWaitChange(t, c, t0, "/b.txt", "deleted")
	t1 := time.Now()
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b again, different\n"), 0o644)
	apWaitChange(t, c, t1, "/b.txt", "created")

	os.WriteFile(filepath.Join(ws, "never-read.txt"), []byte("n\n"), 0o644)
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(ws, "t.txt"), future, future) // a touch: same content
	t2 := time.Now()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a changed\n"), 0o644)
	apWaitChange(t, c, t2, "/a.txt", "changed")
	time.Sleep(150 * time.Millisecond)
	for _, n := range c.Notes("workspace/externalChange") {
		if s := string(n.Params); strings.Contains(s, "never-read.txt") || strings.Contains(s, "/t.txt") {
			t.Errorf("announced: %s", s)
		}
	}

	other := t.TempDir()
	writeFiles(t, other, map[string]string{"o.txt": "o\n"})
	armed := len(c.Notes(harness.WatcherReady))
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": "file://" + other, "name": "other"}}, "removed": []any{},
	}})
	// Changes are announced from the re-armed watchers' watcherReady on
	// (docs/protocol.md); before it, staleness is caught by the stamps.
	c.AwaitWatcher(armed + 1)
	if r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(other, "o.txt")}); r.IsError {
		t.Fatal(r.Text())
	}
	t3 := time.Now()
	os.WriteFile(filepath.Join(other, "o.txt"), []byte("o changed\n"), 0o644)
	apWaitChange(t, c, t3, "/o.txt", "changed")
}

// Removing a folder refuses edits and writes there too, and adding one
// makes it writable.
func TestProtoFoldersGovernWrites(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n"})
	other := t.TempDir()
	target := filepath.Join(other, "new.txt")
	if r := c.CallTool(ctx, "write", map[string]any{"path": target, "content": "x\n"}); !r.IsError {
		t.Fatalf("write outside the workspace: %s", r.Text())
	}
	folder := map[string]any{"uri": "file://" + other, "name": "other"}
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{folder}, "removed": []any{}}})
	if r := c.CallTool(ctx, "write", map[string]any{"path": target, "content": "x\n"}); r.IsError {
		t.Fatalf("write in an added folder: %s", r.Text())
	}
	c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{folder}}})
	if r := c.CallTool(ctx, "edit", map[string]any{"path": target, "edits": []any{map[string]any{"oldText": "x", "newText": "y"}}}); !r.IsError {
		t.Fatalf("edit in a removed folder: %s", r.Text())
	}
	if got := readFile(t, target); got != "x\n" {
		t.Fatalf("content = %q", got)
	}
	if r := c.CallTool(ctx, "grep", map[string]any{"pattern": "x", "path": other}); !r.IsError {
		t.Errorf("grep in a removed folder: %s", r.Text())
	}
}

// --- audit log CLI -----------------------------------------------------------------

// `agentls audit --tail N` prints the last N entries.
func TestProtoAuditTailCLI(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	dir := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "A\n"})
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"AGENTLS_AUDIT_DIR=" + dir}})
	ctx := t.Context()
	c.Initialize(ctx, bypass())
	for i, tool := range []string{"read", "ls", "grep"} {
		args := map[string]any{"path": "a.txt"}
		if tool == "grep" {
			args = map[string]any{"pattern": "A"}
		} else if tool == "ls" {
			args = map[string]any{}
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": args, "callId": fmt.Sprint("t", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c.Shutdown(ctx)
	out, err := exec.Command(harness.Binary(t), "audit", "--tail", "2", "--dir", dir, "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"t1"`) || !strings.Contains(lines[1], `"t2"`) {
		t.Fatalf("audit --tail 2 --json:\n%s", out)
	}
	out, err = exec.Command(harness.Binary(t), "audit", "--tail", "1", "--dir", dir).Output()
	if err != nil || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 || !strings.Contains(string(out), "grep") {
		t.Fatalf("audit --tail 1: %v\n%s", err, out)
	}
}

type rawLSP struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
	// frames read while looking for something else
	got chan map[string]any
}

func rawLSPStart(t *testing.T, ws string) *rawLSP {
	t.Helper()
	cmd := harness.Command(t, []string{"--root", ws})
	cmd.Stderr = io.Discard
	in, out := harness.StartPiped(t, cmd)
	r := &rawLSP{t: t, in: in, out: bufio.NewReader(out), cmd: cmd, got: make(chan map[string]any, 1000)}
	go func() {
		defer close(r.got)
		for {
			m, err := r.readFrame()
			if err != nil {
				return
			}
			r.got <- m
		}
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return r
}

func (r *rawLSP) readFrame() (map[string]any, error) {
	n := -1
	for {
		line, err := r.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r.out, buf); err != nil {
		return nil, err
	}
	var m any
	if err := json.Unmarshal(buf, &m); err != nil {
		return nil, err
	}
	if arr, ok := m.([]any); ok {
		return map[string]any{"batch": arr}, nil
	}
	return m.(map[string]any), nil
}

func (r *rawLSP) send(body string) {
	r.t.Helper()
	if _, err := fmt.Fprintf(r.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		r.t.Fatal(err)
	}
}

// next returns the next frame satisfying pred, collecting the others.
func (r *rawLSP) next(d time.Duration, pred func(map[string]any) bool, seen *[]map[string]any) map[string]any {
	r.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-r.got:
			if !ok {
				return nil
			}
			if seen != nil {
				*seen = append(*seen, m)
			}
			if pred(m) {
				return m
			}
		case <-deadline:
			return nil
		}
	}
}

func idIs(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["id"] == id }
}

func TestProtocolRobustness(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := rawLSPStart(t, ws)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := r.next(10*time.Second, idIs(1), nil); m == nil || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)

	isWarning := func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "window/logMessage" && p["type"] == float64(2)
	}
	for name, note := range map[string]string{
		"cancel without id":   `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}`,
		"cancel with bad id":  `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"x":1}}}`,
		"didOpen bad params":  `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":5}}`,
		"didChange bad param": `{"jsonrpc":"2.0","method":"textDocument/didChange","params":"nonsense"}`,
		"folders bad params":  `{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":{"event":5}}`,
	} {
		r.send(note)
		var seen []map[string]any
		if m := r.next(2*time.Second, isWarning, &seen); m == nil {
			t.Errorf("%s: no window/logMessage warning; frames: %v", name, seen)
		}
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
		if m := r.next(5*time.Second, idIs(2), nil); m == nil || m["result"] == nil {
			t.Fatalf("%s: the connection did not go on: %v", name, m)
		}
	}

	// A batch none of whose members is a JSON-RPC message: one -32600 each.
	r.send(`[1, 2]`)
	var seen []map[string]any
	var errs []map[string]any
	r.next(3*time.Second, func(m map[string]any) bool {
		if b, ok := m["batch"].([]any); ok {
			for _, e := range b {
				if em, ok := e.(map[string]any); ok {
					errs = append(errs, em)
				}
			}
		} else if m["error"] != nil {
			errs = append(errs, m)
		}
		return len(errs) >= 2
	}, &seen)
	if len(errs) != 2 {
		t.Errorf("batch [1, 2]: %d error replies, want 2: %v", len(errs), seen)
	}
	for _, e := range errs {
		if replyCode(e) != -32600 {
			t.Errorf("batch member reply %v, want -32600", e)
		}
	}

	r.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	if m := r.next(5*time.Second, idIs(3), nil); m == nil || m["error"] != nil {
		t.Fatalf("shutdown: %v", m)
	}
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}`,
	} {
		r.send(body)
		if m := r.next(5*time.Second, idIs(float64(4+i)), nil); replyCode(m) != -32600 {
			t.Errorf("after shutdown %s -> %v, want -32600", body, m)
		}
	}
	r.send(`{"jsonrpc":"2.0","method":"exit"}`)
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case <-done:
		if c := r.cmd.ProcessState.ExitCode(); c != 0 {
			t.Errorf("exit after shutdown: code %d, want 0", c)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("exit did not end the process")
	}
}
