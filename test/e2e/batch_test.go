package e2e

// Contract tests of the executor and the call-scoped protocol:
// tools/callBatch, callId stamping, tools/progress, tools/details,
// $/cancelRequest and tools/confirm, as docs/protocol.md and docs/protocol.md
// state them. Most tests use a raw LSP-framed client (batchRaw) so that wire
// order, the -32800 reply of a cancelled request and the server's own
// $/cancelRequest are visible exactly as an editor sees them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
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
	Seq int       `json:"-"` // position in wire order
	Nth int       `json:"-"` // position among the frames of the same method
	At  time.Time `json:"-"`
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
}

// batchStart spawns agentls on a fresh workspace holding files and initializes it.
func batchStart(t *testing.T, files map[string]string, o batchStartOpts) *batchRaw {
	t.Helper()
	ws := newWorkspace(t, files)
	r := &batchRaw{startRaw(t, []string{"--root", ws}, nil, lenientFrames(batchDecoder())), ws}
	t.Cleanup(func() {
		r.close()
		if s := r.stderr.String(); t.Failed() && s != "" {
			if len(s) > 3000 {
				s = s[len(s)-3000:]
			}
			t.Logf("agentls stderr (tail):\n%s", s)
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
	r.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return r
}

// batchDecoder decodes frames, numbering them in wire order and per method.
func batchDecoder() func(body []byte) []batchFrame {
	seq, nth := 0, map[string]int{}
	return func(body []byte) []batchFrame {
		var f batchFrame
		if err := json.Unmarshal(body, &f); err != nil {
			f.Method = "!unparsable"
			f.Params = body
		}
		f.Seq, f.Nth, f.At = seq, nth[f.Method], time.Now()
		seq++
		nth[f.Method]++
		return []batchFrame{f}
	}
}

func (r *batchRaw) send(msg any) {
	r.t.Helper()
	r.sendJSON(msg)
}

// request sends a request with the given id (a string or an int).
func (r *batchRaw) request(id any, method string, params any) {
	r.t.Helper()
	r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (r *batchRaw) cancel(id any) {
	r.t.Helper()
	r.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": map[string]any{"id": id}})
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

type batchResult struct {
	CallID  string           `json:"callId"`
	Content []map[string]any `json:"content"`
	IsError bool             `json:"isError"`
	Details map[string]any   `json:"details"`
}

func (res batchResult) text() string {
	var parts []string
	for _, c := range res.Content {
		if c["type"] == "text" {
			parts = append(parts, fmt.Sprint(c["text"]))
		}
	}
	return strings.Join(parts, "\n")
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

// dirNames lists a workspace directory (temp files would show up here).
func (r *batchRaw) dirNames(dir string) []string {
	r.t.Helper()
	ents, err := os.ReadDir(filepath.Join(r.ws, dir))
	if err != nil {
		r.t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// alive proves the server still serves: a fresh read answers.
func (r *batchRaw) alive(id any, path, want string) {
	r.t.Helper()
	res := r.tool(id, "read", map[string]any{"path": path})
	if res.IsError || !strings.Contains(res.text(), want) {
		r.t.Fatalf("server no longer serves: read %s = %q", path, res.text())
	}
}

// batchProcs counts processes whose command line contains marker.
func batchProcs(marker string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) {
			n++
		}
	}
	return n
}

func batchEventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
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

// ---- tools/list premises ----

// TestBatchConcurrencyMeta pins the premises the batch tests rely on:
// tools/list says which tools are concurrency-safe.
func TestBatchConcurrencyMeta(t *testing.T) {
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	var list struct {
		Tools []struct {
			Name string `json:"name"`
			Meta struct {
				ConcurrencySafe *bool `json:"concurrencySafe"`
			} `json:"_meta"`
		} `json:"tools"`
	}
	r.decode(r.call(1, "tools/list", map[string]any{}), &list)
	want := map[string]bool{"read": true, "ls": true, "grep": true, "find": true, "edit": false, "write": false, "bash": false, "test_block": true}
	got := map[string]bool{}
	for _, tl := range list.Tools {
		if tl.Meta.ConcurrencySafe == nil {
			t.Errorf("%s: _meta.concurrencySafe missing", tl.Name)
			continue
		}
		got[tl.Name] = *tl.Meta.ConcurrencySafe
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: concurrencySafe = %v (listed %v), the tests below assume %v", name, g, ok, w)
		}
	}
}

// ---- tools/callBatch ----

func TestBatchResultsInCallOrder(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "alpha needle\n", "b.txt": "beta\n", "sub/c.txt": "gamma needle\n"}
	r := batchStart(t, files, batchStartOpts{mode: "bypass"})
	// A slow non-safe call first, then safe ones that finish at once, then
	// another slow one: the finishing order differs from the call order.
	res := r.batch(1,
		batchCall("bash", map[string]any{"command": "sleep 0.4; echo first-out"}, "k0"),
		batchCall("read", map[string]any{"path": "b.txt"}, "k1"),
		batchCall("grep", map[string]any{"pattern": "needle"}, "k2"),
		batchCall("find", map[string]any{"pattern": "*.txt"}, "k3"),
		batchCall("read", map[string]any{"path": "a.txt"}, "k4"),
		batchCall("ls", map[string]any{}, "k5"),
		batchCall("bash", map[string]any{"command": "sleep 0.2; echo last-out"}, "k6"),
	)
	want := []string{"first-out", "beta", "sub/c.txt:1: gamma needle", "sub/c.txt", "alpha needle", "sub/", "last-out"}
	for i, res := range res {
		if res.CallID != fmt.Sprintf("k%d", i) {
			t.Errorf("results[%d].callId = %q, want k%d", i, res.CallID, i)
		}
		if res.IsError || !strings.Contains(res.text(), want[i]) {
			t.Errorf("results[%d] (isError %v) = %q, want it to contain %q", i, res.IsError, res.text(), want[i])
		}
	}
}

func TestBatchCallIDs(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	rd := map[string]any{"path": "a.txt"}
	res := r.batch(1, batchCall("read", rd, ""), batchCall("read", rd, "mine"), batchCall("read", rd, ""), batchCall("nope", rd, ""), batchCall("read", rd, ""))
	one := r.tool(2, "read", rd)
	two := r.tool(3, "read", rd)
	var echoed batchResult
	r.decode(r.call(4, "tools/call", map[string]any{"name": "read", "arguments": rd, "callId": "given-7"}), &echoed)
	if res[1].CallID != "mine" || echoed.CallID != "given-7" {
		t.Errorf("given callIds not echoed: batch %q, tools/call %q", res[1].CallID, echoed.CallID)
	}
	gen := []string{res[0].CallID, res[2].CallID, res[3].CallID, res[4].CallID, one.CallID, two.CallID}
	// Twenty calls at once, none naming a callId.
	for i := range 20 {
		r.request(100+i, "tools/call", map[string]any{"name": "read", "arguments": rd})
	}
	for i := range 20 {
		var x batchResult
		f, ok := r.reply(100+i, batchWait)
		if !ok {
			t.Fatalf("no reply to %d", 100+i)
		}
		r.decode(f, &x)
		gen = append(gen, x.CallID)
	}
	seen := map[string]bool{"mine": true, "given-7": true}
	for _, id := range gen {
		if !strings.HasPrefix(id, "call-") {
			t.Errorf("generated callId %q, docs/protocol.md: generated as `call-N`", id)
		}
		if seen[id] {
			t.Errorf("generated callId %q is not unique in %v", id, gen)
		}
		seen[id] = true
	}
}

// TestBatchSafeCallsRunInParallel: a concurrency-safe read placed
// after a blocking concurrency-safe call still runs (its read stamp lets an
// edit from another request through) while the batch is held up.
func TestBatchSafeCallsRunInParallel(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "one\ntwo\n"}, batchStartOpts{mode: "bypass"})
	edit := map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "two", "newText": "2"}}, "dryRun": true}
	before := r.tool(1, "edit", edit)
	if !before.IsError {
		t.Fatalf("premise: an edit of an unread file must fail, got %q", before.text())
	}
	r.request(2, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("test_block", map[string]any{}, "blk"),
		batchCall("read", map[string]any{"path": "a.txt"}, "rd"),
	}})
	n := 10
	ok := batchEventually(batchWait, func() bool {
		n++
		return !r.tool(n, "edit", edit).IsError
	})
	if !ok {
		t.Errorf("the read after test_block in one batch never ran while test_block blocked: edit still says %q", r.tool(99, "edit", edit).text())
	}
	r.cancel(2)
	r.expectCancelled(2)
	if got, _ := r.file("a.txt"); got != "one\ntwo\n" {
		t.Errorf("dryRun changed the file: %q", got)
	}
}

