package e2e

// Contract tests of tools/callBatch, callId stamping, $/cancelRequest and
// tools/confirm (docs/protocol.md), over a raw LSP-framed client so wire
// order and -32800 replies are seen exactly as an editor sees them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

const (
	batchWait      = 10 * time.Second       // generous: a loaded 2-core machine
	batchQuick     = 2 * time.Second        // "at once" for a -32800 after $/cancelRequest
	batchSettle    = 700 * time.Millisecond // how long an event that must not happen is given
	batchCancelled = -32800
)

// batchFrame is one JSON-RPC message read from the server, in wire order.
type batchFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Nth int `json:"-"` // position among the frames of the same method
}

func (f batchFrame) isReply() bool { return f.Method == "" && len(f.ID) > 0 }

// batchRaw is a minimal LSP-framed client over the agentls process's pipes.
type batchRaw struct {
	*rawClient[batchFrame]
	ws string
}

type batchStartOpts struct {
	mode    string
	ask     []string
	confirm bool
	env     []string
}

// batchStart spawns agentls on a fresh workspace holding files and initializes it.
func batchStart(t *testing.T, files map[string]string, o batchStartOpts) *batchRaw {
	t.Helper()
	ws := newWorkspace(t, files)
	r := &batchRaw{startRaw(t, []string{"--root", ws}, o.env, lenientFrames(batchDecoder())), ws}
	t.Cleanup(func() {
		if r.close(); t.Failed() {
			t.Logf("agentls stderr (tail):\n%s", lastBytes(r.stderr.String(), 3000))
		}
	})
	opts := map[string]any{}
	if o.mode != "" {
		opts["mode"] = o.mode
	}
	if o.ask != nil {
		opts["permissions"] = map[string]any{"ask": o.ask}
	}
	caps := map[string]any{}
	if o.confirm {
		caps = map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}
	}
	f := r.call("init", "initialize", map[string]any{"capabilities": caps, "initializationOptions": opts})
	if f.Error != nil {
		t.Fatalf("initialize: %+v", *f.Error)
	}
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return r
}

// batchDecoder decodes frames, numbering them per method.
func batchDecoder() func(body []byte) []batchFrame {
	nth := map[string]int{}
	return func(body []byte) []batchFrame {
		var f batchFrame
		if err := json.Unmarshal(body, &f); err != nil {
			f.Method = "!unparsable"
			f.Params = body
		}
		f.Nth = nth[f.Method]
		nth[f.Method]++
		return []batchFrame{f}
	}
}

// request sends a request with the given id (a string or an int).
func (r *batchRaw) request(id any, method string, params any) {
	r.t.Helper()
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (r *batchRaw) cancel(id any) {
	r.t.Helper()
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": id}})
}

func batchIDIs(raw json.RawMessage, id any) bool {
	want, _ := json.Marshal(id)
	return bytes.Equal(bytes.TrimSpace(raw), want)
}

// reply waits for the reply to request id.
func (r *batchRaw) reply(id any, timeout time.Duration) (batchFrame, bool) {
	return r.wait(timeout, func(f batchFrame) bool { return f.isReply() && batchIDIs(f.ID, id) })
}

// call sends a request and waits for its reply, failing the test without one.
func (r *batchRaw) call(id any, method string, params any) batchFrame {
	r.t.Helper()
	r.request(id, method, params)
	f, ok := r.reply(id, batchWait)
	if !ok {
		r.t.Fatalf("no reply to %s (id %v) within %v", method, id, batchWait)
	}
	return f
}

// notes returns the notifications (or server requests) with the given method.
func (r *batchRaw) notes(method string) []batchFrame {
	var out []batchFrame
	for _, f := range r.all() {
		if f.Method == method {
			out = append(out, f)
		}
	}
	return out
}

// batchResult is a tool result (content and isError as MCP's) with its
// callId and details.
type batchResult struct {
	mcpRawToolResult
	CallID  string         `json:"callId"`
	Details map[string]any `json:"details"`
}

func (r *batchRaw) decode(f batchFrame, v any) {
	r.t.Helper()
	if f.Error != nil {
		r.t.Fatalf("protocol error %d: %s", f.Error.Code, f.Error.Message)
	}
	if err := json.Unmarshal(f.Result, v); err != nil {
		r.t.Fatalf("decode %s: %v", f.Result, err)
	}
}

// tool runs tools/call and returns the result (a protocol error fails the test).
func (r *batchRaw) tool(id any, name string, args any) batchResult {
	r.t.Helper()
	var res batchResult
	r.decode(r.call(id, "tools/call", map[string]any{"name": name, "arguments": args}), &res)
	return res
}

// callBatch runs tools/callBatch through the harness client and returns
// one result per call.
func callBatch(t *testing.T, ctx context.Context, c *harness.Client, calls ...map[string]any) []harness.Result {
	t.Helper()
	var out struct {
		Results []harness.Result `json:"results"`
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatalf("tools/callBatch: %v", err)
	}
	if len(out.Results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(out.Results), len(calls))
	}
	return out.Results
}

