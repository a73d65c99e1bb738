package e2e

// The wire protocol (docs/protocol.md) through raw bytes: framing, JSON-RPC
// error codes, the lifecycle's states and wire order, cancellation and its
// grace, and the shapes of the initialize result and a tool result.
// framingRaw has its own Content-Length reader and writer, so nothing in a
// client library can paper over what the server does.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/test/harness"
)

// framingWait is how long any single expected frame may take on a loaded machine.
const framingWait = 10 * time.Second

// framingFrame is one decoded frame from stdout: a message, or a batch reply.
type framingFrame struct {
	M     map[string]any // the message (nil for a batch)
	Batch []any          // the members of a batch reply
	Seq   int            // the frame's position on stdout
	At    time.Time
	Raw   []byte
}

func (f framingFrame) method() string { s, _ := f.M["method"].(string); return s }
func (f framingFrame) params() map[string]any {
	p, _ := f.M["params"].(map[string]any)
	return p
}
func (f framingFrame) result() map[string]any {
	r, _ := f.M["result"].(map[string]any)
	return r
}

type framingRaw struct {
	*rawClient[framingFrame]
	nextID atomic.Int64
	amu    sync.Mutex
	// answer, when set, answers server→client requests (tools/confirm).
	answer func(m map[string]any) (any, bool)
}

// framingStart spawns agentls rooted at ws with raw pipes; stdout bytes
// that are not well-formed frames fail the test.
func framingStart(t *testing.T, ws string, env ...string) *framingRaw {
	t.Helper()
	return cliServe(t, env, "--root", ws)
}

// read parses LSP frames strictly: CRLF header lines, only Content-Length
// and Content-Type, a blank line, Content-Length bytes of JSON.
func (r *framingRaw) read(br *bufio.Reader, rc *rawClient[framingFrame]) {
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if line != "" {
					rc.noteBad("partial header at EOF: " + line)
				}
				return
			}
			if line == "\r\n" {
				break
			}
			if !strings.HasSuffix(line, "\r\n") {
				rc.noteBad("header line without CRLF: " + line)
			}
			k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ": ")
			switch {
			case !ok:
				rc.noteBad("not a header: " + line)
			case strings.EqualFold(k, "Content-Length"):
				if n, err = strconv.Atoi(v); err != nil || n < 0 {
					rc.noteBad("bad Content-Length: " + line)
					n = -1
				}
			case !strings.EqualFold(k, "Content-Type"):
				rc.noteBad("unknown header: " + line)
			}
		}
		if n < 0 {
			rc.noteBad("frame without Content-Length")
			continue
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			rc.noteBad("short body")
			return
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			rc.noteBad("body is not JSON: " + string(body))
			continue
		}
		f := framingFrame{Seq: rc.count(), At: time.Now(), Raw: body}
		switch x := v.(type) {
		case map[string]any:
			if x["jsonrpc"] != "2.0" {
				rc.noteBad("frame without jsonrpc 2.0: " + string(body))
			}
			f.M = x
		case []any:
			f.Batch = x
		default:
			rc.noteBad("body is neither object nor array: " + string(body))
			continue
		}
		r.amu.Lock()
		answer := r.answer
		r.amu.Unlock()
		if f.M != nil && f.M["method"] != nil && f.M["id"] != nil && answer != nil {
			if res, ok := answer(f.M); ok {
				rc.sendJSON(map[string]any{"jsonrpc": "2.0", "id": f.M["id"], "result": res})
			}
		}
		rc.add(f)
	}
}

func (r *framingRaw) setAnswer(f func(m map[string]any) (any, bool)) {
	r.amu.Lock()
	r.answer = f
	r.amu.Unlock()
}

// wait returns the first frame (message, or batch member) satisfying pred.
func (r *framingRaw) wait(timeout time.Duration, pred func(map[string]any) bool) (map[string]any, bool) {
	var hit map[string]any
	_, ok := r.rawClient.wait(timeout, func(f framingFrame) bool {
		for _, m := range f.members() {
			if pred(m) {
				hit = m
				return true
			}
		}
		return false
	})
	return hit, ok
}

