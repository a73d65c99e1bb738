package e2e

// The wire protocol (docs/protocol.md) through raw bytes: framing, JSON-RPC
// error codes, the lifecycle's states, cancellation and the shapes of the
// initialize result and a tool result. framingRaw has its own Content-Length
// reader and writer, so nothing in a client library can paper over what the
// server does.

import (
	"bufio"
	"bytes"
	"encoding/base64"
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

	"github.com/agentls/agentls/test/harness"
)

// framingWait is how long any single expected frame may take on a loaded machine.
const framingWait = 10 * time.Second

// framingFrame is one decoded frame from stdout: a message, or a batch reply.
type framingFrame struct {
	M     map[string]any // the message (nil for a batch)
	Batch []any          // the members of a batch reply
	At    time.Time
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
	r := &framingRaw{}
	r.nextID.Store(1000)
	r.rawClient = startRaw(t, []string{"--root", ws}, env, r.read)
	t.Cleanup(func() {
		r.close()
		if b := r.badFrames(); len(b) > 0 {
			t.Errorf("stdout carried bytes that are not frames: %q", b)
		}
	})
	return r
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
		f := framingFrame{At: time.Now()}
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

// --- framing -----------------------------------------------------------------

func TestProtocolFramingVariants(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	r.initialize(nil)

	listBody := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, id)
	}
	isList := func(t *testing.T, m map[string]any) {
		t.Helper()
		res := framingResult(t, m)
		if tools, _ := res["tools"].([]any); len(tools) == 0 {
			t.Fatalf("tools/list gave no tools: %v", res)
		}
	}

	t.Run("lowercase header name", func(t *testing.T) {
		b := listBody(1)
		r.writeBytes([]byte(fmt.Sprintf("content-length: %d\r\n\r\n%s", len(b), b)))
		isList(t, r.reply(1))
	})
	t.Run("mixed case header and no space", func(t *testing.T) {
		b := listBody(2)
		r.writeBytes([]byte(fmt.Sprintf("CONTENT-LENGTH:%d\r\n\r\n%s", len(b), b)))
		isList(t, r.reply(2))
	})
	t.Run("Content-Type header before and after", func(t *testing.T) {
		b := listBody(3)
		r.writeBytes([]byte(fmt.Sprintf("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\nX-Extra: 1\r\n\r\n%s", len(b), b)))
		isList(t, r.reply(3))
	})
	t.Run("byte by byte", func(t *testing.T) {
		for _, c := range framingFrameOf(listBody(4)) {
			r.writeBytes([]byte{c})
		}
		isList(t, r.reply(4))
	})
	t.Run("two frames in one write", func(t *testing.T) {
		r.writeBytes(append(framingFrameOf(listBody(5)), framingFrameOf(listBody(6))...))
		isList(t, r.reply(5))
		isList(t, r.reply(6))
	})
	t.Run("frame and a half, then the rest", func(t *testing.T) {
		all := append(framingFrameOf(listBody(7)), framingFrameOf(listBody(8))...)
		cut := len(framingFrameOf(listBody(7))) + 10
		r.writeBytes(all[:cut])
		isList(t, r.reply(7))
		r.writeBytes(all[cut:])
		isList(t, r.reply(8))
	})
	t.Run("huge frame of several MB", func(t *testing.T) {
		pad := strings.Repeat("x", 6<<20)
		b := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"},"callId":"proto-huge","padding":%q}}`, pad)
		r.writeBytes(framingFrameOf(b))
		m := r.reply(9)
		res := framingResult(t, m)
		if !strings.Contains(framingText(res), "alpha") || res["callId"] != "proto-huge" {
			t.Fatalf("huge frame: wrong result %.300v", res)
		}
	})
	t.Run("invalid UTF-8 in a string", func(t *testing.T) {
		b := "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"a\xff.txt\"}}}"
		r.writeBytes(framingFrameOf(b))
		m := r.reply(10)
		if m["result"] == nil {
			code, msg := framingErr(m)
			t.Fatalf("a tool call with invalid UTF-8 in a path must be a tool result, got error %d %q", code, msg)
		}
		r.alive("invalid UTF-8")
	})
	t.Run("JSON-RPC batch of valid requests", func(t *testing.T) {
		// JSON-RPC 2.0 §6: each request of a batch is answered.
		r.writeBytes(framingFrameOf(`[{"jsonrpc":"2.0","id":501,"method":"tools/list"},{"jsonrpc":"2.0","id":502,"method":"tools/list"}]`))
		for _, id := range []int{501, 502} {
			if _, ok := r.wait(framingWait, framingIDIs(id)); !ok {
				t.Errorf("batch member %d not answered; frames:\n%s", id, r.dump())
			}
		}
		r.alive("a batch")
	})
	t.Run("LF-only header lines", func(t *testing.T) {
		// docs/protocol.md says "LSP framing", whose header lines end in
		// \r\n. A client that sends bare \n must not wedge the server for
		// good: the frame is served or rejected, and the next proper frame
		// is answered.
		b := listBody(11)
		r.writeBytes([]byte(fmt.Sprintf("Content-Length: %d\n\n%s", len(b), b)))
		r.alive("a frame with \\n header endings")
	})
}