// TestBatchUnsafeCallWaits: a call that is not concurrency-safe waits
// for everything before it; cancelling the batch means it never runs.
func TestBatchUnsafeCallWaits(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("test_block", map[string]any{}, ""),
		batchCall("bash", map[string]any{"command": "touch waited.txt"}, ""),
		batchCall("write", batchWriteArgs("waited-write.txt", "no\n"), ""),
	}})
	// Another request runs a command to completion meanwhile.
	if res := r.tool(2, "bash", map[string]any{"command": "touch other.txt"}); res.IsError {
		t.Fatalf("bash: %s", res.text())
	}
	time.Sleep(batchSettle)
	if _, ok := r.file("waited.txt"); ok {
		t.Errorf("bash after a blocking test_block in the same batch ran before it finished")
	}
	r.cancel(1)
	r.expectCancelled(1)
	time.Sleep(batchSettle)
	for _, n := range []string{"waited.txt", "waited-write.txt"} {
		if _, ok := r.file(n); ok {
			t.Errorf("%s: a call of a cancelled batch ran after the cancel", n)
		}
	}
}

func TestBatchUnsafeCallsInOrder(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "old line\n"}, batchStartOpts{mode: "bypass"})
	start := time.Now()
	res := r.batch(1,
		batchCall("bash", map[string]any{"command": "sleep 0.5; echo A >> log.txt"}, ""),
		batchCall("bash", map[string]any{"command": "sleep 0.5; echo B >> log.txt"}, ""),
		batchCall("write", map[string]any{"path": "new.txt", "content": "written in batch\n"}, ""),
		batchCall("read", map[string]any{"path": "new.txt"}, ""),
		batchCall("read", map[string]any{"path": "a.txt"}, ""),
		batchCall("edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "old line", "newText": "new line"}}}, ""),
		batchCall("read", map[string]any{"path": "a.txt"}, ""),
		batchCall("write", map[string]any{"path": "same.txt", "content": "1\n"}, ""),
		batchCall("write", map[string]any{"path": "same.txt", "content": "2\n"}, ""),
		batchCall("write", map[string]any{"path": "same.txt", "content": "3\n"}, ""),
		batchCall("bash", map[string]any{"command": "sleep 0.3; echo late > seq.txt"}, ""),
		batchCall("read", map[string]any{"path": "seq.txt"}, ""),
		batchCall("bash", map[string]any{"command": "cat same.txt > copy.txt"}, ""),
	)
	elapsed := time.Since(start)
	if got, _ := r.file("same.txt"); got != "3\n" {
		t.Errorf("three writes of one file in one batch: file = %q, want the last (\"3\\n\")", got)
	}
	for i, x := range res {
		if x.IsError {
			t.Errorf("results[%d] isError: %s", i, x.text())
		}
	}
	if !strings.Contains(res[11].text(), "late") {
		t.Errorf("a read after a bash in one batch does not see its output file: %q", res[11].text())
	}
	if got, _ := r.file("copy.txt"); got != "3\n" {
		t.Errorf("a bash after writes in one batch saw %q, want the last write", got)
	}
	if got, _ := r.file("log.txt"); got != "A\nB\n" {
		t.Errorf("two bash calls (not concurrency-safe) ran out of order: log.txt = %q", got)
	}
	if elapsed < time.Second {
		t.Errorf("two `sleep 0.5` bash calls in one batch took %v: they ran in parallel though bash is not concurrency-safe", elapsed)
	}
	if !strings.Contains(res[3].text(), "written in batch") {
		t.Errorf("read after write in one batch does not see the write: %q", res[3].text())
	}
	if !strings.Contains(res[4].text(), "old line") || !strings.Contains(res[6].text(), "new line") {
		t.Errorf("[read a, edit a, read a]: first read %q, second read %q", res[4].text(), res[6].text())
	}
}

func TestBatchInvalidCallsAreOwnResults(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "fine\n"}, batchStartOpts{mode: "bypass"})
	res := r.batch(1,
		batchCall("read", map[string]any{"path": "a.txt"}, ""),
		batchCall("no_such_tool", map[string]any{}, ""),
		batchCall("read", map[string]any{"path": "a.txt", "offset": -3}, ""),
		batchCall("read", map[string]any{}, ""),
		batchCall("read", "not an object", ""),
		batchCall("read", map[string]any{"path": "a.txt"}, ""),
		map[string]any{"arguments": map[string]any{"path": "a.txt"}}, // no name
	)
	for _, i := range []int{0, 5} {
		if res[i].IsError || !strings.Contains(res[i].text(), "fine") {
			t.Errorf("valid results[%d] = %q (isError %v)", i, res[i].text(), res[i].IsError)
		}
	}
	cases := []struct {
		i    int
		want string
	}{
		{1, `no_such_tool`},
		{2, "`offset` must be a line number ≥ 1, got -3"}, // docs/tools.md's example
		{3, "path"},
		{4, "arguments"},
		{6, "unknown tool"},
	}
	for _, c := range cases {
		if !res[c.i].IsError || !strings.Contains(res[c.i].text(), c.want) {
			t.Errorf("results[%d]: want isError naming %q, got isError=%v %q", c.i, c.want, res[c.i].IsError, res[c.i].text())
		}
	}
	if !strings.Contains(res[1].text(), "read") {
		t.Errorf("unknown tool error does not name the tools there are: %q", res[1].text())
	}
}

func TestBatchEmpty(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	// `{calls: []}`, and `[]` (how Lua encodes `{}`; docs/protocol.md: any params object may be `[]`).
	for i, params := range []any{map[string]any{"calls": []any{}}, []any{}} {
		f := r.call(i+1, "tools/callBatch", params)
		if f.Error != nil {
			t.Fatalf("empty batch: protocol error %+v", *f.Error)
		}
		var got map[string]json.RawMessage
		json.Unmarshal(f.Result, &got)
		if string(got["results"]) != "[]" {
			t.Errorf("empty batch: result %s, want {\"results\":[]}", f.Result)
		}
	}
	r.alive(9, "a.txt", "x")
}