// members is the message, or the messages of a batch reply.
func (f framingFrame) members() []map[string]any {
	if f.M != nil {
		return []map[string]any{f.M}
	}
	var ms []map[string]any
	for _, x := range f.Batch {
		if m, ok := x.(map[string]any); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

func (r *framingRaw) writeBytes(b []byte) {
	r.t.Helper()
	if err := r.writeRaw(b); err != nil {
		r.t.Fatalf("write to agentls: %v", err)
	}
}

func framingFrameOf(body string) []byte {
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (r *framingRaw) send(m any) { r.sendJSON(m) }

// request sends a request with a fresh numeric id and returns the id.
func (r *framingRaw) request(method string, params any) int {
	id := int(r.nextID.Add(1))
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	r.send(m)
	return id
}

func (r *framingRaw) notify(method string, params any) {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	r.send(m)
}

func framingIsReply(m map[string]any) bool {
	_, r := m["result"]
	_, e := m["error"]
	return m["method"] == nil && (r || e)
}

func framingIDIs(id any) func(map[string]any) bool {
	want := fmt.Sprintf("%T:%v", framingNorm(id), framingNorm(id))
	return func(m map[string]any) bool {
		return framingIsReply(m) && fmt.Sprintf("%T:%v", framingNorm(m["id"]), framingNorm(m["id"])) == want
	}
}

// framingNorm makes JSON numbers and Go ints compare equal.
func framingNorm(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return v
}

func (r *framingRaw) reply(id any) map[string]any {
	r.t.Helper()
	m, ok := r.wait(framingWait, framingIDIs(id))
	if !ok {
		r.t.Fatalf("no reply to id %v within %v; frames: %s", id, framingWait, r.dump())
	}
	return m
}

// call sends a request and waits for its reply.
func (r *framingRaw) call(method string, params any) map[string]any {
	r.t.Helper()
	return r.reply(r.request(method, params))
}

// callT sends a request and returns its reply's frame, failing t (a subtest
// may be it) on timeout.
func (r *framingRaw) callT(t *testing.T, method string, params any) framingFrame {
	t.Helper()
	id := r.request(method, params)
	f, ok := r.rawClient.wait(framingWait, func(f framingFrame) bool { return f.M != nil && framingIDIs(id)(f.M) })
	if !ok {
		t.Fatalf("%s: no reply within %v (exited=%v)", method, framingWait, r.isExited())
	}
	return f
}

// toolCall runs tools/call (with callID when not empty) and returns its
// reply's frame, failing t on a protocol error.
func (r *framingRaw) toolCall(t *testing.T, name, callID string, args any) framingFrame {
	t.Helper()
	p := framingTool(name, args)
	if callID != "" {
		p["callId"] = callID
	}
	f := r.callT(t, "tools/call", p)
	if f.M["error"] != nil {
		t.Fatalf("tools/call %s: protocol error %s", name, f.Raw)
	}
	return f
}

func (r *framingRaw) dump() string {
	var sb strings.Builder
	for _, f := range r.all() {
		var b []byte
		if f.M != nil {
			b, _ = json.Marshal(f.M)
		} else {
			b, _ = json.Marshal(f.Batch)
		}
		if len(b) > 300 {
			b = append(b[:300], "..."...)
		}
		sb.Write(b)
		sb.WriteString("\n")
	}
	return sb.String()
}

func (r *framingRaw) initialize(params map[string]any) map[string]any {
	r.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["capabilities"]; !ok {
		params["capabilities"] = map[string]any{}
	}
	m := r.call("initialize", params)
	if m["error"] != nil {
		r.t.Fatalf("initialize: %v", m["error"])
	}
	r.notify("initialized", map[string]any{})
	// Tests change files and expect workspace/externalChange: only once
	// the watchers are armed.
	if _, ok := r.wait(framingWait, func(m map[string]any) bool { return m["method"] == harness.WatcherReady }); !ok {
		r.t.Fatalf("no %s within %v", harness.WatcherReady, framingWait)
	}
	res, _ := m["result"].(map[string]any)
	return res
}

func framingErr(m map[string]any) (code int, msg string) {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0, ""
	}
	c, _ := e["code"].(float64)
	s, _ := e["message"].(string)
	return int(c), s
}

// alive checks that the connection still serves a valid request.
func (r *framingRaw) alive(what string) {
	r.t.Helper()
	id := r.request("tools/list", map[string]any{})
	m, ok := r.wait(framingWait, framingIDIs(id))
	if !ok {
		r.t.Fatalf("after %s: a following tools/list got no reply (exited=%v); frames:\n%s", what, r.isExited(), r.dump())
	}
	if code, msg := framingErr(m); code != 0 || m["result"] == nil {
		r.t.Fatalf("after %s: tools/list failed: %d %s", what, code, msg)
	}
}

func framingWS(t *testing.T, files map[string]string) string {
	t.Helper()
	return newWorkspace(t, files)
}

func framingResult(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	if code, msg := framingErr(m); code != 0 || m["error"] != nil {
		t.Fatalf("expected a result, got error %d %q", code, msg)
	}
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("result is not an object: %#v", m["result"])
	}
	return res
}

func framingText(res map[string]any) string {
	var sb strings.Builder
	parts, _ := res["content"].([]any)
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok && pm["type"] == "text" {
			s, _ := pm["text"].(string)
			sb.WriteString(s)
		}
	}
	return sb.String()
}