// Broken frames: the error reply (when the contract gives one), a live
// connection afterwards, and no panic: the process still ends cleanly at EOF.
// Broken frames: the error reply (when the contract gives one) and a live
// connection afterwards.
func TestProtocolFramingErrors(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	cases := []struct {
		name string
		raw  string
		// wantCode is the error expected with id null (0: none required).
		wantCode int
		wantID   any // id expected on the error (nil: null)
		count    int // how many error replies (default 1)
	}{
		{name: "missing Content-Length", raw: "Content-Type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", wantCode: -32700},
		{name: "non-numeric Content-Length", raw: "Content-Length: abc\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", wantCode: -32700},
		{name: "negative Content-Length", raw: "Content-Length: -5\r\n\r\n{}", wantCode: -32700},
		{name: "invalid JSON body", raw: string(framingFrameOf(`{"jsonrpc":"2.0","id":1,"method":`)), wantCode: -32700},
		{name: "body is a number", raw: string(framingFrameOf(`42`)), wantCode: -32600},
		{name: "body is a string", raw: string(framingFrameOf(`"hello"`)), wantCode: -32600},
		{name: "body is null", raw: string(framingFrameOf(`null`)), wantCode: -32600},
		{name: "method not a string, id echoed", raw: string(framingFrameOf(`{"jsonrpc":"2.0","id":77,"method":5}`)), wantCode: -32600, wantID: float64(77)},
		{name: "jsonrpc 1.0, string id echoed", raw: string(framingFrameOf(`{"jsonrpc":"1.0","id":"s-78","method":"tools/list"}`)), wantCode: -32600, wantID: "s-78"},
		{name: "no jsonrpc member, id echoed", raw: string(framingFrameOf(`{"id":79,"method":"tools/list"}`)), wantCode: -32600, wantID: float64(79)},
		{name: "batch of non-messages", raw: string(framingFrameOf(`[1, 2]`)), wantCode: -32600, count: 2},
		{name: "empty batch", raw: string(framingFrameOf(`[]`)), wantCode: -32600},
		{name: "JSON that is not JSON-RPC", raw: string(framingFrameOf(`{"foo":1}`)), wantCode: -32600},
		{name: "unknown method, string id echoed", raw: string(framingFrameOf(`{"jsonrpc":"2.0","id":"u1","method":"tools/frobnicate","params":{}}`)), wantCode: -32601, wantID: "u1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := framingStart(t, ws)
			r.initialize(nil)
			before := len(r.all())
			r.writeBytes([]byte(tc.raw))
			// A valid request right after: it must be answered.
			r.alive(tc.name)
			want := tc.count
			if want == 0 {
				want = 1
			}
			var got []map[string]any
			for _, f := range r.all()[before:] {
				for _, m := range f.members() {
					if m["error"] != nil {
						got = append(got, m)
					}
				}
			}
			if len(got) != want {
				t.Fatalf("want %d error replies, got %d:\n%s", want, len(got), r.dump())
			}
			for _, m := range got {
				code, msg := framingErr(m)
				if code != tc.wantCode {
					t.Errorf("error code %d (%q), want %d", code, msg, tc.wantCode)
				}
				if id, has := m["id"]; !has || framingNorm(id) != framingNorm(tc.wantID) {
					t.Errorf("error id %#v (present=%v), want %#v", m["id"], has, tc.wantID)
				}
			}
			r.stdin.Close()
			if code := r.exitCode(3 * time.Second); code == 2 || code == -1 || strings.Contains(r.stderr.String(), "panic:") {
				t.Errorf("exit code %d at EOF (2: a Go panic, -1: still running); stderr:\n%s", code, r.stderr.String())
			}
		})
	}
	// Stdin ending right behind a broken frame, while the reader looks for
	// the next header, is an EOF like any other.
	for _, raw := range []string{
		"Content-Length: 9\r\n\r\n{\"jsonrp\"",
		"Content-Type: x\r\n\r\n{}",
		"Content-Length: -5\r\n\r\n",
		"Content-Length: banana\r\n\r\n{}",
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

// --- lifecycle ---------------------------------------------------------------

func TestProtocolLifecycleBeforeInitialize(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	// Notifications before initialize: no reply, no harm.
	r.notify("initialized", map[string]any{})
	r.notify("$/setTrace", map[string]any{"value": "off"})
	r.notify("$/cancelRequest", map[string]any{"id": 12345})
	r.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{}}})
	for _, method := range []string{"tools/list", "tools/call", "tools/callBatch", "shutdown", "no/such/method"} {
		var params any = map[string]any{}
		if method == "tools/call" {
			params = map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}
		}
		m := r.call(method, params)
		if code, msg := framingErr(m); code != -32002 {
			t.Errorf("%s before initialize: code %d %q, want -32002", method, code, msg)
		}
	}
	res := r.initialize(nil)
	if res["serverInfo"] == nil {
		t.Fatalf("initialize after early requests: %v", res)
	}
	for _, f := range r.all() {
		if f.M != nil && framingIsReply(f.M) && f.M["id"] == nil {
			t.Errorf("a notification before initialize was answered: %v", f.M)
		}
	}
	r.alive("early requests")
}