func batchCall(name string, args any, callID string) map[string]any {
	c := map[string]any{"name": name, "arguments": args}
	if callID != "" {
		c["callId"] = callID
	}
	return c
}

// batch runs tools/callBatch and returns the results.
func (r *batchRaw) batch(id any, calls ...map[string]any) []batchResult {
	r.t.Helper()
	var out struct {
		Results []batchResult `json:"results"`
	}
	r.decode(r.call(id, "tools/callBatch", map[string]any{"calls": calls}), &out)
	if len(out.Results) != len(calls) {
		r.t.Fatalf("callBatch: %d results for %d calls", len(out.Results), len(calls))
	}
	return out.Results
}

func (r *batchRaw) file(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(r.ws, name))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// alive proves the server still serves: a fresh read answers.
func (r *batchRaw) alive(id any, path, want string) {
	r.t.Helper()
	res := r.tool(id, "read", map[string]any{"path": path})
	if res.IsError || !strings.Contains(res.text(), want) {
		r.t.Fatalf("server no longer serves: read %s = %q", path, res.text())
	}
}

// expectCancelled waits for the -32800 reply to id within batchQuick of now.
func (r *batchRaw) expectCancelled(id any) {
	r.t.Helper()
	start := time.Now()
	f, ok := r.reply(id, batchWait)
	if !ok {
		r.t.Fatalf("no reply to cancelled request %v within %v", id, batchWait)
	}
	if f.Error == nil || f.Error.Code != batchCancelled {
		r.t.Fatalf("cancelled request %v: want error -32800, got result=%s error=%+v", id, f.Result, f.Error)
	}
	if d := time.Since(start); d > batchQuick {
		r.t.Errorf("-32800 for %v took %v, want ≤ %v", id, d, batchQuick)
	}
}

// ---- tools/callBatch ----