// framingTool is a tools/call's params.
func framingTool(name string, args any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// --- framing and message errors -------------------------------------------------

// Every frame a client may send, good or broken, on one connection: the
// replies it draws (a result, or errors with the code and id the contract
// gives), and a tools/list right behind it is answered. The frame reader's
// own cases (header case, other headers, LF line ends, bad counts, JSON
// that is not JSON-RPC) are internal/rpc TestFrameReader and
// TestCheckMessage; these go through the binary.
func TestProtocolFramesAndMessageErrors(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	r.initialize(nil)
	list := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, id)
	}
	fr := func(body string) string { return string(framingFrameOf(body)) }
	req := func(id any, method string, params any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		return fr(string(b))
	}
	note := func(method string, params any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		return fr(string(b))
	}
	probes := func(id int) string { return fr(list(id)) + fr(list(id+1)) }
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919 + i/13)
	}
	pad := strings.Repeat("x", 6<<20)
	twoFrames := fr(list(7)) + fr(list(8))
	cases := []struct {
		name  string
		raw   string
		chunk int      // written this many bytes at a time (0: one write)
		ids   []any    // requests whose replies must be results
		code  int      // the error every other reply carries (0: there is none)
		errID any      // the id those errors echo (nil: null)
		n     int      // how many error replies (0: one when code is set; -1: some, of any code)
		wants []string // in the replies
	}{
		{name: "upper case header, no space", raw: fmt.Sprintf("CONTENT-LENGTH:%d\r\n\r\n%s", len(list(2)), list(2)), ids: []any{2}},
		{name: "byte by byte", raw: fr(list(4)), chunk: 1, ids: []any{4}},
		{name: "two frames in one write", raw: fr(list(5)) + fr(list(6)), ids: []any{5, 6}},
		{name: "a frame and a half per write", raw: twoFrames, chunk: len(fr(list(7))) + 10, ids: []any{7, 8}},
		{name: "a frame of several MB", raw: fr(fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"},"callId":"proto-huge","padding":%q}}`, pad)), ids: []any{9}, wants: []string{"alpha", "proto-huge"}},
		{name: "invalid UTF-8 in a path is a tool result", raw: fr("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"a\xff.txt\"}}}"), ids: []any{10}},
		{name: "a batch of requests", raw: fr(`[{"jsonrpc":"2.0","id":501,"method":"tools/list"},{"jsonrpc":"2.0","id":502,"method":"tools/list"}]`), ids: []any{501, 502}},
		{name: "missing Content-Length", raw: "Content-Type: application/json\r\n\r\n" + list(12), code: -32700},
		{name: "invalid JSON body", raw: fr(`{"jsonrpc":"2.0","id":1,"method":`), code: -32700},
		{name: "body is a number", raw: fr(`42`), code: -32600},
		{name: "body is a string", raw: fr(`"hello"`), code: -32600},
		{name: "body is null", raw: fr(`null`), code: -32600},
		{name: "method not a string, id echoed", raw: fr(`{"jsonrpc":"2.0","id":77,"method":5}`), code: -32600, errID: 77},
		{name: "jsonrpc 1.0, string id echoed", raw: fr(`{"jsonrpc":"1.0","id":"s-78","method":"tools/list"}`), code: -32600, errID: "s-78"},
		{name: "no jsonrpc member, id echoed", raw: fr(`{"id":79,"method":"tools/list"}`), code: -32600, errID: 79},
		{name: "batch of non-messages", raw: fr(`[1, 2]`), code: -32600, n: 2},
		{name: "empty batch", raw: fr(`[]`), code: -32600},
		{name: "notifications, known or not, draw nothing", raw: note("no/such/notification", map[string]any{"x": 1}) + note("$/setTrace", map[string]any{"value": "off"}) + note("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": "file:///nope"}})},
		{name: "unknown tools/ method", raw: req("u1", "tools/frobnicate", map[string]any{}), code: -32601, errID: "u1"},
		{name: "unknown LSP request", raw: req(80, "textDocument/hover", map[string]any{}), code: -32601, errID: 80},
		{name: "unknown $/ request", raw: req(81, "$/unknownRequest", map[string]any{}), code: -32601, errID: 81},
		{name: "tools/call name is a number", raw: req(90, "tools/call", map[string]any{"name": 5, "arguments": map[string]any{}}), code: -32602, errID: 90, wants: []string{"name"}},
		{name: "tools/call params is a string", raw: req(91, "tools/call", "read"), code: -32602, errID: 91},
		{name: "tools/call callId is an object", raw: req(92, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": map[string]any{}}), code: -32602, errID: 92, wants: []string{"callId"}},
		{name: "tools/callBatch calls is an object", raw: req(93, "tools/callBatch", map[string]any{"calls": map[string]any{"name": "read"}}), code: -32602, errID: 93, wants: []string{"calls"}},
		{name: "tools/callBatch calls member is a string", raw: req(94, "tools/callBatch", map[string]any{"calls": []any{"read"}}), code: -32602, errID: 94, wants: []string{"calls"}},
		{name: "tools/list format is a number", raw: req(95, "tools/list", map[string]any{"format": 5}), code: -32602, errID: 95, wants: []string{"format"}},
		{name: "tools/list unknown format", raw: req(96, "tools/list", map[string]any{"format": "xml"}), code: -32602, errID: 96, wants: []string{"format", "mcp, openai, anthropic"}},
		{name: "tools/list includeDeferred is a string", raw: req(97, "tools/list", map[string]any{"includeDeferred": "yes"}), code: -32602, errID: 97, wants: []string{"includeDeferred"}},
		// A malformed frame does not swallow the requests a pipelining client
		// wrote right behind it; it draws an error too.
		{name: "Content-Length smaller than the body", raw: "Content-Length: 10\r\n\r\n" + list(1) + probes(20), ids: []any{20, 21}, n: -1},
		{name: "Content-Length larger than the body", raw: fmt.Sprintf("Content-Length: %d\r\n\r\n", len(list(1))+30) + list(1) + probes(22), ids: []any{22, 23}, n: -1},
		{name: "a header without the blank line", raw: fmt.Sprintf("Content-Length: %d\r\n", len(list(1))) + list(1) + probes(24), ids: []any{24, 25}, n: -1},
		{name: "4 KB of binary garbage", raw: string(garbage) + probes(26), ids: []any{26, 27}, n: -1},
		{name: "NUL bytes", raw: "\x00\x00Content-Length\x00: 5\r\n\r\n\x00\x00\x00\x00\x00" + probes(28), ids: []any{28, 29}, n: -1},
		{name: "CR-only line ends", raw: fmt.Sprintf("Content-Length: %d\r\r", len(list(1))) + list(1) + probes(30), ids: []any{30, 31}, n: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(r.all())
			raw := []byte(tc.raw)
			for step := tc.chunk; step > 0 && len(raw) > step; raw = raw[step:] {
				r.writeBytes(raw[:step])
			}
			r.writeBytes(raw)
			for _, id := range tc.ids {
				m := r.reply(id)
				if m["result"] == nil {
					t.Errorf("reply to %v is not a result: %v", id, m["error"])
				}
				if js := compactJSON(m); len(tc.wants) > 0 {
					wantContains(t, "reply", js, tc.wants...)
				}
			}
			r.alive(tc.name)
			n := tc.n
			if n == 0 && tc.code != 0 {
				n = 1
			}
			var errs []map[string]any
			for _, f := range r.all()[before:] {
				for _, m := range f.members() {
					if framingIsReply(m) && !slices.ContainsFunc(tc.ids, func(id any) bool { return framingIDIs(id)(m) }) && m["error"] != nil {
						errs = append(errs, m)
					}
				}
			}
			switch {
			case n < 0 && len(errs) == 0:
				t.Fatalf("the bad frame got no error reply:\n%s", r.dump())
			case n < 0:
				return // how many, and which code, is how the reader resynchronises
			case len(errs) != n:
				t.Fatalf("want %d error replies, got %d:\n%s", n, len(errs), r.dump())
			}
			for _, m := range errs {
				code, msg := framingErr(m)
				if code != tc.code || framingNorm(m["id"]) != framingNorm(tc.errID) {
					t.Errorf("error %d %q with id %#v, want %d with id %#v", code, msg, m["id"], tc.code, tc.errID)
				}
				wantContains(t, "error message", msg, tc.wants...)
			}
		})
	}
	r.stdin.Close()
	if code := r.exitCode(3 * time.Second); code == 2 || code == -1 || strings.Contains(r.stderr.String(), "panic:") {
		t.Errorf("exit code %d at EOF (2: a Go panic, -1: still running); stderr:\n%s", code, r.stderr.String())
	}
	// Stdin ending right behind a broken frame, while the reader looks for
	// the next header, is an EOF like any other.
	for _, raw := range []string{
		"Content-Length: 9\r\n\r\n{\"jsonrp\"",
		"Content-Type: x\r\n\r\n{}",
		"Content-Length: -5\r\n\r\n",
		"Content-Length: 2\r\n\r\n[]",
	} {
		t.Run("then EOF: "+strings.ReplaceAll(raw, "\r\n", " "), func(t *testing.T) {
			r := framingStart(t, ws)
			r.initialize(nil)
			r.writeBytes([]byte(raw))
			r.stdin.Close()
			if code := r.exitCode(3 * time.Second); code == 2 || code == -1 || strings.Contains(r.stderr.String(), "panic:") {
				t.Errorf("exit code %d, stderr:\n%s", code, r.stderr.String())
			}
		})
	}
}