func TestProtocolLifecycleSecondInitialize(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	m := r.call("initialize", map[string]any{"rootUri": fileURI(t.TempDir()), "capabilities": map[string]any{}})
	if code, msg := framingErr(m); code != -32600 {
		t.Errorf("second initialize: code %d %q, want -32600", code, msg)
	}
	if res := framingResult(t, r.call("tools/call", framingTool("read", map[string]any{"path": "a.txt"}))); res["isError"] != false {
		t.Errorf("the first session was replaced: %s", framingText(res))
	}
}

func TestProtocolLifecycleShutdownThenRequests(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	m := r.call("shutdown", nil)
	if _, has := m["result"]; !has || m["result"] != nil || m["error"] != nil {
		t.Fatalf("shutdown: want result null, got %v", m)
	}
	for _, method := range []string{"tools/list", "tools/call", "tools/callBatch", "shutdown", "initialize", "no/such/method"} {
		var params any = map[string]any{}
		if method == "tools/call" {
			params = map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}
		}
		m := r.call(method, params)
		if code, msg := framingErr(m); code != -32600 {
			t.Errorf("%s after shutdown: code %d %q, want -32600", method, code, msg)
		}
	}
	r.notify("exit", nil)
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Errorf("exit after shutdown: code %d, want 0", code)
	}
}

func TestProtocolLifecycleExitWithoutShutdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		init bool
	}{{"after initialize", true}, {"before initialize", false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := framingStart(t, framingWS(t, nil))
			if tc.init {
				r.initialize(nil)
			}
			r.notify("exit", nil)
			if code := r.exitCode(5 * time.Second); code != 1 {
				t.Errorf("exit without shutdown: code %d, want 1", code)
			}
		})
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

func TestProtocolLifecycleUnknownMethodsAndNotifications(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, nil))
	r.initialize(nil)
	before := len(r.all())
	r.notify("no/such/notification", map[string]any{"x": 1})
	r.notify("$/setTrace", map[string]any{"value": "off"})
	r.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": "file:///nope"}})
	for _, method := range []string{"no/such/method", "tools/nope", "textDocument/hover", "$/unknownRequest"} {
		m := r.call(method, map[string]any{})
		if code, msg := framingErr(m); code != -32601 {
			t.Errorf("%s: code %d %q, want -32601", method, code, msg)
		}
	}
	r.alive("unknown methods")
	for _, f := range r.all()[before:] {
		if f.M != nil && framingIsReply(f.M) && f.M["id"] == nil {
			t.Errorf("a notification was answered: %v", f.M)
		}
	}
}