func TestBatchFiftyReads(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	var calls []map[string]any
	for i := range 50 {
		name := fmt.Sprintf("f%02d.txt", i)
		files[name] = fmt.Sprintf("content-%02d\n", i)
		calls = append(calls, batchCall("read", map[string]any{"path": name}, ""))
	}
	r := batchStart(t, files, batchStartOpts{mode: "bypass"})
	start := time.Now()
	res := r.batch(1, calls...)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("50 reads took %v", d)
	}
	// 50 writes of different files, then 50 reads of them: every read sees its write.
	var wr []map[string]any
	for i := range 50 {
		wr = append(wr, batchCall("write", batchWriteArgs(fmt.Sprintf("w/%02d.txt", i), fmt.Sprintf("v%02d\n", i)), ""))
	}
	for i := range 50 {
		wr = append(wr, batchCall("read", map[string]any{"path": fmt.Sprintf("w/%02d.txt", i)}, ""))
	}
	for i, x := range r.batch(2, wr...) {
		if x.IsError || i >= 50 && !strings.Contains(x.text(), fmt.Sprintf("v%02d", i-50)) {
			t.Errorf("write/read batch results[%d] = %q (isError %v)", i, x.text(), x.IsError)
		}
	}
	ids := map[string]bool{}
	for i, x := range res {
		if x.IsError || !strings.Contains(x.text(), fmt.Sprintf("f%02d.txt", i)) || !strings.Contains(x.text(), fmt.Sprintf("content-%02d", i)) {
			t.Errorf("results[%d] = %q (isError %v)", i, x.text(), x.IsError)
		}
		if ids[x.CallID] || x.CallID == "" {
			t.Errorf("results[%d].callId %q empty or repeated", i, x.CallID)
		}
		ids[x.CallID] = true
	}
}

func TestBatchPanicIsolated(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"}, batchStartOpts{mode: "bypass"})
	res := r.batch(1,
		batchCall("read", map[string]any{"path": "a.txt"}, ""),
		batchCall("test_panic", map[string]any{}, "boom"),
		batchCall("bash", map[string]any{"command": "echo after-panic"}, ""),
		batchCall("read", map[string]any{"path": "b.txt"}, ""),
	)
	if !res[1].IsError || res[1].CallID != "boom" || res[1].text() == "" {
		t.Errorf("panicking call: want an isError result with a message, got %+v", res[1])
	}
	for i, want := range map[int]string{0: "alpha", 2: "after-panic", 3: "beta"} {
		if res[i].IsError || !strings.Contains(res[i].text(), want) {
			t.Errorf("results[%d] next to a panic = %q (isError %v)", i, res[i].text(), res[i].IsError)
		}
	}
	// Alone, too: a result, not a protocol error, and the server goes on.
	if alone := r.tool(2, "test_panic", map[string]any{}); !alone.IsError {
		t.Errorf("test_panic alone: isError false")
	}
	r.alive(3, "b.txt", "beta")
}

// ---- callId stamping, tools/details, tools/progress ----