// Nothing but protocol frames on stdout (framingStart's reader fails the
// test on anything else), whatever commands print, while the server logs at
// debug, a tool panics, an extension tool is broken and progress streams;
// shutdown answers null and exit after it is code 0.
func TestProtocolStdoutOnlyFramesWithLogs(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{".agentls/tools/bad.json": `{"name": "bad", `, "a.txt": "A\n"})
	r := framingStart(t, ws, "AGENTLS_LOG_LEVEL=debug")
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass", "unknownKey": 1}})
	noisy := `for i in $(seq 1 3000); do echo "stdout line $i"; echo "stderr line $i" >&2; done
printf 'Content-Length: 3\r\n\r\nabc'
echo direct > /dev/stdout; echo direct-err > /dev/stderr; (echo tty > /dev/tty) 2>/dev/null; true`
	for _, call := range []map[string]any{
		framingTool("bash", map[string]any{"command": noisy}),
		framingTool("test_panic", map[string]any{}),
		framingTool("read", map[string]any{"path": "a.txt"}),
		framingTool("nope", map[string]any{}),
	} {
		framingResult(t, r.call("tools/call", call))
	}
	if m := r.call("shutdown", nil); m["error"] != nil || m["result"] != nil {
		t.Errorf("shutdown reply = %v, want result null", m)
	}
	r.notify("exit", nil)
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Errorf("exit code %d after shutdown+exit", code)
	}
}

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