// Params of the wrong type: -32602 with a message naming the field.
func TestProtocolLifecycleWrongParamTypes(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	r.initialize(nil)
	cases := []struct {
		name, method string
		params       any
		wants        []string // in the message
	}{
		{"tools/call name is a number", "tools/call", map[string]any{"name": 5, "arguments": map[string]any{}}, []string{"name"}},
		{"tools/call params is a string", "tools/call", "read", nil},
		{"tools/call callId is an object", "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": map[string]any{}}, []string{"callId"}},
		{"tools/callBatch calls is an object", "tools/callBatch", map[string]any{"calls": map[string]any{"name": "read"}}, []string{"calls"}},
		{"tools/callBatch calls is a string", "tools/callBatch", map[string]any{"calls": "read"}, []string{"calls"}},
		{"tools/callBatch calls member is a string", "tools/callBatch", map[string]any{"calls": []any{"read"}}, []string{"calls"}},
		{"tools/list format is a number", "tools/list", map[string]any{"format": 5}, []string{"format"}},
		{"tools/list unknown format", "tools/list", map[string]any{"format": "xml"}, []string{"format", "mcp, openai, anthropic"}},
		{"tools/list format yaml", "tools/list", map[string]any{"format": "yaml"}, []string{"format"}},
		{"tools/list includeDeferred is an object", "tools/list", map[string]any{"includeDeferred": map[string]any{}}, []string{"includeDeferred"}},
		{"tools/list includeDeferred is a string", "tools/list", map[string]any{"includeDeferred": "yes"}, []string{"includeDeferred"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := r.call(tc.method, tc.params)
			code, msg := framingErr(m)
			if code != -32602 {
				t.Fatalf("code %d %q (result %v), want -32602", code, msg, m["result"])
			}
			wantContains(t, "message", msg, tc.wants...)
		})
	}
	r.alive("wrong param types")
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