// TestBatchResultsInCallOrder: one result per call in call order, however
// the calls finish; a call that is invalid, unknown or panics is its own
// isError result beside the others, and the server goes on. Every result
// has details.durationMs and a callId: the one given (on tools/call too),
// else a unique generated `call-N` (docs/protocol.md), never a given one.
func TestBatchResultsInCallOrder(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "alpha needle\n", "b.txt": "beta\n", "sub/c.txt": "gamma needle\n"}
	r := batchStart(t, files, batchStartOpts{mode: "bypass"})
	calls := []struct {
		call    map[string]any
		isError bool
		want    string
	}{
		// A slow call first and one last: the finishing order differs.
		{batchCall("bash", map[string]any{"command": "sleep 0.4; echo first-out"}, "k0"), false, "first-out"},
		{batchCall("read", map[string]any{"path": "b.txt"}, "call-1"), false, "beta"}, // shaped like a generated one
		{batchCall("grep", map[string]any{"pattern": "needle"}, ""), false, "sub/c.txt:1: gamma needle"},
		{batchCall("find", map[string]any{"pattern": "*.txt"}, ""), false, "sub/c.txt"},
		{batchCall("no_such_tool", map[string]any{}, ""), true, `no_such_tool`},
		{batchCall("test_panic", map[string]any{}, "k5"), true, "internal error in test_panic"},
		{batchCall("read", map[string]any{"path": "a.txt", "offset": -3}, "k6"), true, "`offset` must be a line number ≥ 1, got -3"}, // docs/tools.md's example
		{batchCall("read", "not an object", "k7"), true, "arguments"},
		{map[string]any{"arguments": map[string]any{"path": "a.txt"}, "callId": "k8"}, true, "unknown tool"}, // no name
		{batchCall("read", map[string]any{"path": "missing.txt"}, "k9"), true, "missing.txt"},
		{batchCall("ls", map[string]any{}, "k10"), false, "sub/"},
		{batchCall("bash", map[string]any{"command": "sleep 0.2; echo last-out"}, "k11"), false, "last-out"},
	}
	var list []map[string]any
	for _, c := range calls {
		list = append(list, c.call)
	}
	res := r.batch(1, list...)
	seen := map[string]bool{"given-7": true} // the given callIds
	for i, x := range res {
		given, _ := calls[i].call["callId"].(string)
		seen[given] = given != ""
		if given != "" && x.CallID != given || x.IsError != calls[i].isError || !strings.Contains(x.text(), calls[i].want) {
			t.Errorf("results[%d] callId %q isError %v %q; want %q, isError %v, %q", i, x.CallID, x.IsError, x.text(), given, calls[i].isError, calls[i].want)
		}
	}
	alone := r.tool(2, "test_panic", map[string]any{})
	if !alone.IsError {
		t.Errorf("test_panic alone: isError false")
	}
	plain := r.tool(3, "read", map[string]any{"path": "a.txt"})
	var echoed batchResult
	r.decode(r.call(4, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "given-7"}), &echoed)
	if echoed.CallID != "given-7" {
		t.Errorf("tools/call's given callId not echoed: %q", echoed.CallID)
	}
	for _, x := range append(res, alone, plain, echoed) {
		if _, ok := x.Details["durationMs"].(float64); !ok {
			t.Errorf("result %q (isError %v) lacks details.durationMs: %v", x.CallID, x.IsError, x.Details)
		}
		if seen[x.CallID] {
			continue // given
		}
		if n, ok := strings.CutPrefix(x.CallID, "call-"); !ok {
			t.Errorf("generated callId %q, docs/protocol.md: generated as `call-N`", x.CallID)
		} else if _, err := strconv.Atoi(n); err != nil {
			t.Errorf("generated callId %q: N is not a number", x.CallID)
		}
		seen[x.CallID] = true
	}
	if delete(seen, ""); len(seen) != len(res)+3 {
		t.Errorf("%d distinct callIds for %d results: %v", len(seen), len(res)+3, seen)
	}
	r.alive(5, "b.txt", "beta")
}