// --- lifecycle ---------------------------------------------------------------

// Before initialize notifications draw nothing and requests -32002; a
// second initialize is -32600 and keeps the session; after shutdown (result
// null) every request is -32600 and exit is code 0; exit without shutdown,
// even before initialize, is code 1.
func TestProtocolLifecycle(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.notify("initialized", map[string]any{})
	r.notify("$/cancelRequest", map[string]any{"id": 12345})
	r.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{}}})
	read := framingTool("read", map[string]any{"path": "a.txt"})
	requests := func(when string, want int, methods ...string) {
		t.Helper()
		for _, method := range methods {
			var params any = map[string]any{}
			if method == "tools/call" {
				params = read
			}
			if code, msg := framingErr(r.call(method, params)); code != want {
				t.Errorf("%s %s: code %d %q, want %d", method, when, code, msg, want)
			}
		}
	}
	requests("before initialize", -32002, "tools/list", "tools/call", "tools/callBatch", "shutdown", "no/such/method")
	r.initialize(nil)
	for _, f := range r.all() {
		if f.M != nil && framingIsReply(f.M) && f.M["id"] == nil {
			t.Errorf("a notification before initialize was answered: %v", f.M)
		}
	}
	m := r.call("initialize", map[string]any{"rootUri": fileURI(t.TempDir()), "capabilities": map[string]any{}})
	if code, msg := framingErr(m); code != -32600 {
		t.Errorf("second initialize: code %d %q, want -32600", code, msg)
	}
	if res := framingResult(t, r.call("tools/call", read)); res["isError"] != false {
		t.Errorf("the first session was replaced: %s", framingText(res))
	}
	if m := r.call("shutdown", nil); m["error"] != nil || m["result"] != nil {
		t.Fatalf("shutdown: want result null, got %v", m)
	}
	requests("after shutdown", -32600, "tools/list", "tools/call", "tools/callBatch", "shutdown", "initialize", "no/such/method")
	r.notify("exit", nil)
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Errorf("exit after shutdown: code %d, want 0", code)
	}
	early := framingStart(t, framingWS(t, nil))
	early.notify("exit", nil)
	if code := early.exitCode(5 * time.Second); code != 1 {
		t.Errorf("exit before initialize: code %d, want 1", code)
	}
}