func TestProtocolCancelManyAtOnce(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	const n = 40
	var ids []int
	for i := 0; i < n; i++ {
		ids = append(ids, r.request("tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{}}))
	}
	readID := r.request("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}})
	if res := framingResult(t, r.reply(readID)); !strings.Contains(framingText(res), "alpha") {
		t.Fatalf("read among blocked calls: %v", res)
	}
	var b bytes.Buffer
	for _, id := range ids {
		b.Write(framingFrameOf(fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`, id)))
	}
	r.writeBytes(b.Bytes()) // all cancels in one write
	for _, id := range ids {
		if code, msg := framingErr(r.reply(id)); code != -32800 {
			t.Errorf("call %d: code %d %q, want -32800", id, code, msg)
		}
	}
	r.alive("40 cancels")
}

// A cancelled batch replies -32800 within 100 ms and the server goes on.
func TestProtocolCancelBatch(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	id := r.request("tools/callBatch", map[string]any{"calls": []any{
		framingTool("read", map[string]any{"path": "a.txt"}),
		map[string]any{"name": "test_block", "arguments": map[string]any{}, "callId": "b-block"},
	}})
	if _, ok := r.wait(framingWait, func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "tools/progress" && p["callId"] == "b-block"
	}); !ok {
		t.Fatal("test_block in the batch never started")
	}
	if _, ok := r.wait(200*time.Millisecond, framingIDIs(id)); ok {
		t.Fatal("batch with test_block replied before cancel")
	}
	start := time.Now()
	r.notify("$/cancelRequest", map[string]any{"id": id})
	m := r.reply(id)
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("cancelled batch replied after %v, want within 100 ms", took)
	}
	if code, msg := framingErr(m); code != -32800 {
		t.Errorf("cancelled read-only batch: code %d %q, want -32800", code, msg)
	}
	if res := framingResult(t, r.call("tools/call", framingTool("read", map[string]any{"path": "a.txt"}))); !strings.Contains(framingText(res), "1→alpha") {
		t.Errorf("server unusable after a cancelled batch: %v", res)
	}
}

// Issue 2: 200 calls pipelined on one connection all get their own correct
// reply, while a slow call among them cancelled by $/cancelRequest replies
// -32800 within 100 ms.
func TestProtocolManyCallsAndACancel(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("f%03d.txt", i)] = fmt.Sprintf("content-%03d\n", i)
	}
	r := framingStart(t, framingWS(t, files))
	r.initialize(nil)
	reads := func(from, to int) []byte {
		var b bytes.Buffer
		for i := from; i < to; i++ {
			b.Write(framingFrameOf(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"f%03d.txt"},"callId":"c%d"}}`, 10000+i, i, i)))
		}
		return b.Bytes()
	}
	r.writeBytes(append(framingFrameOf(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_block","arguments":{},"callId":"blocker"}}`), reads(0, 100)...))
	if _, ok := r.wait(framingWait, func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "tools/progress" && p["callId"] == "blocker"
	}); !ok {
		t.Fatal("test_block never reported it was running")
	}
	start := time.Now()
	r.notify("$/cancelRequest", map[string]any{"id": "slow"})
	m := r.reply("slow")
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("cancelled call replied after %v, want within 100 ms", took)
	}
	if code, msg := framingErr(m); code != -32800 {
		t.Errorf("slow call: code %d %q, want -32800", code, msg)
	}
	r.writeBytes(reads(100, 200))
	for i := range 200 {
		res := framingResult(t, r.reply(10000+i))
		want := fmt.Sprintf("f%03d.txt, lines 1-1 of 1\n     1→content-%03d", i, i)
		if !strings.Contains(framingText(res), want) || res["callId"] != fmt.Sprintf("c%d", i) {
			t.Fatalf("call %d: callId %v, text %q; want %q", i, res["callId"], framingText(res), want)
		}
	}
}

// A cancelled command's process group is gone and it does not go on; then
// the editor quits and the process still exits within 1 s, stdout closed.
func TestProtocolCancelKillsBashProcess(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, nil)
	r := framingStart(t, ws)
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	marker := fmt.Sprintf("3001.%d%d", os.Getpid(), time.Now().UnixNano()%1e6)
	reapProcessesWithArg(t, marker)
	id := r.request("tools/call", framingTool("bash", map[string]any{"command": "sleep " + marker + " & wait; touch bash-after.txt"}))
	if !waitUntil(framingWait, func() bool { return len(processesWithArg(marker)) > 0 }) {
		t.Fatalf("bash child never started: %s", r.dump())
	}
	r.notify("$/cancelRequest", map[string]any{"id": id})
	if code, msg := framingErr(r.reply(id)); code != -32800 {
		t.Errorf("cancelled bash: code %d %q, want -32800", code, msg)
	}
	if !waitUntil(2*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Errorf("the cancelled command's child %v still runs", processesWithArg(marker))
	}
	r.alive("cancelled bash")
	if _, err := os.Stat(filepath.Join(ws, "bash-after.txt")); err == nil {
		t.Errorf("the cancelled command went on")
	}
	pid := r.cmd.Process.Pid
	r.stdin.Close()
	quit := time.Now()
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Since(quit) > 3*time.Second {
			t.Fatalf("agentls still running 3 s after stdin EOF (after a cancelled bash)")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(quit); d > time.Second {
		t.Errorf("agentls exited %v after stdin EOF; contract: within 1 s", d)
	}
	select {
	case <-r.exited:
	case <-time.After(3 * time.Second):
		t.Errorf("agentls exited but its stdout stayed open 3 s: a child holds it")
	}
}

// --- method shapes -----------------------------------------------------------

// The initialize result (docs/protocol.md, initialize): serverInfo, the
// agentls capability (protocolVersion, the active tool names, watcher),
// instructions covering the points docs/tools.md lists, the workspace
// folder capability; then a whole session ends with exit code 0.
func TestProtocolInitializeResultShape(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"src/config.ts": "export const a = 1;\nexport const b = 2;\n"})
	r := framingStart(t, ws)
	res := r.initialize(map[string]any{"rootUri": fileURI(ws), "clientInfo": map[string]any{"name": "a8p", "version": "1"},
		"workspaceFolders": []any{map[string]any{"uri": fileURI(ws), "name": "ws"}}})
	si, _ := res["serverInfo"].(map[string]any)
	if si["name"] != "agentls" {
		t.Errorf("serverInfo.name %v, want agentls", si["name"])
	}
	if v, _ := si["version"].(string); v == "" {
		t.Errorf("serverInfo.version %v, want a non-empty string", si["version"])
	}
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	if ag == nil {
		t.Fatalf("no capabilities.experimental.agentls: %v", res)
	}
	if v, _ := ag["protocolVersion"].(string); v == "" {
		t.Errorf("protocolVersion %#v, want a string", ag["protocolVersion"])
	}
	var names []string
	tools, ok := ag["tools"].([]any)
	if !ok {
		t.Errorf("tools %#v, want an array", ag["tools"])
	}
	for _, x := range tools {
		s, ok := x.(string)
		if !ok {
			t.Errorf("tools member %#v is not a string", x)
		}
		names = append(names, s)
	}
	for _, want := range []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lacks %s", names, want)
		}
	}
	ready, _ := r.wait(framingWait, func(m map[string]any) bool { return m["method"] == harness.WatcherReady })
	checkWatcherStart(t, ag, watcherReadyMode(ready))
	instr, _ := res["instructions"].(string)
	wantContains(t, "instructions", instr, "read", "edit", "cat", "grep", "find", "oldText", "Read a file before editing")
	wantContains(t, "instructions", strings.ToLower(instr), "search", "guess", "unique")
	// docs/protocol.md adds the LSP workspace folder capability.
	wsc, _ := caps["workspace"].(map[string]any)
	wf, _ := wsc["workspaceFolders"].(map[string]any)
	if wf["supported"] != true || wf["changeNotifications"] != true {
		t.Errorf("capabilities.workspace.workspaceFolders %v, want supported+changeNotifications true", wf)
	}
	// The tool names match the active set tools/list gives, read first.
	lres := framingResult(t, r.call("tools/list", nil))
	var listed []string
	for _, x := range lres["tools"].([]any) {
		listed = append(listed, fmt.Sprint(x.(map[string]any)["name"]))
	}
	if len(listed) == 0 || listed[0] != "read" {
		t.Errorf("tools/list = %v, want read first", listed)
	}
	sort.Strings(listed)
	sort.Strings(names)
	if strings.Join(listed, ",") != strings.Join(names, ",") {
		t.Errorf("initialize tools %v differ from tools/list %v", names, listed)
	}
	rd := framingResult(t, r.call("tools/call", framingTool("read", map[string]any{"path": "src/config.ts"})))
	if !strings.HasPrefix(framingText(rd), "src/config.ts, lines 1-2 of 2") || rd["callId"] == "" {
		t.Errorf("read: %v", rd)
	}
	if m := r.call("shutdown", nil); m["error"] != nil {
		t.Errorf("shutdown: %v", m)
	}
	r.notify("exit", nil)
	if code := r.exitCode(5 * time.Second); code != 0 {
		t.Errorf("exit code after shutdown+exit = %d, want 0", code)
	}
}