func TestBatchUnsafeCallsInOrder(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "old line\n"}, batchStartOpts{mode: "bypass"})
	// Each call sees what the calls before it did: want is in its result.
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"bash", map[string]any{"command": "sleep 0.5; echo A >> log.txt"}, ""},
		{"bash", map[string]any{"command": "sleep 0.5; echo B >> log.txt"}, ""},
		{"write", map[string]any{"path": "new.txt", "content": "written in batch\n"}, ""},
		{"read", map[string]any{"path": "new.txt"}, "written in batch"},
		{"read", map[string]any{"path": "a.txt"}, "old line"},
		{"edit", editCall("a.txt", "old line", "new line"), ""},
		{"read", map[string]any{"path": "a.txt"}, "new line"},
		{"write", map[string]any{"path": "same.txt", "content": "1\n"}, ""},
		{"write", map[string]any{"path": "same.txt", "content": "2\n"}, ""},
		{"write", map[string]any{"path": "same.txt", "content": "3\n"}, ""},
		{"bash", map[string]any{"command": "sleep 0.3; echo late > seq.txt"}, ""},
		{"read", map[string]any{"path": "seq.txt"}, "late"},
		{"bash", map[string]any{"command": "cat same.txt > copy.txt"}, ""},
		{"write", map[string]any{"path": "w.txt", "content": "written\n"}, ""},
		{"grep", map[string]any{"pattern": "written"}, "w.txt"},
	}
	var list []map[string]any
	for _, c := range calls {
		list = append(list, batchCall(c.tool, c.args, ""))
	}
	start := time.Now()
	res := r.batch(1, list...)
	// Two `sleep 0.5` bash calls, not concurrency-safe, run one after the other.
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("the batch took %v: its two bash sleeps ran in parallel", elapsed)
	}
	for i, x := range res {
		if x.IsError || !strings.Contains(x.text(), calls[i].want) {
			t.Errorf("results[%d] %s (isError %v) = %q, want %q in it", i, calls[i].tool, x.IsError, x.text(), calls[i].want)
		}
	}
	for name, want := range map[string]string{"same.txt": "3\n", "copy.txt": "3\n", "log.txt": "A\nB\n"} {
		if got, _ := r.file(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// ---- $/cancelRequest ----

// A cancelled tools/call or batch answers -32800 at once and its work
// stops: the command's processes are gone, what it changed stays (a
// command is stopped, not undone, docs/protocol.md "Cancellation"), the
// batch members after it never run.
func TestBatchCancelAnswersAtOnceAndStopsTheWork(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	// The -32800 comes at once even when the command ignores SIGTERM or has
	// a child; the process group is killed after the grace (a cancelled
	// test_block is TestProtocolCancelRunningCall's).
	for i, c := range []struct{ name, command, marker string }{
		{"bash ignoring SIGTERM", "trap '' TERM; sleep 100.4712; echo", "100.4712"},
		{"bash with a background child", "sleep 100.4713 & sleep 100.4713; echo", "100.4713"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r.request(7+i, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": c.command}})
			if !waitUntil(batchWait, func() bool { return len(processesWithArg(c.marker)) > 0 }) {
				t.Fatal("the command never started")
			}
			r.cancel(7 + i)
			r.expectCancelled(7 + i)
			if !waitUntil(6*time.Second, func() bool { return len(processesWithArg(c.marker)) == 0 }) {
				t.Errorf("the command's process survived the cancel")
			}
		})
	}
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("read", map[string]any{"path": "nothing.txt"}, ""),
		batchCall("bash", map[string]any{"command": "echo hi > made.txt; sleep 100.5822; touch late.txt"}, ""),
		batchCall("test_block", map[string]any{}, ""),
		batchCall("test_block", map[string]any{}, ""),
		batchCall("bash", map[string]any{"command": "touch after.txt"}, ""),
		batchCall("write", map[string]any{"path": "written.txt", "content": "x"}, ""),
	}})
	if !waitUntil(batchWait, func() bool { return len(processesWithArg("100.5822")) > 0 }) {
		t.Fatal("the batch's first command never started")
	}
	r.cancel(1)
	r.expectCancelled(1)
	if !waitUntil(3*time.Second, func() bool { return len(processesWithArg("100.5822")) == 0 }) {
		t.Errorf("the batch's running command survived the cancel")
	}
	if _, made := r.file("made.txt"); !made {
		t.Errorf("made.txt, written before the cancel, is gone")
	}
	// A parallel group of blocking calls is cancelled as a whole too.
	r.request(2, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("test_block", map[string]any{}, ""),
		batchCall("test_block", map[string]any{}, ""),
		batchCall("read", map[string]any{"path": "a.txt"}, ""),
	}})
	time.Sleep(200 * time.Millisecond)
	r.cancel(2)
	r.expectCancelled(2)
	time.Sleep(batchSettle)
	for _, n := range []string{"late.txt", "after.txt", "written.txt"} {
		if _, ok := r.file(n); ok {
			t.Errorf("%s exists: work of the batch ran after it was cancelled", n)
		}
	}
	r.alive(9, "a.txt", "x")
}

// TestBatchCancelledWriteLeavesNothing: a big write cancelled at once is
// either -32800 with no file or a complete file; never a temp file.
func TestBatchCancelledWriteLeavesNothing(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"d/keep.txt": "keep\n"}, batchStartOpts{mode: "bypass"})
	content := strings.Repeat("0123456789abcdef\n", 1<<19) // 8.5 MB
	for i := range 3 {
		name := fmt.Sprintf("d/big%d.txt", i)
		r.request(10+i, "tools/call", map[string]any{"name": "write", "arguments": map[string]any{"path": name, "content": content}})
		r.cancel(10 + i)
		f, ok := r.reply(10+i, batchWait)
		if !ok {
			t.Fatal("no reply")
		}
		got, exists := r.file(name)
		switch {
		case f.Error != nil && f.Error.Code == batchCancelled:
			if exists {
				t.Errorf("%s: -32800 but the file exists (%d bytes)", name, len(got))
			}
		case f.Error == nil:
			if got != content {
				t.Errorf("%s: write answered but the file has %d of %d bytes", name, len(got), len(content))
			}
		default:
			t.Errorf("%s: unexpected error %+v", name, *f.Error)
		}
		for _, n := range dirNames(t, filepath.Join(r.ws, "d")) {
			if n != "keep.txt" && !strings.HasPrefix(n, "big") || strings.HasPrefix(n, "big") && !strings.HasSuffix(n, ".txt") {
				t.Errorf("stray file in d/: %s", n)
			}
		}
	}
}

// ---- tools/confirm ----