func batchNote(f batchFrame) (callID, tool, output string, details map[string]any) {
	var p struct {
		CallID  string         `json:"callId"`
		Tool    string         `json:"tool"`
		Output  string         `json:"output"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}
	json.Unmarshal(f.Params, &p)
	return p.CallID, p.Tool, p.Output + p.Message, p.Details
}

// batchTalker prints marker lines for about 0.8 s.
func batchTalker(marker string) string {
	return fmt.Sprintf("for i in 1 2 3 4 5 6 7 8; do echo %s-$i; sleep 0.1; done", marker)
}

// batchCheckStamps: every progress note whose output names a marker carries
// that marker's callId and tool bash; every call got progress.
func batchCheckStamps(t *testing.T, r *batchRaw, byMarker map[string]string) {
	t.Helper()
	seen := map[string]int{}
	for _, f := range r.notes("tools/progress") {
		id, tool, out, _ := batchNote(f)
		for marker, want := range byMarker {
			if strings.Contains(out, marker) {
				seen[marker]++
				if id != want || tool != "bash" {
					t.Errorf("progress with %s output stamped callId=%q tool=%q, want %q bash", marker, id, tool, want)
				}
			}
		}
		if id == "" {
			t.Errorf("progress without callId: %s", f.Params)
		}
	}
	for marker := range byMarker {
		if seen[marker] == 0 {
			t.Errorf("no tools/progress for the call printing %s", marker)
		}
	}
}

func TestBatchProgressStampedInBatch(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	res := r.batch(1,
		batchCall("bash", map[string]any{"command": batchTalker("AAAA")}, "talk-a"),
		batchCall("bash", map[string]any{"command": batchTalker("BBBB")}, ""),
	)
	batchCheckStamps(t, r, map[string]string{"AAAA": "talk-a", "BBBB": res[1].CallID})
}

func TestBatchProgressStampedConcurrent(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	r.request(1, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": batchTalker("XXXX")}, "callId": "talk-x"})
	r.request(2, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": batchTalker("YYYY")}})
	var y batchResult
	for _, id := range []int{1, 2} {
		f, ok := r.reply(id, batchWait)
		if !ok {
			t.Fatalf("no reply to %d", id)
		}
		if id == 2 {
			r.decode(f, &y)
		}
	}
	batchCheckStamps(t, r, map[string]string{"XXXX": "talk-x", "YYYY": y.CallID})
	// They really overlapped: some Y progress came before the last X progress.
	var lastX, firstY int = -1, -1
	for _, f := range r.notes("tools/progress") {
		id, _, _, _ := batchNote(f)
		if id == "talk-x" {
			lastX = f.Seq
		} else if id == y.CallID && firstY < 0 {
			firstY = f.Seq
		}
	}
	if firstY < 0 || lastX < 0 || firstY > lastX {
		t.Logf("note: the two tools/call bash runs did not overlap (first Y seq %d, last X seq %d)", firstY, lastX)
	}
}

func TestBatchProgressThrottled(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	// Output every ~10 ms for well over a second.
	res := r.tool(1, "bash", map[string]any{"command": "for i in $(seq 1 120); do echo tick$i; sleep 0.01; done"})
	if res.IsError {
		t.Fatal(res.text())
	}
	rep, _ := r.reply(1, 0)
	var at []time.Time
	for _, f := range r.notes("tools/progress") {
		if id, _, _, _ := batchNote(f); id == res.CallID {
			at = append(at, f.At)
			if f.Seq > rep.Seq {
				t.Errorf("tools/progress (frame %d) after the call's reply (frame %d)", f.Seq, rep.Seq)
			}
		}
	}
	if len(at) < 5 {
		t.Fatalf("only %d progress notifications for a 1 s+ command printing every 10 ms", len(at))
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	slices.Sort(gaps)
	// ≥ 50 ms apart per call (docs/protocol.md); receive-side jitter tolerated by
	// judging the median with 10% slack.
	if med := gaps[len(gaps)/2]; med < 45*time.Millisecond {
		t.Errorf("median gap between tools/progress of one call = %v over %d notes, want ≥ 50 ms", med, len(at))
	}
}

// TestBatchDetailsBeforeReply: for edit/write, tools/details with the
// call's callId arrives before the reply, in wire order, with the documented
// fields.
func TestBatchDetailsBeforeReply(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, batchStartOpts{mode: "bypass"})
	r.tool(1, "read", map[string]any{"path": "a.txt"})
	cases := []struct {
		name, tool, kind, file string
		args                   map[string]any
	}{
		{"create", "write", "create", "n.txt", map[string]any{"path": "n.txt", "content": "fresh\n"}},
		{"edit", "edit", "edit", "a.txt", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "two", "newText": "TWO"}}}},
		{"overwrite", "write", "write", "a.txt", map[string]any{"path": "a.txt", "content": "replaced\n"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := 10 + i
			r.request(id, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
			rep, ok := r.reply(id, batchWait)
			if !ok {
				t.Fatal("no reply")
			}
			var res batchResult
			r.decode(rep, &res)
			if res.IsError {
				t.Fatalf("%s: %s", c.tool, res.text())
			}
			var det map[string]any
			for _, f := range r.notes("tools/details") {
				if id, tool, _, d := batchNote(f); id == res.CallID {
					if f.Seq > rep.Seq {
						t.Errorf("tools/details (frame %d) after the reply (frame %d)", f.Seq, rep.Seq)
					}
					if tool != c.tool {
						t.Errorf("tools/details tool = %q, want %q", tool, c.tool)
					}
					det = d
				}
			}
			if det == nil {
				t.Fatalf("no tools/details with callId %q", res.CallID)
			}
			for _, k := range []string{"kind", "uri", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
				if _, ok := det[k]; !ok {
					t.Errorf("details lacks %q: %v", k, det)
				}
			}
			if det["kind"] != c.kind {
				t.Errorf("details.kind = %v, want %s", det["kind"], c.kind)
			}
			if u, _ := det["uri"].(string); !strings.HasPrefix(u, "file://") || !strings.HasSuffix(u, "/"+c.file) {
				t.Errorf("details.uri = %q", u)
			}
		})
	}
}

// ---- $/cancelRequest ----

func TestBatchCancelToolCall(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	cases := []struct {
		name   string
		id     any
		tool   string
		args   map[string]any
		marker string
	}{
		{"test_block numeric id", 5, "test_block", map[string]any{}, ""},
		{"test_block string id", "blk-1", "test_block", map[string]any{}, ""},
		{"bash sleep", 6, "bash", map[string]any{"command": "sleep 100.4711"}, "100.4711"},
		// SIGTERM ignored: the reply still comes at once, the group is killed after the grace.
		{"bash ignoring SIGTERM", 7, "bash", map[string]any{"command": "trap '' TERM; sleep 100.4712; echo"}, "100.4712"},
		{"bash with a background child", 8, "bash", map[string]any{"command": "sleep 100.4713 & sleep 100.4713; echo"}, "100.4713"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r.request(c.id, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
			if c.marker != "" {
				if !batchEventually(batchWait, func() bool { return batchProcs(c.marker) > 0 }) {
					t.Fatal("the command never started")
				}
			} else {
				time.Sleep(200 * time.Millisecond) // let the call start; not a synchronization the result depends on
			}
			r.cancel(c.id)
			r.expectCancelled(c.id)
			if c.marker != "" && !batchEventually(6*time.Second, func() bool { return batchProcs(c.marker) == 0 }) {
				t.Errorf("the command's process survived the cancel")
			}
		})
	}
	r.alive(9, "a.txt", "x")
}

func TestBatchCancelBatch(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("bash", map[string]any{"command": "sleep 100.5822"}, ""),
		batchCall("test_block", map[string]any{}, ""),
		batchCall("test_block", map[string]any{}, ""),
		batchCall("bash", map[string]any{"command": "touch after.txt"}, ""),
	}})
	if !batchEventually(batchWait, func() bool { return batchProcs("100.5822") > 0 }) {
		t.Fatal("the batch's first command never started")
	}
	r.cancel(1)
	r.expectCancelled(1)
	if !batchEventually(3*time.Second, func() bool { return batchProcs("100.5822") == 0 }) {
		t.Errorf("the batch's running command survived the cancel")
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
	if _, ok := r.file("after.txt"); ok {
		t.Errorf("a call after the cancelled one in the batch still ran")
	}
	r.alive(9, "a.txt", "x")
}

func TestBatchCancelUnknownOrFinished(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	r.request(2, "tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{}})
	time.Sleep(200 * time.Millisecond)
	r.cancel(2)
	r.expectCancelled(2)
	r.alive(1, "a.txt", "x")
	nFrames := len(r.all())
	r.cancel(1)         // already finished
	r.cancel(2)         // cancelled and answered already
	r.cancel(424242)    // never used
	r.cancel("no-such") // string id never used
	r.alive(3, "a.txt", "x")
	later := r.all()[nFrames:]
	for _, f := range later {
		if f.Error != nil || (f.isReply() && !batchIDIs(f.ID, 3)) {
			t.Errorf("a cancel of an unknown or finished id drew a frame: id=%s error=%+v", f.ID, f.Error)
		}
	}
}

// TestBatchCancelledWriteLeavesNothing: a write cancelled while it
// waits for approval changes nothing; a big write cancelled at once is
// either -32800 with no file or a complete file; never a temp file.
func TestBatchCancelledWriteLeavesNothing(t *testing.T) {
	slow(t)
	t.Parallel()
	t.Run("while asking", func(t *testing.T) {
		r := batchStart(t, map[string]string{"d/keep.txt": "keep\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Edit(d/*)"}, confirm: true})
		r.request(1, "tools/call", map[string]any{"name": "write", "arguments": map[string]any{"path": "d/new.txt", "content": "must not land\n"}})
		if _, ok := r.wait(batchWait, func(f batchFrame) bool { return f.Method == "tools/confirm" }); !ok {
			t.Fatal("no tools/confirm for a write an ask rule covers")
		}
		r.cancel(1)
		r.expectCancelled(1)
		if got := r.dirNames("d"); !slices.Equal(got, []string{"keep.txt"}) {
			t.Errorf("after a cancelled write d/ holds %v, want only keep.txt", got)
		}
	})
	t.Run("big write cancelled at once", func(t *testing.T) {
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
			for _, n := range r.dirNames("d") {
				if n != "keep.txt" && !strings.HasPrefix(n, "big") || strings.HasPrefix(n, "big") && !strings.HasSuffix(n, ".txt") {
					t.Errorf("stray file in d/: %s", n)
				}
			}
		}
	})
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
	r.send(map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": result})
}

func batchWriteArgs(path, content string) map[string]any {
	return map[string]any{"path": path, "content": content}
}

func TestBatchConfirmRequestShape(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "old\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Edit(a.txt)"}, confirm: true})
	r.tool(1, "read", map[string]any{"path": "a.txt"})
	r.request(2, "tools/call", map[string]any{"name": "write", "arguments": batchWriteArgs("a.txt", "new\n"), "callId": "w-1"})
	c, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm")
	}
	if c.CallID != "w-1" || c.Tool != "write" || c.Args["path"] != "a.txt" || c.Args["content"] != "new\n" || c.Reason == "" {
		t.Errorf("tools/confirm params = %+v", c)
	}
	if c.Preview["kind"] != "write" || !strings.Contains(fmt.Sprint(c.Preview["unifiedDiff"]), "+new") {
		t.Errorf("preview = %v, want the would-be write's details", c.Preview)
	}
	// docs/protocol.md: "the rule Bash(rm:*) (.agentls/settings.json) asks the user before this call".
	if !strings.HasPrefix(c.Reason, "the rule Edit(a.txt) (") || !strings.HasSuffix(c.Reason, ") asks the user before this call") || !strings.HasPrefix(c.Rule, "Edit(a.txt)") {
		t.Errorf("reason %q / rule %q do not name the asking rule as documented", c.Reason, c.Rule)
	}
	if got, _ := r.file("a.txt"); got != "old\n" {
		t.Errorf("the file changed before the user answered: %q", got)
	}
	r.answer(c, map[string]any{"decision": "allowOnce"})
	var res batchResult
	f, _ := r.reply(2, batchWait)
	r.decode(f, &res)
	if res.IsError || res.CallID != "w-1" {
		t.Errorf("allowed write: %+v", res)
	}
	if got, _ := r.file("a.txt"); got != "new\n" {
		t.Errorf("allowOnce: file = %q", got)
	}
	// The preview was the tools/details the call then sent.
	for _, n := range r.notes("tools/details") {
		if id, _, _, det := batchNote(n); id == "w-1" {
			for _, k := range []string{"kind", "unifiedDiff", "oldHash", "newHash", "firstChangedLine"} {
				if fmt.Sprint(det[k]) != fmt.Sprint(c.Preview[k]) {
					t.Errorf("preview %s = %v, but the call's tools/details has %v", k, c.Preview[k], det[k])
				}
			}
		}
	}
	// bash: the preview is the command and its classification.
	r2 := batchStart(t, nil, batchStartOpts{mode: "acceptEdits", ask: []string{"Bash(touch:*)"}, confirm: true})
	r2.request(1, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch p.txt"}})
	c2, ok := r2.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm for Bash(touch:*)")
	}
	if c2.Preview["kind"] != "command" || c2.Preview["command"] != "touch p.txt" {
		t.Errorf("bash preview = %v", c2.Preview)
	}
	for _, k := range []string{"readOnly", "destructive", "reasons"} {
		if _, ok := c2.Preview[k]; !ok {
			t.Errorf("bash preview lacks %q: %v", k, c2.Preview)
		}
	}
	r2.answer(c2, map[string]any{"decision": "rejectOnce"})
	r2.reply(1, batchWait)
}

// TestBatchConfirmDecisions: each decision's effect on this call and on
// the next identical one.
func TestBatchConfirmDecisions(t *testing.T) {
	slow(t)
	t.Parallel()
	cases := []struct {
		decision, message string
		runs              bool   // this call runs
		nextAsks          bool   // the next identical call asks again
		nextRuns          bool   // ... and, when it does not ask, runs
		wantText          string // in this call's result
	}{
		{"allowOnce", "", true, true, false, ""},
		{"allowAlways", "", true, false, true, ""},
		{"rejectOnce", "not now", false, true, false, "denied by the user: not now"},
		{"rejectAlways", "never here", false, false, false, "denied by the user: never here"},
	}
	for _, c := range cases {
		t.Run(c.decision, func(t *testing.T) {
			// Mode default asks before a command that is not read-only
			// (docs/tools.md); an explicit ask rule would outrank the
			// session's allow rule, so the mode's ask is the one to answer.
			r := batchStart(t, nil, batchStartOpts{mode: "default", confirm: true})
			cmd := map[string]any{"command": "touch m.txt && echo ran >> log.txt"}
			r.request(1, "tools/call", map[string]any{"name": "bash", "arguments": cmd})
			q, ok := r.nextConfirm(0, batchWait)
			if !ok {
				t.Fatal("no tools/confirm")
			}
			ans := map[string]any{"decision": c.decision}
			if c.message != "" {
				ans["message"] = c.message
			}
			r.answer(q, ans)
			var res batchResult
			f, _ := r.reply(1, batchWait)
			r.decode(f, &res)
			log, _ := r.file("log.txt")
			if c.runs != (log == "ran\n") || res.IsError == c.runs {
				t.Errorf("%s: isError=%v log=%q text=%q", c.decision, res.IsError, log, res.text())
			}
			if c.wantText != "" && !strings.Contains(res.text(), c.wantText) {
				t.Errorf("%s: result %q, want %q", c.decision, res.text(), c.wantText)
			}
			// The next identical call.
			r.request(2, "tools/call", map[string]any{"name": "bash", "arguments": cmd})
			q2, asked := r.nextConfirm(1, 1500*time.Millisecond)
			if asked != c.nextAsks {
				t.Errorf("%s: next identical call asked=%v, want %v", c.decision, asked, c.nextAsks)
			}
			if asked {
				r.answer(q2, map[string]any{"decision": "rejectOnce"})
			}
			var res2 batchResult
			f2, ok := r.reply(2, batchWait)
			if !ok {
				t.Fatal("no reply to the next call")
			}
			r.decode(f2, &res2)
			if !asked {
				log2, _ := r.file("log.txt")
				ranAgain := strings.Count(log2, "ran") > strings.Count(log, "ran")
				t.Logf("%s: next call → %q", c.decision, res2.text())
				if ranAgain != c.nextRuns || res2.IsError == c.nextRuns {
					t.Errorf("%s: next call without asking: ran=%v isError=%v text=%q", c.decision, ranAgain, res2.IsError, res2.text())
				}
			}
			// allowAlways is as narrow as the request: another command line asks.
			if c.decision == "allowAlways" {
				r.request(3, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch other.txt"}})
				q3, ok := r.nextConfirm(1, batchWait)
				if !ok {
					t.Errorf("allowAlways of one command line also allowed another")
				} else {
					r.answer(q3, map[string]any{"decision": "rejectOnce"})
				}
				r.reply(3, batchWait)
			}
		})
	}
}

func TestBatchConfirmCancelledWithCall(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Bash(touch:*)"}, confirm: true})
	r.request(1, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch never.txt"}})
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm")
	}
	// A call that needs no approval proceeds while the question is open.
	r.alive(2, "a.txt", "x")
	r.cancel(1)
	r.expectCancelled(1)
	var qid any
	json.Unmarshal(q.ID, &qid)
	if _, ok := r.wait(batchWait, func(f batchFrame) bool {
		if f.Method != "$/cancelRequest" {
			return false
		}
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(f.Params, &p)
		return bytes.Equal(p.ID, q.ID)
	}); !ok {
		t.Errorf("no $/cancelRequest for the confirm request %s after its call was cancelled", q.ID)
	}
	// A late answer to the cancelled question changes nothing.
	r.answer(q, map[string]any{"decision": "allowOnce"})
	time.Sleep(batchSettle)
	if _, ok := r.file("never.txt"); ok {
		t.Errorf("the cancelled call ran")
	}
	r.alive(3, "a.txt", "x")
}

// TestBatchConfirmBadAnswers: an error or garbage answer fails the call
// cleanly, changes nothing, and the server keeps serving.
func TestBatchConfirmBadAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		raw  string // the reply body after "id":
	}{
		{"error", `"error":{"code":-32603,"message":"dialog crashed"}`},
		{"unknown decision", `"result":{"decision":"maybe"}`},
		{"number", `"result":42`},
		{"null", `"result":null`},
		{"no decision", `"result":{}`},
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
			if !res.IsError || res.text() == "" {
				t.Errorf("bad answer %s: want an isError result with a message, got %+v", c.name, res)
			}
			t.Logf("%s → %q", c.name, res.text())
			if _, ok := r.file(name); ok {
				t.Errorf("the call ran after a bad answer")
			}
			r.alive(100+i, "a.txt", "x")
		})
	}
}

func TestBatchConfirmFallbackWithoutCapability(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Bash(touch:*)"}})
	res := r.tool(1, "bash", map[string]any{"command": "touch nope.txt"})
	if !res.IsError || !strings.Contains(res.text(), "needs the user's approval") {
		t.Errorf("ask without the confirm capability: want isError saying the user's approval is needed, got isError=%v %q", res.IsError, res.text())
	}
	if len(r.notes("tools/confirm")) != 0 {
		t.Errorf("tools/confirm sent to a client without the capability")
	}
	if _, ok := r.file("nope.txt"); ok {
		t.Errorf("the call ran")
	}
	// Default mode's ask for a write falls back the same way.
	r2 := batchStart(t, nil, batchStartOpts{})
	res2 := r2.tool(1, "write", batchWriteArgs("w.txt", "x\n"))
	if !res2.IsError || !strings.Contains(res2.text(), "needs the user's approval") {
		t.Errorf("default-mode write without confirm: isError=%v %q", res2.IsError, res2.text())
	}
	if _, ok := r2.file("w.txt"); ok {
		t.Errorf("the write happened")
	}
}

// TestBatchConfirmOneAtATime: a second call needing approval waits
// for the open question and is then re-evaluated (allowAlways settles it).
func TestBatchConfirmOneAtATime(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "default", confirm: true})
	cmd := map[string]any{"command": "touch same.txt && echo ran >> log.txt"}
	r.request(1, "tools/call", map[string]any{"name": "bash", "arguments": cmd})
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm")
	}
	r.request(2, "tools/call", map[string]any{"name": "bash", "arguments": cmd})
	r.alive(3, "a.txt", "x")
	if _, two := r.nextConfirm(1, batchSettle); two {
		t.Errorf("a second tools/confirm while the first is open")
	}
	r.answer(q, map[string]any{"decision": "allowAlways"})
	for _, id := range []int{1, 2} {
		f, ok := r.reply(id, batchWait)
		if !ok {
			t.Fatalf("no reply to %d", id)
		}
		var res batchResult
		r.decode(f, &res)
		if res.IsError {
			t.Errorf("call %d: %s", id, res.text())
		}
	}
	if n := len(r.notes("tools/confirm")); n != 1 {
		t.Errorf("%d tools/confirm requests, want 1 (allowAlways settles the waiting call)", n)
	}
	if log, _ := r.file("log.txt"); log != "ran\nran\n" {
		t.Errorf("log = %q", log)
	}
}

// TestBatchCancelAfterCommit: a batch that committed a change answers
// with its results, the cancelled calls among them as cancelled; the change's
// tools/details went out as soon as it existed, while the batch still ran.
func TestBatchCancelAfterCommit(t *testing.T) {
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("write", batchWriteArgs("c.txt", "committed\n"), "w"),
		batchCall("test_block", map[string]any{}, "blk"),
	}})
	if _, ok := r.wait(batchWait, func(f batchFrame) bool {
		id, _, _, _ := batchNote(f)
		return f.Method == "tools/details" && id == "w"
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

// TestBatchCancelBadIDs: a $/cancelRequest without a usable id is
// dropped with a window/logMessage warning and the connection goes on.
func TestBatchCancelBadIDs(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "bypass"})
	cases := []any{map[string]any{"id": nil}, map[string]any{}, map[string]any{"id": map[string]any{"x": 1}}, map[string]any{"id": true}}
	for _, p := range cases {
		r.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": p})
	}
	r.alive(1, "a.txt", "x")
	if !batchEventually(batchWait, func() bool { return len(r.notes("window/logMessage")) >= len(cases) }) {
		t.Errorf("%d window/logMessage warnings for %d unusable cancels", len(r.notes("window/logMessage")), len(cases))
	}
	for _, f := range r.notes("window/logMessage") {
		var p struct {
			Type int `json:"type"`
		}
		json.Unmarshal(f.Params, &p)
		if p.Type != 2 {
			t.Errorf("logMessage type %d, want 2 (warning): %s", p.Type, f.Params)
		}
	}
	for _, f := range r.notes("") {
		if f.Error != nil {
			t.Errorf("an unusable cancel drew an error frame: %+v", *f.Error)
		}
	}
}

// TestBatchCancelStreamingBatch: progress streams while the batch
// runs (not at its end), and cancelling the batch kills the command.
func TestBatchCancelStreamingBatch(t *testing.T) {
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("bash", map[string]any{"command": "echo started-mark; sleep 100.6933"}, "s1"),
	}})
	if _, ok := r.wait(batchWait, func(f batchFrame) bool {
		id, _, out, _ := batchNote(f)
		return f.Method == "tools/progress" && id == "s1" && strings.Contains(out, "started-mark")
	}); !ok {
		t.Fatal("no tools/progress with the command's output while the batch ran")
	}
	r.cancel(1)
	r.expectCancelled(1)
	if !batchEventually(3*time.Second, func() bool { return batchProcs("100.6933") == 0 }) {
		t.Errorf("the batch's command survived the cancel")
	}
}

// TestBatchConfirmInBatch: the question names the batch member's
// callId; cancelling the batch cancels the open question.
func TestBatchConfirmInBatch(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Bash(touch:*)"}, confirm: true})
	r.request(1, "tools/callBatch", map[string]any{"calls": []any{
		batchCall("read", map[string]any{"path": "a.txt"}, "r1"),
		batchCall("bash", map[string]any{"command": "touch batch.txt"}, "b1"),
	}})
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm for a batch member")
	}
	if q.CallID != "b1" || q.Tool != "bash" {
		t.Errorf("tools/confirm callId=%q tool=%q, want b1 bash", q.CallID, q.Tool)
	}
	r.cancel(1)
	r.expectCancelled(1)
	if _, ok := r.wait(batchWait, func(f batchFrame) bool {
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(f.Params, &p)
		return f.Method == "$/cancelRequest" && bytes.Equal(p.ID, q.ID)
	}); !ok {
		t.Errorf("no $/cancelRequest for the question %s of a cancelled batch", q.ID)
	}
	r.answer(q, map[string]any{"decision": "allowOnce"})
	time.Sleep(batchSettle)
	if _, ok := r.file("batch.txt"); ok {
		t.Errorf("the cancelled batch's command ran")
	}
}

// TestBatchConfirmWaitingCallCancelled: a call queued behind an open
// question ends with -32800 when cancelled and is never asked about.
func TestBatchConfirmWaitingCallCancelled(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "x\n"}, batchStartOpts{mode: "default", confirm: true})
	r.request(1, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch first.txt"}})
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm")
	}
	if q.Rule != "mode:default" {
		t.Errorf("tools/confirm rule = %q, want mode:default (docs/protocol.md)", q.Rule)
	}
	r.request(2, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch second.txt"}})
	// Calls that need no approval proceed meanwhile.
	if res := r.tool(3, "bash", map[string]any{"command": "echo free"}); res.IsError || !strings.Contains(res.text(), "free") {
		t.Errorf("a read-only command waited behind the open question: %q", res.text())
	}
	r.cancel(2)
	r.expectCancelled(2)
	r.answer(q, map[string]any{"decision": "rejectOnce", "message": "no"})
	var res batchResult
	f, _ := r.reply(1, batchWait)
	r.decode(f, &res)
	if !res.IsError || !strings.Contains(res.text(), "denied by the user: no") {
		t.Errorf("rejected call: %q", res.text())
	}
	if _, two := r.nextConfirm(1, batchSettle); two {
		t.Errorf("the cancelled waiting call was still asked about")
	}
	for _, n := range []string{"first.txt", "second.txt"} {
		if _, ok := r.file(n); ok {
			t.Errorf("%s exists", n)
		}
	}
}

// TestBatchConfirmRejectWrite: a rejected write changes nothing and
// leaves no temp file; the edit preview is the would-be change.
func TestBatchConfirmRejectWrite(t *testing.T) {
	t.Parallel()
	r := batchStart(t, map[string]string{"d/a.txt": "one\ntwo\n"}, batchStartOpts{mode: "acceptEdits", ask: []string{"Edit(d/a.txt)"}, confirm: true})
	r.tool(1, "read", map[string]any{"path": "d/a.txt"})
	r.request(2, "tools/call", map[string]any{"name": "edit", "arguments": map[string]any{"path": "d/a.txt", "edits": []any{map[string]any{"oldText": "two", "newText": "TWO"}}}})
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm")
	}
	for k, want := range map[string]any{"kind": "edit", "firstChangedLine": 2.0, "matchLevel": "exact"} {
		if q.Preview[k] != want {
			t.Errorf("edit preview %s = %v, want %v", k, q.Preview[k], want)
		}
	}
	if d := fmt.Sprint(q.Preview["unifiedDiff"]); !strings.Contains(d, "-two") || !strings.Contains(d, "+TWO") {
		t.Errorf("edit preview diff = %q", d)
	}
	r.answer(q, map[string]any{"decision": "rejectOnce", "message": "keep it"})
	var res batchResult
	f, _ := r.reply(2, batchWait)
	r.decode(f, &res)
	if !res.IsError || !strings.Contains(res.text(), "denied by the user: keep it") {
		t.Errorf("rejected edit: isError=%v %q", res.IsError, res.text())
	}
	if got, _ := r.file("d/a.txt"); got != "one\ntwo\n" {
		t.Errorf("rejected edit changed the file: %q", got)
	}
	if got := r.dirNames("d"); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("d/ holds %v after a rejected edit", got)
	}
	if n := len(r.notes("tools/details")); n != 0 {
		t.Errorf("%d tools/details for a rejected edit (nothing changed)", n)
	}
}

// TestBatchCancelledAfterSideEffect: a command cancelled after it
// changed a file is stopped (-32800, no process left), and the change
// stays: bash cannot be undone (docs/protocol.md, Cancellation).
func TestBatchCancelledAfterSideEffect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, method, marker string
	}{
		{"tools/call", "tools/call", "100.8845"},
		{"tools/callBatch", "tools/callBatch", "100.8846"},
	}
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			made := fmt.Sprintf("made%d.txt", i)
			call := batchCall("bash", map[string]any{"command": "echo hi > " + made + "; sleep " + c.marker}, "")
			var params any = call
			if c.method == "tools/callBatch" {
				params = map[string]any{"calls": []any{call}}
			}
			r.request(i+1, c.method, params)
			// The file is written and the command still runs: the cancel
			// comes after the change (the shell's command line holds the
			// marker before it has run anything).
			if !batchEventually(batchWait, func() bool {
				_, made := r.file(made)
				return made && batchProcs(c.marker) > 0
			}) {
				t.Fatal("the command never got to its sleep")
			}
			r.cancel(i + 1)
			f, ok := r.reply(i+1, batchWait)
			if !ok {
				t.Fatal("no reply")
			}
			// docs/protocol.md: a cancelled command is stopped, not
			// undone — -32800, its process group gone, what it wrote
			// before that still there.
			if f.Error == nil || f.Error.Code != batchCancelled {
				t.Errorf("%s: reply %+v, want -32800", c.method, f)
			}
			if !batchEventually(batchWait, func() bool { return batchProcs(c.marker) == 0 }) {
				t.Errorf("%s: the cancelled command is still running", c.method)
			}
			if _, exists := r.file(made); !exists {
				t.Errorf("%s: %s, written before the cancel, is gone; a command is stopped, not undone", c.method, made)
			}
		})
	}
}

// TestBatchGeneratedCallIDsAvoidGiven: a generated callId must not
// repeat one the client gave, or notifications of two calls carry the same
// callId and cannot be told apart.
func TestBatchGeneratedCallIDsAvoidGiven(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, nil, batchStartOpts{mode: "bypass"})
	res := r.batch(1,
		batchCall("bash", map[string]any{"command": batchTalker("GIVEN")}, "call-1"),
		batchCall("bash", map[string]any{"command": batchTalker("ABSENT")}, ""),
		batchCall("bash", map[string]any{"command": "echo x"}, "call-2"),
		batchCall("bash", map[string]any{"command": "echo y"}, ""),
	)
	ids := []string{res[0].CallID, res[1].CallID, res[2].CallID, res[3].CallID}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("callIds in one batch %v: %q twice", ids, id)
		}
		seen[id] = true
	}
	for _, f := range r.notes("tools/progress") {
		if id, _, out, _ := batchNote(f); strings.Contains(out, "ABSENT") && id == "call-1" {
			t.Errorf("progress of the call without a callId is stamped %q, the callId the client gave another call", id)
			break
		}
	}
}

// TestBatchEOFWithOpenQuestion: closing stdin cancels everything
// running, an open question included; the process exits within 1 s.
func TestBatchEOFWithOpenQuestion(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	r := batchStart(t, nil, batchStartOpts{mode: "default", confirm: true})
	r.request(1, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch eof.txt"}})
	if _, ok := r.nextConfirm(0, batchWait); !ok {
		t.Fatal("no tools/confirm")
	}
	r.request(2, "tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 100.3377"}})
	r.request(3, "tools/callBatch", map[string]any{"calls": []any{batchCall("test_block", map[string]any{}, "")}})
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	r.stdin.Close()
	select {
	case <-r.exited:
		// docs/protocol.md: within 1 s; half a second of slack for a loaded machine.
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("exit took %v after EOF", d)
		}
	case <-time.After(batchWait):
		t.Fatal("no exit after EOF with an open question")
	}
	if _, ok := r.file("eof.txt"); ok {
		t.Errorf("the call waiting for approval ran")
	}
	if batchProcs("100.3377") != 0 && !batchEventually(3*time.Second, func() bool { return batchProcs("100.3377") == 0 }) {
		t.Errorf("a command survived EOF")
	}
}

// TestBatchConfirmAllowAlwaysFile: allowAlways for a write is as
// narrow as the request: this file (edits of it too), not another file.
func TestBatchConfirmAllowAlwaysFile(t *testing.T) {
	slow(t)
	t.Parallel()
	r := batchStart(t, map[string]string{"a.txt": "one\n"}, batchStartOpts{mode: "default", confirm: true})
	r.tool(1, "read", map[string]any{"path": "a.txt"})
	r.request(2, "tools/call", map[string]any{"name": "write", "arguments": batchWriteArgs("a.txt", "w1\n")})
	q, ok := r.nextConfirm(0, batchWait)
	if !ok {
		t.Fatal("no tools/confirm for a write in mode default")
	}
	r.answer(q, map[string]any{"decision": "allowAlways"})
	if f, _ := r.reply(2, batchWait); f.Error != nil {
		t.Fatalf("%+v", *f.Error)
	}
	r.request(3, "tools/call", map[string]any{"name": "edit", "arguments": map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "w1", "newText": "w2"}}}})
	if q2, asked := r.nextConfirm(1, 1500*time.Millisecond); asked {
		t.Errorf("an edit of the file allowed always was asked about again")
		r.answer(q2, map[string]any{"decision": "rejectOnce"})
	}
	r.reply(3, batchWait)
	if got, _ := r.file("a.txt"); got != "w2\n" {
		t.Errorf("a.txt = %q after the allowed edit", got)
	}
	r.request(4, "tools/call", map[string]any{"name": "write", "arguments": batchWriteArgs("b.txt", "b\n")})
	q3, asked := r.nextConfirm(1, batchWait)
	if !asked {
		t.Errorf("allowAlways for a.txt also allowed a write of b.txt")
	} else {
		r.answer(q3, map[string]any{"decision": "rejectOnce"})
	}
	r.reply(4, batchWait)
}

// callBatch: concurrency-safe calls run in parallel; the others one at a
// time in call order; results come back in call order.
func TestCallBatchConcurrencyAndOrder(t *testing.T) {
	slow(t)
	t.Parallel()
	c, ws, ctx := start(t, nil)
	var out struct {
		Results []harness.Result `json:"results"`
	}
	var calls []any
	for i := range 4 {
		calls = append(calls, map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 0.4}, "callId": fmt.Sprint("p", i)})
	}
	t0 := time.Now()
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 1200*time.Millisecond {
		t.Errorf("4 concurrency-safe 0.4 s calls took %v (not parallel)", d)
	}
	for i, r := range out.Results {
		if r.CallID != fmt.Sprint("p", i) {
			t.Errorf("result %d has callId %q", i, r.CallID)
		}
	}

	calls = nil
	for i := range 3 {
		// The first sleeps longest: run in parallel, the log would be 3 2 1.
		cmd := fmt.Sprintf("sleep 0.%d; echo %d >> log.txt", 3-i, i+1)
		calls = append(calls, map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}})
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(ws, "log.txt")); got != "1\n2\n3\n" {
		t.Errorf("non-concurrency-safe calls ran out of order: %q", got)
	}
}

// $/cancelRequest on a tools/callBatch replies -32800.
func TestCancelBatch(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	errCh := make(chan error, 1)
	go func() {
		var out any
		// A fresh client's ids are sequential: initialize is 1, this is 2.
		_, err := c.Conn.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "test_block", "arguments": map[string]any{"seconds": 20}},
		}}, &out)
		errCh <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the batch never started")
	}
	c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2})
	select {
	case err := <-errCh:
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != -32800 {
			t.Fatalf("err = %v, want -32800", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("cancelled batch did not reply")
	}
}

type batchResults struct {
	Results []harness.Result `json:"results"`
}

func callBatch(t *testing.T, ctx context.Context, c *harness.Client, calls ...map[string]any) []harness.Result {
	t.Helper()
	var out batchResults
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatalf("tools/callBatch: %v", err)
	}
	if len(out.Results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(out.Results), len(calls))
	}
	return out.Results
}

func batchItem(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

func TestCallBatch(t *testing.T) {
	slow(t)
	// Not parallel: it times calls running side by side, which busy neighbours on 2 cores stretch.
	ctx := testCtx(t, 40*time.Second)
	t.Run("read, edit, read of one file", func(t *testing.T) {
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws})
		c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})
		for i := 0; i < 8; i++ {
			name := fmt.Sprintf("f%d.txt", i)
			writeFiles(t, ws, map[string]string{name: "alpha\n"})
			rs := callBatch(t, ctx, c,
				batchItem("read", map[string]any{"path": name}),
				batchItem("edit", map[string]any{"path": name, "edits": []any{map[string]any{"oldText": "alpha", "newText": "beta"}}}),
				batchItem("read", map[string]any{"path": name}))
			if rs[0].IsError || !strings.Contains(rs[0].Text(), "alpha") {
				t.Errorf("round %d first read: %s", i, rs[0].Text())
			}
			if rs[1].IsError {
				t.Errorf("round %d edit did not see the read: %s", i, rs[1].Text())
			}
			if !strings.Contains(rs[2].Text(), "beta") {
				t.Errorf("round %d second read did not see the edit: %s", i, rs[2].Text())
			}
		}
	})
	t.Run("a call that is not concurrency-safe waits for those before it", func(t *testing.T) {
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws})
		c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
		rs := callBatch(t, ctx, c,
			batchItem("bash", map[string]any{"command": "sleep 0.7; cat flag"}),
			batchItem("bash", map[string]any{"command": "echo written > flag"}))
		if !rs[0].IsError {
			t.Errorf("the first call saw the file the later non-safe call writes: %s", rs[0].Text())
		}
		if rs[1].IsError {
			t.Errorf("second call: %s", rs[1].Text())
		}
	})
	t.Run("at most GOMAXPROCS x 2 at once", func(t *testing.T) {
		ws := t.TempDir()
		c := harness.Start(t, harness.Options{Root: ws, Env: []string{"GOMAXPROCS=1"}})
		c.Initialize(ctx, nil)
		var calls []map[string]any
		for i := 0; i < 3; i++ {
			calls = append(calls, batchItem("bash", map[string]any{"command": "sleep 1"}))
		}
		start := time.Now()
		rs := callBatch(t, ctx, c, calls...)
		el := time.Since(start)
		for i, r := range rs {
			if r.IsError {
				t.Fatalf("call %d: %s", i, r.Text())
			}
		}
		// Two at once: two rounds (~2 s); three at once would be ~1 s, serial ~3 s.
		if el < 1900*time.Millisecond || el > 2900*time.Millisecond {
			t.Errorf("3 x sleep 1 with GOMAXPROCS=1 took %v, want about 2 s (2 at once)", el)
		}
	})
}

func TestCallBatchKeepsOrderAndIsolatesFailures(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, map[string]string{"a.txt": "A\n", "b.txt": "B\n"})
	var out struct {
		Results []harness.Result `json:"results"`
	}
	calls := []any{
		map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "one"},
		map[string]any{"name": "nope", "arguments": map[string]any{}},
		map[string]any{"name": "test_panic", "arguments": map[string]any{}},
		map[string]any{"name": "read", "arguments": map[string]any{"path": "b.txt"}, "callId": "four"},
	}
	if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 4 {
		t.Fatalf("got %d results", len(out.Results))
	}
	if out.Results[0].CallID != "one" || !strings.Contains(out.Results[0].Text(), "1→A") {
		t.Errorf("result 0 = %+v", out.Results[0])
	}
	if !out.Results[1].IsError || !strings.Contains(out.Results[1].Text(), "unknown tool") {
		t.Errorf("result 1 = %+v", out.Results[1])
	}
	if !out.Results[2].IsError || !strings.Contains(out.Results[2].Text(), "internal error in test_panic") {
		t.Errorf("result 2 = %+v", out.Results[2])
	}
	if out.Results[3].CallID != "four" || !strings.Contains(out.Results[3].Text(), "1→B") {
		t.Errorf("result 3 = %+v", out.Results[3])
	}
	// The panic did not take the server down.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Fatal(r.Text())
	}
}