// Closing stdin ends the session (docs/protocol.md, Lifecycle), even in the
// middle of a frame: everything running is cancelled (a command's process,
// a call's context, an open tools/confirm), nothing more is written, and the
// process exits within 1 s.
func TestLifecycleClosingStdinCancelsAndExits(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := framingWS(t, map[string]string{"a.txt": "x\n"})
	r := framingStart(t, ws)
	asked := make(chan struct{}, 1)
	r.setAnswer(func(m map[string]any) (any, bool) {
		if m["method"] == "tools/confirm" {
			select {
			case asked <- struct{}{}:
			default:
			}
		}
		return nil, false // never answered
	})
	r.initialize(map[string]any{
		"initializationOptions": map[string]any{"permissions": map[string]any{"allow": []any{"Bash(sleep:*)", "Bash(touch:*)"}}},
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	framingResult(t, r.call("tools/call", framingTool("read", map[string]any{"path": "a.txt"})))
	marker := fmt.Sprintf("3000.%d%d", os.Getpid(), time.Now().UnixNano()%1e6)
	single := marker + "1"
	reapProcessesWithArg(t, marker)
	reapProcessesWithArg(t, single)
	r.request("tools/call", framingTool("bash", map[string]any{"command": "sleep " + marker + "; touch after-sleep"}))
	r.request("tools/call", framingTool("bash", map[string]any{"command": "sleep " + single}))
	r.request("tools/call", framingTool("test_block", map[string]any{"seconds": 30, "marker": "eof-cancelled.txt"}))
	r.request("tools/call", framingTool("edit", editCall("a.txt", "x", "y")))
	r.request("tools/callBatch", map[string]any{"calls": []any{framingTool("test_block", map[string]any{})}})
	select {
	case <-asked:
	case <-time.After(framingWait):
		t.Fatalf("the edit never asked; frames:\n%s", r.dump())
	}
	if !waitUntil(framingWait, func() bool { return len(processesWithArg(marker)) > 0 && len(processesWithArg(single)) > 0 }) {
		t.Fatalf("the bash children never started; frames:\n%s", r.dump())
	}
	if _, ok := r.wait(framingWait, func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "tools/progress" && p["tool"] == "test_block"
	}); !ok {
		t.Fatal("test_block never started")
	}
	r.writeBytes([]byte("Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,"))
	start := time.Now()
	r.stdin.Close()
	code := r.exitCode(5 * time.Second)
	took := time.Since(start)
	if code == -1 {
		t.Fatal("agentls did not exit within 5 s of stdin EOF")
	}
	// EOF is not an orderly shutdown; the code is logged, not judged.
	t.Logf("exit code %d after %v", code, took)
	if took > time.Second {
		t.Errorf("exit took %v after EOF; contract: within 1 s", took)
	}
	if !waitUntil(2*time.Second, func() bool { return len(processesWithArg(marker))+len(processesWithArg(single)) == 0 }) {
		t.Errorf("bash children still running after agentls exited: pids %v %v", processesWithArg(marker), processesWithArg(single))
	}
	if _, err := os.Stat(filepath.Join(ws, "after-sleep")); err == nil {
		t.Errorf("the cancelled command ran on")
	}
	if _, err := os.Stat(filepath.Join(ws, "eof-cancelled.txt")); err != nil {
		t.Errorf("the running call's context was not cancelled: %v", err)
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "x\n" {
		t.Errorf("the edit waiting for approval changed the file: %q", got)
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

// --- cancellation ------------------------------------------------------------

// A running call cancelled by $/cancelRequest replies -32800 (issue 2:
// within 100 ms) whatever its id: a string, 0, beyond int32 (the server
// accepts and echoes such ids, so it must cancel them too), negative. The
// call's own context is cancelled: test_block leaves its marker.
func TestProtocolCancelRunningCall(t *testing.T) {
	slow(t)
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	r.initialize(nil)
	var lat []time.Duration
	for i, id := range []any{"proto-str-1", 0, 7, float64(1<<31 + 5), float64(1<<40 + 7), -3} {
		marker := fmt.Sprintf("cancelled-%d.txt", i)
		r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "test_block",
			"arguments": map[string]any{"seconds": 20, "marker": marker}, "callId": fmt.Sprintf("blk-%d", i)}})
		// The call is running when a read sent after it completes (calls run
		// concurrently); then cancel.
		framingResult(t, r.call("tools/call", framingTool("read", map[string]any{"path": "a.txt"})))
		if _, ok := r.wait(200*time.Millisecond, framingIDIs(id)); ok {
			t.Fatalf("test_block %v replied before being cancelled", id)
		}
		start := time.Now()
		r.notify("$/cancelRequest", map[string]any{"id": id})
		rep := r.reply(id)
		lat = append(lat, time.Since(start))
		if code, msg := framingErr(rep); code != -32800 {
			t.Errorf("cancelled call %v: code %d %q, want -32800", id, code, msg)
		}
		waitFile(t, filepath.Join(ws, marker), 2*time.Second)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("cancel→reply latencies: %v", lat)
	if lat[0] > 100*time.Millisecond {
		t.Errorf("fastest cancel took %v; issue 2: -32800 within 100 ms", lat[0])
	}
	r.alive("six cancels")
}

// $/cancelRequest for a finished, an already cancelled or an unknown id
// draws no frame and ends no other call.
func TestProtocolCancelHarmless(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	r.send(map[string]any{"jsonrpc": "2.0", "id": "blk-a", "method": "tools/call", "params": framingTool("test_block", map[string]any{})})
	finished := r.request("tools/call", framingTool("read", map[string]any{"path": "a.txt"}))
	framingResult(t, r.reply(finished))
	cancelled := r.request("tools/call", framingTool("test_block", map[string]any{}))
	framingResult(t, r.call("tools/list", nil))
	r.notify("$/cancelRequest", map[string]any{"id": cancelled})
	if code, msg := framingErr(r.reply(cancelled)); code != -32800 {
		t.Fatalf("cancelled call: code %d %q, want -32800", code, msg)
	}
	before := len(r.all())
	for _, id := range []any{finished, cancelled, 987654, "never-sent"} {
		r.notify("$/cancelRequest", map[string]any{"id": id})
	}
	list := r.request("tools/list", map[string]any{})
	framingResult(t, r.reply(list))
	for _, f := range r.all()[before:] {
		for _, m := range f.members() {
			if framingIsReply(m) && !framingIDIs(list)(m) {
				t.Errorf("a cancel of a finished or unknown id drew a reply: %v", m)
			}
		}
	}
	if _, done := r.wait(200*time.Millisecond, framingIDIs("blk-a")); done {
		t.Fatal("cancelling an unknown id ended another call")
	}
	r.notify("$/cancelRequest", map[string]any{"id": "blk-a"})
	if code, msg := framingErr(r.reply("blk-a")); code != -32800 {
		t.Errorf("blk-a: code %d %q, want -32800", code, msg)
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

// --- method shapes -----------------------------------------------------------

// The initialize result names the server and the active tools, the same
// set tools/list gives with read first (the rest of the result is
// TestDocsInitializeResult's); a tool result's content is text parts (an
// image part is cmd/agentls/testdata/script/read/png_is_image_part.txtar's,
// the callId echo TestBatchResultsInCallOrder's).
func TestProtocolResultShapes(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	res := r.initialize(map[string]any{"rootUri": fileURI(ws), "clientInfo": map[string]any{"name": "a8p", "version": "1"}})
	if si, _ := res["serverInfo"].(map[string]any); si["name"] != "agentls" || si["version"] == "" || si["version"] == nil {
		t.Errorf("serverInfo %v, want agentls and a version", si)
	}
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	var names, listed []string
	for _, x := range ag["tools"].([]any) {
		names = append(names, x.(string))
	}
	for _, x := range framingResult(t, r.call("tools/list", nil))["tools"].([]any) {
		listed = append(listed, fmt.Sprint(x.(map[string]any)["name"]))
	}
	if len(listed) == 0 || listed[0] != "read" {
		t.Errorf("tools/list = %v, want read first", listed)
	}
	sort.Strings(listed)
	sort.Strings(names)
	if !slices.Equal(listed, names) {
		t.Errorf("initialize tools %v differ from tools/list %v", names, listed)
	}
	rd := framingResult(t, r.call("tools/call", framingTool("read", map[string]any{"path": "a.txt"})))
	if rd["isError"] != false || compactJSON(rd["content"]) != `[{"text":"a.txt, lines 1-1 of 1\n     1→alpha","type":"text"}]` {
		t.Errorf("read result %v", rd)
	}
}