type batchConfirm struct {
	ID      json.RawMessage
	CallID  string         `json:"callId"`
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"arguments"`
	Reason  string         `json:"reason"`
	Rule    string         `json:"rule"`
	Preview map[string]any `json:"preview"`
}

// nextConfirm waits for the n-th tools/confirm request (0-based).
func (r *batchRaw) nextConfirm(n int, timeout time.Duration) (batchConfirm, bool) {
	r.t.Helper()
	f, ok := r.wait(timeout, func(f batchFrame) bool { return f.Method == "tools/confirm" && f.Nth == n })
	if !ok {
		return batchConfirm{}, false
	}
	var c batchConfirm
	json.Unmarshal(f.Params, &c)
	c.ID = f.ID
	return c, true
}

func (r *batchRaw) answer(c batchConfirm, result any) {
	r.t.Helper()
	r.sendJSON(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": result})
}

// TestBatchConfirmBadAnswers: an error or garbage answer fails the call
// cleanly, changes nothing, and the server keeps serving.
func TestBatchConfirmBadAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		raw  string // the reply body after "id":
		want string // in the result text
	}{
		{"error", `"error":{"code":-32603,"message":"dialog crashed"}`, "did not run"},
		{"unknown decision", `"result":{"decision":"maybe"}`, "maybe"},
		{"number", `"result":42`, ""},
		{"string", `"result":"yes"`, ""},
		{"null", `"result":null`, ""},
		{"no decision", `"result":{}`, ""},
		{"reject without a message", `"result":{"decision":"rejectOnce"}`, "denied by the user"},
	}
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Bash(touch:*)"}, confirm: true})
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := 10 + i
			name := fmt.Sprintf("bad%d.txt", i)
			r.request(id, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch " + name}})
			q, ok := r.nextConfirm(i, batchWait)
			if !ok {
				t.Fatal("no tools/confirm")
			}
			r.writeFrame([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, q.ID, c.raw)))
			f, ok := r.reply(id, batchWait)
			if !ok {
				t.Fatal("no reply after a bad confirm answer")
			}
			var res batchResult
			r.decode(f, &res)
			if !res.IsError || res.text() == "" || !strings.Contains(res.text(), c.want) {
				t.Errorf("bad answer %s: want an isError result with a message naming %q, got %+v", c.name, c.want, res)
			}
			t.Logf("%s → %q", c.name, res.text())
			if _, ok := r.file(name); ok {
				t.Errorf("the call ran after a bad answer")
			}
			r.alive(100+i, "a.txt", "x")
		})
	}
}

// TestBatchConfirmQueue: one question is open at a time. While it is,
// calls that need no approval run, and calls that need one wait their turn;
// a waiting call cancelled ends -32800 without being asked; cancelling the
// asking call withdraws its question ($/cancelRequest), a late answer to it
// changes nothing, and the next waiting call is asked; an allowAlways
// settles an identical waiting call without asking again.
func TestBatchConfirmQueue(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "default", confirm: true})
	bash := func(id int, cmd string) {
		r.request(id, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}})
	}
	bash(1, "touch never.txt")
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm")
	}
	if q.Rule != "mode:default" {
		t.Errorf("tools/confirm rule = %q, want mode:default (docs/protocol.md)", q.Rule)
	}
	bash(2, "touch cancelled.txt")
	same := "touch same.txt && echo ran >> log.txt"
	bash(3, same)
	bash(4, same)
	r.alive(5, "a.txt", "x")
	if res := r.tool(6, "bash", map[string]any{"command": "echo free"}); res.IsError || !strings.Contains(res.text(), "free") {
		t.Errorf("a read-only command waited behind the open question: %q", res.text())
	}
	if _, two := r.nextConfirm(1, batchSettle); two {
		t.Errorf("a second tools/confirm while the first is open")
	}
	r.cancel(2)
	r.expectCancelled(2)
	r.cancel(1)
	r.expectCancelled(1)
	if _, ok := r.wait(batchWait, func(f batchFrame) bool {
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(f.Params, &p)
		return f.Method == "$/cancelRequest" && bytes.Equal(p.ID, q.ID)
	}); !ok {
		t.Errorf("no $/cancelRequest for the confirm request %s after its call was cancelled", q.ID)
	}
	r.answer(q, map[string]any{"decision": "allowOnce"})
	q2, ok := r.nextConfirm(1, batchWait)
	if !ok {
		t.Fatal("the waiting call was never asked after the open question's call was cancelled")
	}
	if strings.Contains(compactJSON(q2.Args), "cancelled.txt") {
		t.Errorf("the cancelled waiting call was asked about: %v", q2.Args)
	}
	r.answer(q2, map[string]any{"decision": "allowAlways"})
	for _, id := range []int{3, 4} {
		if f, ok := r.reply(id, batchWait); !ok || f.Error != nil {
			t.Errorf("call %d: %+v", id, f)
		}
	}
	if n := len(r.notes("tools/confirm")); n != 2 {
		t.Errorf("%d tools/confirm requests, want 2 (allowAlways settles the waiting identical call)", n)
	}
	if log, _ := r.file("log.txt"); log != "ran\nran\n" {
		t.Errorf("log = %q", log)
	}
	for _, n := range []string{"never.txt", "cancelled.txt"} {
		if _, ok := r.file(n); ok {
			t.Errorf("%s exists: a cancelled call ran", n)
		}
	}
}

// TestBatchCancelAfterCommit: a batch that committed a change answers
// with its results, the cancelled calls among them as cancelled; the change's
// tools/details went out as soon as it existed, while the batch still ran.
func TestBatchCancelAfterCommit(t *testing.T) {
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("write", map[string]any{"path": "c.txt", "content": "committed\n"}, "w"),
		batchCall("test_block", map[string]any{}, "blk"),
	}})
	if _, ok := r.wait(batchWait, func(f batchFrame) bool {
		return f.Method == "tools/details" && strings.Contains(string(f.Params), `"callId":"w"`)
	}); !ok {
		t.Fatal("no tools/details for the batch's write while the batch still ran")
	}
	r.cancel(1)
	f, ok := r.reply(1, batchWait)
	if !ok {
		t.Fatal("no reply")
	}
	got, exists := r.file("c.txt")
	if f.Error != nil {
		if f.Error.Code == batchCancelled && exists {
			t.Errorf("-32800 (\"nothing was changed\") but c.txt = %q", got)
		}
		t.Fatalf("batch that committed a write answered %+v, want its results", *f.Error)
	}
	var out struct {
		Results []batchResult `json:"results"`
	}
	r.decode(f, &out)
	if len(out.Results) != 2 || out.Results[0].IsError || got != "committed\n" || !out.Results[1].IsError || out.Results[1].CallID != "blk" {
		t.Errorf("results = %+v, file %q", out.Results, got)
	}
}

// TestBatchRunsSafeCallsSideBySide: concurrency-safe calls of one batch
// run in parallel, at most GOMAXPROCS × 2 at once, and their results come
// back in call order.
func TestBatchRunsSafeCallsSideBySide(t *testing.T) {
	slow(t)
	// Not parallel: it times calls running side by side, which busy neighbours on 2 cores stretch.
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	t.Run("four test_block of 0.4 s", func(t *testing.T) {
		var calls []map[string]any
		for i := range 4 {
			calls = append(calls, batchCall("test_block", map[string]any{"seconds": 0.4}, fmt.Sprint("p", i)))
		}
		t0 := time.Now()
		res := r.batch(1, calls...)
		if d := time.Since(t0); d > 1200*time.Millisecond {
			t.Errorf("4 concurrency-safe 0.4 s calls took %v (not parallel)", d)
		}
		for i, x := range res {
			if x.CallID != fmt.Sprint("p", i) {
				t.Errorf("result %d has callId %q", i, x.CallID)
			}
		}
	})
	t.Run("at most GOMAXPROCS x 2 at once", func(t *testing.T) {
		r := batchStart(t, nil, batchStartOpts{env: []string{"GOMAXPROCS=1"}})
		var calls []map[string]any
		for range 3 {
			calls = append(calls, batchCall("bash", map[string]any{"command": "sleep 1"}, ""))
		}
		t0 := time.Now()
		res := r.batch(1, calls...)
		el := time.Since(t0)
		for i, x := range res {
			if x.IsError {
				t.Fatalf("call %d: %s", i, x.text())
			}
		}
		// Two at once: two rounds (~2 s); three at once would be ~1 s, serial ~3 s.
		if el < 1900*time.Millisecond || el > 2900*time.Millisecond {
			t.Errorf("3 x sleep 1 with GOMAXPROCS=1 took %v, want about 2 s (2 at once)", el)
		}
	})
}