func TestProtocolToolsCallShape(t *testing.T) {
	t.Parallel()
	png := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 13, 'I', 'D', 'A', 'T', 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0, 5, 0, 1, 0xff, 0x56, 0xc7, 0x2f, 0x0d, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82}
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n", "dot.png": string(png)})
	r := framingStart(t, ws)
	r.initialize(nil)

	t.Run("callId echoed", func(t *testing.T) {
		res := framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "mine-1"}))
		if res["callId"] != "mine-1" || res["isError"] != false {
			t.Errorf("callId %v isError %v", res["callId"], res["isError"])
		}
		parts, _ := res["content"].([]any)
		if len(parts) == 0 {
			t.Fatal("no content")
		}
		for _, p := range parts {
			pm := p.(map[string]any)
			if pm["type"] != "text" {
				t.Errorf("part %v, want type text", pm)
			}
			if _, ok := pm["text"].(string); !ok {
				t.Errorf("text part without a string text: %v", pm)
			}
		}
		d, _ := res["details"].(map[string]any)
		if _, ok := d["durationMs"].(float64); !ok {
			t.Errorf("details.durationMs %#v, want a number", d["durationMs"])
		}
	})
	t.Run("image part", func(t *testing.T) {
		res := framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "dot.png"}}))
		var img map[string]any
		for _, p := range res["content"].([]any) {
			if pm := p.(map[string]any); pm["type"] == "image" {
				img = pm
			}
		}
		if img == nil {
			t.Fatalf("reading a PNG gave no image part: %v", res["content"])
		}
		if img["mimeType"] != "image/png" {
			t.Errorf("mimeType %v, want image/png", img["mimeType"])
		}
		data, _ := img["data"].(string)
		if got, err := base64.StdEncoding.DecodeString(data); err != nil || !bytes.Equal(got, png) {
			t.Errorf("image data does not decode to the file (err %v)", err)
		}
	})
}
