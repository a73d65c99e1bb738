package e2e

// Contract tests of the wire protocol (issue 2, docs/protocol.md,
// docs/protocol.md). Framing cases talk raw bytes to the binary with their
// own Content-Length reader and writer, so nothing in a client library can
// paper over what the server does.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
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

// framingStart spawns agentls rooted at ws with raw pipes.
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

// read parses LSP frames strictly: headers, a blank line, Content-Length bytes.
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
			k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ":")
			if !ok {
				rc.noteBad("not a header: " + line)
				continue
			}
			if strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
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
		if f.M != nil && pred(f.M) {
			hit = f.M
			return true
		}
		for _, m := range f.Batch {
			if mm, ok := m.(map[string]any); ok && pred(mm) {
				hit = mm
				return true
			}
		}
		return false
	})
	return hit, ok
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

// framingAlive checks that the connection still serves a valid request.
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
	ws := t.TempDir()
	for name, body := range files {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func framingURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

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
		b := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"},"callId":"a8p-huge","padding":%q}}`, pad)
		r.writeBytes(framingFrameOf(b))
		m := r.reply(9)
		res := framingResult(t, m)
		if !strings.Contains(framingText(res), "alpha") || res["callId"] != "a8p-huge" {
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
}

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
				ms := []map[string]any{f.M}
				if f.M == nil {
					ms = nil
					for _, x := range f.Batch {
						if mm, ok := x.(map[string]any); ok {
							ms = append(ms, mm)
						}
					}
				}
				for _, m := range ms {
					if m != nil && m["error"] != nil {
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
		})
	}
}

func TestProtocolFramingBatchOfValidRequests(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	r.initialize(nil)
	r.writeBytes(framingFrameOf(`[{"jsonrpc":"2.0","id":501,"method":"tools/list"},{"jsonrpc":"2.0","id":502,"method":"tools/list"}]`))
	// JSON-RPC 2.0 §6: each request of a batch is answered.
	for _, id := range []int{501, 502} {
		if _, ok := r.wait(framingWait, framingIDIs(id)); !ok {
			t.Errorf("batch member %d not answered; frames:\n%s", id, r.dump())
		}
	}
	r.alive("a batch")
}

func TestProtocolFramingTruncatedBodyThenEOF(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := framingWS(t, nil)
	r := framingStart(t, ws)
	r.initialize(nil)
	r.writeBytes([]byte("Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,"))
	start := time.Now()
	r.stdin.Close()
	code := r.exitCode(5 * time.Second)
	if code == -1 {
		t.Fatal("agentls did not exit within 5 s of stdin EOF in the middle of a body")
	}
	// docs/protocol.md: exit without shutdown is code 1; EOF is not an
	// orderly shutdown either, so 0 would hide a lost editor.
	t.Logf("exit code %d after %v", code, time.Since(start))
	if d := time.Since(start); d > time.Second {
		t.Errorf("exit took %v, contract: within 1 s", d)
	}
}

func TestProtocolFramingLFOnlyHeaders(t *testing.T) {
	t.Parallel()
	// docs/protocol.md says "LSP framing", whose header lines end in \r\n. A
	// client that sends bare \n must not wedge the server for good: either
	// the frame is served or it is rejected, and the next proper frame is
	// answered.
	ws := framingWS(t, nil)
	r := framingStart(t, ws)
	r.initialize(nil)
	b := `{"jsonrpc":"2.0","id":601,"method":"tools/list"}`
	r.writeBytes([]byte(fmt.Sprintf("Content-Length: %d\n\n%s", len(b), b)))
	r.alive("a frame with \\n header endings")
	if m, ok := r.wait(time.Second, framingIDIs(601)); ok {
		t.Logf("\\n-framed request served: %v", m["result"] != nil)
	}
}

// --- lifecycle ---------------------------------------------------------------

func TestProtocolLifecycleBeforeInitialize(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	// Notifications before initialize: no reply, no harm.
	r.notify("initialized", map[string]any{})
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
	r := framingStart(t, framingWS(t, nil))
	r.initialize(nil)
	m := r.call("initialize", map[string]any{"capabilities": map[string]any{}})
	if code, msg := framingErr(m); code != -32600 {
		t.Errorf("second initialize: code %d %q, want -32600", code, msg)
	}
	r.alive("second initialize")
}

func TestProtocolLifecycleShutdownThenRequests(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	m := r.call("shutdown", nil)
	if _, has := m["result"]; !has || m["result"] != nil || m["error"] != nil {
		t.Fatalf("shutdown: want result null, got %v", m)
	}
	for _, method := range []string{"tools/list", "tools/call", "shutdown", "initialize", "no/such/method"} {
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

func framingWaitProcs(marker string, want bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if (len(processesWithArg(marker)) > 0) == want {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestProtocolLifecycleStdinEOFKillsRunningWork(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	r := framingStart(t, framingWS(t, nil))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	marker := fmt.Sprintf("3000.%d%d", os.Getpid(), time.Now().UnixNano()%1e6)
	reapProcessesWithArg(t, marker)
	id := r.request("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep " + marker + "; echo done"}, "callId": "a8p-eof"})
	blockID := r.request("tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{}})
	if !framingWaitProcs(marker, true, framingWait) {
		m, _ := r.wait(time.Second, framingIDIs(id))
		t.Fatalf("the bash child never started; reply: %v", m)
	}
	start := time.Now()
	r.stdin.Close()
	code := r.exitCode(5 * time.Second)
	took := time.Since(start)
	if code == -1 {
		t.Fatal("agentls did not exit within 5 s of stdin EOF")
	}
	if took > time.Second {
		t.Errorf("exit took %v after EOF; contract: within 1 s", took)
	}
	if !framingWaitProcs(marker, false, 2*time.Second) {
		t.Errorf("bash child %q still running after agentls exited: pids %v", marker, processesWithArg(marker))
	}
	_ = blockID
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
		field        string
	}{
		{"tools/call name is a number", "tools/call", map[string]any{"name": 5, "arguments": map[string]any{}}, "name"},
		{"tools/call params is a string", "tools/call", "read", ""},
		{"tools/call callId is an object", "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": map[string]any{}}, "callId"},
		{"tools/callBatch calls is an object", "tools/callBatch", map[string]any{"calls": map[string]any{"name": "read"}}, "calls"},
		{"tools/callBatch calls member is a string", "tools/callBatch", map[string]any{"calls": []any{"read"}}, "calls"},
		{"tools/list format is a number", "tools/list", map[string]any{"format": 5}, "format"},
		{"tools/list unknown format", "tools/list", map[string]any{"format": "xml"}, "format"},
		{"tools/list includeDeferred is an object", "tools/list", map[string]any{"includeDeferred": map[string]any{}}, "includeDeferred"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := r.call(tc.method, tc.params)
			code, msg := framingErr(m)
			if code != -32602 {
				t.Fatalf("code %d %q (result %v), want -32602", code, msg, m["result"])
			}
			if tc.field != "" && !strings.Contains(msg, tc.field) {
				t.Errorf("message %q does not name the field %q", msg, tc.field)
			}
		})
	}
	r.alive("wrong param types")
}

func TestProtocolLifecycleInvalidInitializationOptions(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, nil)
	cases := []struct {
		name   string
		params map[string]any
		field  string
	}{
		{"unknown mode", map[string]any{"initializationOptions": map[string]any{"mode": "yolo"}}, "mode"},
		{"mode is a number", map[string]any{"initializationOptions": map[string]any{"mode": 3}}, "mode"},
		{"allow is a string", map[string]any{"initializationOptions": map[string]any{"permissions": map[string]any{"allow": "Bash(ls)"}}}, "allow"},
		{"deny holds a number", map[string]any{"initializationOptions": map[string]any{"permissions": map[string]any{"deny": []any{1}}}}, "deny"},
		{"limit below range", map[string]any{"initializationOptions": map[string]any{"limits": map[string]any{"readLines": 0}}}, "readLines"},
		{"limit above range", map[string]any{"initializationOptions": map[string]any{"limits": map[string]any{"bashTimeout": 86401}}}, "bashTimeout"},
		{"grouped limit below range", map[string]any{"initializationOptions": map[string]any{"limits": map[string]any{"read": map[string]any{"bytes": 10}}}}, "read"},
		{"deferThreshold is a string of letters", map[string]any{"initializationOptions": map[string]any{"deferThreshold": "many"}}, "deferThreshold"},
		{"rootUri is a number", map[string]any{"rootUri": 5}, "rootUri"},
		{"workspaceFolders is a string", map[string]any{"workspaceFolders": "file:///tmp"}, "workspaceFolders"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := framingStart(t, ws)
			tc.params["capabilities"] = map[string]any{}
			m := r.call("initialize", tc.params)
			code, msg := framingErr(m)
			if code != -32602 {
				t.Fatalf("code %d %q, want -32602", code, msg)
			}
			if !strings.Contains(msg, tc.field) {
				t.Errorf("message %q does not name %q", msg, tc.field)
			}
		})
	}
	t.Run("unknown key warns through window/logMessage", func(t *testing.T) {
		r := framingStart(t, ws)
		r.initialize(map[string]any{"initializationOptions": map[string]any{"framingBogusKey": true}})
		m, ok := r.wait(framingWait, func(m map[string]any) bool {
			p, _ := m["params"].(map[string]any)
			s, _ := p["message"].(string)
			return m["method"] == "window/logMessage" && strings.Contains(s, "framingBogusKey")
		})
		if !ok {
			t.Fatalf("no window/logMessage naming the unknown key; frames:\n%s", r.dump())
		}
		p := m["params"].(map[string]any)
		if typ, _ := p["type"].(float64); typ != 2 {
			t.Errorf("logMessage type %v, want 2 (Warning)", p["type"])
		}
	})
	t.Run("Lua empty table [] accepted for objects", func(t *testing.T) {
		r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
		m := r.call("initialize", map[string]any{"capabilities": []any{}, "initializationOptions": []any{}})
		framingResult(t, m)
		r.notify("initialized", []any{})
		framingResult(t, r.call("tools/list", []any{}))
		res := framingResult(t, r.call("tools/call", map[string]any{"name": "ls", "arguments": []any{}}))
		if res["isError"] != false {
			t.Errorf("ls with arguments [] failed: %s", framingText(res))
		}
	})
}

// --- cancellation ------------------------------------------------------------

func TestProtocolCancelRunningCall(t *testing.T) {
	slow(t)
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	var lat []time.Duration
	for i, id := range []any{"a8p-str-1", 0, 7} {
		m := map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "test_block", "arguments": map[string]any{}, "callId": fmt.Sprintf("blk-%d", i)}}
		r.send(m)
		// The call is running when a read sent after it completes (calls run
		// concurrently); then cancel.
		framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}))
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
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("cancel→reply latencies: %v", lat)
	if lat[0] > 100*time.Millisecond {
		t.Errorf("fastest cancel took %v; issue 2: -32800 within 100 ms", lat[0])
	}
}

// JSON-RPC ids are any number or string; the server accepts requests with
// ids beyond int32 and echoes them, so it must be able to cancel them too.
func TestProtocolCancelLargeNumericID(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, nil))
	r.initialize(nil)
	for _, id := range []int64{1<<31 + 5, 1<<40 + 7, -3} {
		t.Run(strconv.FormatInt(id, 10), func(t *testing.T) {
			r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "test_block", "arguments": map[string]any{}}})
			framingResult(t, r.call("tools/list", nil))
			r.notify("$/cancelRequest", map[string]any{"id": id})
			m, ok := r.wait(3*time.Second, framingIDIs(float64(id)))
			if !ok {
				var warn string
				for _, f := range r.all() {
					if f.M != nil && f.M["method"] == "window/logMessage" {
						warn = fmt.Sprint(f.M["params"])
					}
				}
				t.Fatalf("request id %d accepted but $/cancelRequest{id:%d} got no -32800 reply; last log: %s", id, id, warn)
			}
			if code, msg := framingErr(m); code != -32800 {
				t.Errorf("code %d %q, want -32800", code, msg)
			}
		})
	}
}

func TestProtocolCancelHarmless(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	// A finished call.
	id := r.request("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}})
	framingResult(t, r.reply(id))
	before := len(r.all())
	r.notify("$/cancelRequest", map[string]any{"id": id})
	r.notify("$/cancelRequest", map[string]any{"id": 987654})
	r.notify("$/cancelRequest", map[string]any{"id": "never-sent"})
	r.notify("$/cancelRequest", map[string]any{})
	r.notify("$/cancelRequest", map[string]any{"id": map[string]any{"x": 1}})
	r.notify("$/cancelRequest", nil)
	r.alive("cancelling unknown and finished ids")
	for _, f := range r.all()[before:] {
		if f.M != nil && framingIsReply(f.M) && (f.M["id"] == nil || framingNorm(f.M["id"]) == framingNorm(id)) {
			t.Errorf("cancel produced a reply: %v", f.M)
		}
	}
	// docs/protocol.md: a $/cancelRequest without a usable id is dropped with a warning.
	if _, ok := r.wait(framingWait, func(m map[string]any) bool { return m["method"] == "window/logMessage" }); !ok {
		t.Errorf("no window/logMessage warning for a $/cancelRequest without a usable id")
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

func TestProtocolCancelBatch(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "alpha\n"}))
	r.initialize(nil)
	id := r.request("tools/callBatch", map[string]any{"calls": []any{
		map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}},
		map[string]any{"name": "test_block", "arguments": map[string]any{}},
	}})
	framingResult(t, r.call("tools/list", nil))
	if _, ok := r.wait(200*time.Millisecond, framingIDIs(id)); ok {
		t.Fatal("batch with test_block replied before cancel")
	}
	r.notify("$/cancelRequest", map[string]any{"id": id})
	if code, msg := framingErr(r.reply(id)); code != -32800 {
		t.Errorf("cancelled read-only batch: code %d %q, want -32800", code, msg)
	}
}

func TestProtocolTwoHundredCalls(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, nil)
	for i := 0; i < 20; i++ {
		os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("content-%02d\n", i)), 0o644)
	}
	r := framingStart(t, ws)
	r.initialize(nil)
	var b bytes.Buffer
	for i := 0; i < 200; i++ {
		b.Write(framingFrameOf(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"f%02d.txt"},"callId":"c%d"}}`, 10000+i, i%20, i)))
	}
	r.writeBytes(b.Bytes())
	for i := 0; i < 200; i++ {
		res := framingResult(t, r.reply(10000+i))
		if want := fmt.Sprintf("content-%02d", i%20); !strings.Contains(framingText(res), want) || res["callId"] != fmt.Sprintf("c%d", i) {
			t.Fatalf("call %d: callId %v, text %q; want %s", i, res["callId"], framingText(res), want)
		}
	}
}

func TestProtocolProgressShape(t *testing.T) {
	slow(t)
	t.Parallel()
	r := framingStart(t, framingWS(t, nil))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	start := time.Now()
	id := r.request("tools/call", map[string]any{"name": "bash", "callId": "a8p-prog",
		"arguments": map[string]any{"command": "for i in $(seq 1 40); do echo a8pline$i; sleep 0.02; done"}})
	res := framingResult(t, r.reply(id))
	elapsed := time.Since(start)
	if res["isError"] != false || !strings.Contains(framingText(res), "a8pline40") {
		t.Fatalf("bash: %v", res)
	}
	var notes []map[string]any
	for _, f := range r.all() {
		if f.M != nil && f.M["method"] == "tools/progress" {
			p, _ := f.M["params"].(map[string]any)
			if p["callId"] == "a8p-prog" {
				notes = append(notes, p)
			}
		}
	}
	if len(notes) == 0 {
		t.Fatal("no tools/progress for a bash command printing for ~0.8 s")
	}
	for _, p := range notes {
		if p["tool"] != "bash" {
			t.Errorf("progress tool %v, want bash", p["tool"])
		}
		for k, v := range p {
			switch k {
			case "callId", "tool", "message", "output":
				if _, ok := v.(string); !ok {
					t.Errorf("progress %s is %T, want string", k, v)
				}
			case "percentage":
				if _, ok := v.(float64); !ok {
					t.Errorf("progress percentage is %T, want number", v)
				}
			}
		}
		if _, ok := p["output"]; !ok {
			if _, ok := p["message"]; !ok {
				t.Errorf("progress carries neither output nor message: %v", p)
			}
		}
	}
	// Throttle: at least 50 ms apart, so at most elapsed/50ms + 1 notes.
	if max := int(elapsed/(50*time.Millisecond)) + 1; len(notes) > max {
		t.Errorf("%d progress notes in %v: more than one per 50 ms (max %d)", len(notes), elapsed, max)
	}
	if !strings.Contains(fmt.Sprint(notes[len(notes)-1]["output"]), "a8pline") {
		t.Errorf("progress output does not carry the command's output: %v", notes[len(notes)-1])
	}
}

// --- method shapes -----------------------------------------------------------

func TestProtocolInitializeResultShape(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, nil)
	r := framingStart(t, ws)
	res := r.initialize(map[string]any{"clientInfo": map[string]any{"name": "a8p", "version": "1"},
		"workspaceFolders": []any{map[string]any{"uri": framingURI(ws), "name": "ws"}}})
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
	for _, want := range []string{"read", "ls", "grep", "find", "edit", "write", "bash"} {
		if !framingHas(names, want) {
			t.Errorf("tools %v lacks %s", names, want)
		}
	}
	ready, _ := r.wait(framingWait, func(m map[string]any) bool { return m["method"] == harness.WatcherReady })
	checkWatcherStart(t, ag, watcherReadyMode(ready))
	instr, _ := res["instructions"].(string)
	for _, want := range []string{"read", "oldText"} {
		if !strings.Contains(instr, want) {
			t.Errorf("instructions lack %q: %q", want, instr)
		}
	}
	// docs/protocol.md adds the LSP workspace folder capability.
	wsc, _ := caps["workspace"].(map[string]any)
	wf, _ := wsc["workspaceFolders"].(map[string]any)
	if wf["supported"] != true || wf["changeNotifications"] != true {
		t.Errorf("capabilities.workspace.workspaceFolders %v, want supported+changeNotifications true", wf)
	}
	// The tool names match the active set tools/list gives.
	lres := framingResult(t, r.call("tools/list", nil))
	var listed []string
	for _, x := range lres["tools"].([]any) {
		listed = append(listed, fmt.Sprint(x.(map[string]any)["name"]))
	}
	sort.Strings(listed)
	sort.Strings(names)
	if strings.Join(listed, ",") != strings.Join(names, ",") {
		t.Errorf("initialize tools %v differ from tools/list %v", names, listed)
	}
}

func framingHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestProtocolToolsListShapes(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, nil))
	r.initialize(nil)
	list := func(params any) []map[string]any {
		t.Helper()
		res := framingResult(t, r.call("tools/list", params))
		arr, ok := res["tools"].([]any)
		if !ok || len(arr) == 0 {
			t.Fatalf("tools/list %v: tools %#v", params, res["tools"])
		}
		var out []map[string]any
		for _, x := range arr {
			out = append(out, x.(map[string]any))
		}
		return out
	}
	str := func(where string, v any) {
		if s, ok := v.(string); !ok || s == "" {
			t.Errorf("%s: %#v, want a non-empty string", where, v)
		}
	}
	schema := func(where string, v any) {
		m, ok := v.(map[string]any)
		if !ok || m["type"] != "object" {
			t.Errorf("%s: %#v, want an object schema", where, v)
		}
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte(`"$ref"`)) || bytes.Contains(b, []byte(`"null"`)) {
			t.Errorf("%s contains $ref or null: %s", where, b)
		}
	}
	def := list(nil)
	mcp := list(map[string]any{"format": "mcp"})
	if len(def) != len(mcp) {
		t.Errorf("default format gives %d tools, mcp %d", len(def), len(mcp))
	}
	for _, tl := range def {
		n := fmt.Sprint(tl["name"])
		str(n+".name", tl["name"])
		str(n+".description", tl["description"])
		schema(n+".inputSchema", tl["inputSchema"])
		ann, _ := tl["annotations"].(map[string]any)
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[k].(bool); !ok {
				t.Errorf("%s.annotations.%s %#v, want bool", n, k, ann[k])
			}
		}
		meta, _ := tl["_meta"].(map[string]any)
		for _, k := range []string{"concurrencySafe", "deferred"} {
			if _, ok := meta[k].(bool); !ok {
				t.Errorf("%s._meta.%s %#v, want bool", n, k, meta[k])
			}
		}
		if _, ok := meta["source"].(string); !ok {
			t.Errorf("%s._meta.source %#v, want a string (docs/protocol.md)", n, meta["source"])
		}
		if n == "read" && (ann["readOnlyHint"] != true || ann["destructiveHint"] != false) {
			t.Errorf("read annotations %v: want readOnly true, destructive false", ann)
		}
	}
	for _, tl := range list(map[string]any{"format": "openai"}) {
		fn, _ := tl["function"].(map[string]any)
		if tl["type"] != "function" || fn == nil || len(tl) != 2 {
			t.Errorf("openai entry %v: want exactly {type:function, function}", tl)
			continue
		}
		n := fmt.Sprint(fn["name"])
		str("openai "+n+".name", fn["name"])
		str("openai "+n+".description", fn["description"])
		schema("openai "+n+".parameters", fn["parameters"])
	}
	for _, tl := range list(map[string]any{"format": "anthropic"}) {
		n := fmt.Sprint(tl["name"])
		str("anthropic "+n+".name", tl["name"])
		str("anthropic "+n+".description", tl["description"])
		schema("anthropic "+n+".input_schema", tl["input_schema"])
		for k := range tl {
			if k != "name" && k != "description" && k != "input_schema" {
				t.Errorf("anthropic %s has extra key %q (the API rejects unknown keys)", n, k)
			}
		}
	}
	all := list(map[string]any{"includeDeferred": true})
	if len(all) < len(def) {
		t.Errorf("includeDeferred gives %d tools, fewer than the active %d", len(all), len(def))
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
	t.Run("callId generated as call-N", func(t *testing.T) {
		seen := map[string]bool{}
		for i := 0; i < 3; i++ {
			res := framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}))
			id, _ := res["callId"].(string)
			if !strings.HasPrefix(id, "call-") || seen[id] {
				t.Errorf("generated callId %q: want unique call-N", id)
			}
			if _, err := strconv.Atoi(strings.TrimPrefix(id, "call-")); err != nil {
				t.Errorf("generated callId %q: N is not a number", id)
			}
			seen[id] = true
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
	t.Run("tool failures are results", func(t *testing.T) {
		for _, args := range []map[string]any{
			{"name": "no_such_tool", "arguments": map[string]any{}},
			{"name": "read", "arguments": map[string]any{}},
			{"name": "read", "arguments": map[string]any{"path": "missing.txt"}},
			{"name": "read", "arguments": map[string]any{"path": "a.txt", "offset": -3}},
			{"name": "test_panic", "arguments": map[string]any{}},
		} {
			m := r.call("tools/call", args)
			res := framingResult(t, m)
			if res["isError"] != true || framingText(res) == "" {
				t.Errorf("%v: want isError with a message, got %v", args, res)
			}
		}
		r.alive("tool failures")
	})
	t.Run("unknown tool names the closest", func(t *testing.T) {
		res := framingResult(t, r.call("tools/call", map[string]any{"name": "raed", "arguments": map[string]any{"path": "a.txt"}}))
		if txt := framingText(res); res["isError"] != true || !strings.Contains(txt, "read") || !strings.Contains(txt, "grep") {
			t.Errorf("unknown tool text %q: want the available tools and the closest name", txt)
		}
	})
}

func TestProtocolCallBatchShape(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	r := framingStart(t, ws)
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	res := framingResult(t, r.call("tools/callBatch", map[string]any{"calls": []any{
		map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "b1"},
		map[string]any{"name": "nope", "arguments": map[string]any{}, "callId": "b2"},
		map[string]any{"name": "read", "arguments": map[string]any{"path": "b.txt"}},
		map[string]any{"name": "write", "arguments": map[string]any{"path": "c.txt", "content": "gamma\n"}, "callId": "b4"},
		map[string]any{"name": "read", "arguments": map[string]any{"path": "c.txt"}, "callId": "b5"},
	}}))
	results, _ := res["results"].([]any)
	if len(results) != 5 {
		t.Fatalf("results %v: want 5", res)
	}
	want := []struct {
		id    string
		isErr bool
		text  string
	}{{"b1", false, "alpha"}, {"b2", true, "nope"}, {"", false, "beta"}, {"b4", false, ""}, {"b5", false, "gamma"}}
	for i, w := range want {
		rm := results[i].(map[string]any)
		id, _ := rm["callId"].(string)
		if (w.id != "" && id != w.id) || id == "" {
			t.Errorf("result %d callId %q, want %q", i, id, w.id)
		}
		if rm["isError"] != w.isErr || !strings.Contains(framingText(rm), w.text) {
			t.Errorf("result %d: isError %v text %q", i, rm["isError"], framingText(rm))
		}
		if _, ok := rm["content"].([]any); !ok {
			t.Errorf("result %d has no content array", i)
		}
	}
	empty := framingResult(t, r.call("tools/callBatch", map[string]any{"calls": []any{}}))
	if arr, ok := empty["results"].([]any); !ok || len(arr) != 0 {
		t.Errorf("empty batch: results %#v, want []", empty["results"])
	}
}

func TestProtocolDetailsNotification(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"old.txt": "one\ntwo\n"})
	r := framingStart(t, ws)
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	check := func(callID, kind string, args map[string]any, uriPath string) {
		t.Helper()
		id := r.request("tools/call", map[string]any{"name": args["_tool"], "arguments": args["args"], "callId": callID})
		rep := r.reply(id)
		res := framingResult(t, rep)
		if res["isError"] != false {
			t.Fatalf("%s: %s", callID, framingText(res))
		}
		var note map[string]any
		var noteAt, repAt int
		for i, f := range r.all() {
			if f.M == nil {
				continue
			}
			if p, _ := f.M["params"].(map[string]any); f.M["method"] == "tools/details" && p["callId"] == callID {
				note, noteAt = p, i
			}
			if framingIDIs(id)(f.M) {
				repAt = i
			}
		}
		if note == nil {
			t.Fatalf("%s: no tools/details", callID)
		}
		if noteAt > repAt {
			t.Errorf("%s: tools/details came after the reply", callID)
		}
		if note["tool"] != args["_tool"] {
			t.Errorf("%s: tool %v", callID, note["tool"])
		}
		d, _ := note["details"].(map[string]any)
		if d["kind"] != kind {
			t.Errorf("%s: kind %v, want %s", callID, d["kind"], kind)
		}
		if d["uri"] != framingURI(uriPath) {
			t.Errorf("%s: uri %v, want %s", callID, d["uri"], framingURI(uriPath))
		}
		for _, k := range []string{"unifiedDiff", "oldHash", "newHash"} {
			if _, ok := d[k].(string); !ok {
				t.Errorf("%s: details.%s %#v, want string", callID, k, d[k])
			}
		}
		if _, ok := d["firstChangedLine"].(float64); !ok {
			t.Errorf("%s: firstChangedLine %#v, want number", callID, d["firstChangedLine"])
		}
		if _, ok := d["matchLevel"]; !ok {
			t.Errorf("%s: no matchLevel", callID)
		}
		edits, ok := d["edits"].([]any)
		if !ok || len(edits) == 0 {
			t.Fatalf("%s: edits %#v, want LSP TextEdit[]", callID, d["edits"])
		}
		e := edits[0].(map[string]any)
		rg, _ := e["range"].(map[string]any)
		st, _ := rg["start"].(map[string]any)
		if _, ok := e["newText"].(string); !ok || st == nil {
			t.Errorf("%s: edit %v is not an LSP TextEdit", callID, e)
		} else if _, ok := st["line"].(float64); !ok {
			t.Errorf("%s: edit range start %v lacks line", callID, st)
		}
	}
	check("a8p-create", "create", map[string]any{"_tool": "write", "args": map[string]any{"path": "new.txt", "content": "hello\n"}}, filepath.Join(ws, "new.txt"))
	framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "old.txt"}}))
	check("a8p-edit", "edit", map[string]any{"_tool": "edit", "args": map[string]any{"path": "old.txt", "edits": []any{map[string]any{"oldText": "two", "newText": "TWO"}}}}, filepath.Join(ws, "old.txt"))
	check("a8p-write", "write", map[string]any{"_tool": "write", "args": map[string]any{"path": "old.txt", "content": "three\n"}}, filepath.Join(ws, "old.txt"))
}

func TestProtocolConfirmRequest(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	var mu sync.Mutex
	var asked []map[string]any
	r.setAnswer(func(m map[string]any) (any, bool) {
		if m["method"] != "tools/confirm" {
			return nil, false
		}
		p, _ := m["params"].(map[string]any)
		mu.Lock()
		asked = append(asked, m)
		mu.Unlock()
		if p["callId"] == "a8p-hold" {
			return nil, false // never answered: the call is cancelled
		}
		return map[string]any{"decision": "rejectOnce", "message": "not today"}, true
	})
	r.initialize(map[string]any{"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}}})

	cmd := "rm -f a.txt"
	res := framingResult(t, r.call("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd}, "callId": "a8p-rej"}))
	if res["isError"] != true || !strings.Contains(framingText(res), "denied by the user: not today") {
		t.Errorf("rejected call: isError %v text %q; want \"denied by the user: not today\"", res["isError"], framingText(res))
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil {
		t.Errorf("a rejected rm ran anyway: %v", err)
	}
	mu.Lock()
	if len(asked) != 1 {
		mu.Unlock()
		t.Fatalf("want 1 tools/confirm, got %d", len(asked))
	}
	p := asked[0]["params"].(map[string]any)
	mu.Unlock()
	if p["callId"] != "a8p-rej" || p["tool"] != "bash" {
		t.Errorf("confirm callId %v tool %v", p["callId"], p["tool"])
	}
	if a, _ := p["arguments"].(map[string]any); a["command"] != cmd {
		t.Errorf("confirm arguments %v, want the call's", p["arguments"])
	}
	if s, _ := p["reason"].(string); s == "" {
		t.Errorf("confirm reason %#v, want a sentence", p["reason"])
	}
	if pv, ok := p["preview"].(map[string]any); ok && pv["kind"] != "command" {
		t.Errorf("bash preview kind %v, want command", pv["kind"])
	}

	// Cancelled with the call: the pending tools/confirm gets $/cancelRequest.
	id := r.request("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "rm -f a.txt"}, "callId": "a8p-hold"})
	cm, ok := r.wait(framingWait, func(m map[string]any) bool {
		pp, _ := m["params"].(map[string]any)
		return m["method"] == "tools/confirm" && pp["callId"] == "a8p-hold"
	})
	if !ok {
		t.Fatal("no tools/confirm for the second call")
	}
	r.notify("$/cancelRequest", map[string]any{"id": id})
	if code, msg := framingErr(r.reply(id)); code != -32800 {
		t.Errorf("cancelled ask: code %d %q, want -32800", code, msg)
	}
	if _, ok := r.wait(framingWait, func(m map[string]any) bool {
		pp, _ := m["params"].(map[string]any)
		return m["method"] == "$/cancelRequest" && pp != nil && framingNorm(pp["id"]) == framingNorm(cm["id"])
	}); !ok {
		t.Errorf("the pending tools/confirm (id %v) was not cancelled with its call", cm["id"])
	}
}

func TestProtocolExternalChangeAndFolders(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	other := framingWS(t, map[string]string{"o.txt": "omega\n"})
	r := framingStart(t, ws)
	r.initialize(map[string]any{"workspaceFolders": []any{map[string]any{"uri": framingURI(ws), "name": "ws"}}})
	ready, _ := r.wait(framingWait, func(m map[string]any) bool { return m["method"] == harness.WatcherReady })
	watcher := watcherReadyMode(ready)

	t.Run("externalChange", func(t *testing.T) {
		if watcher == "degraded" {
			t.Skip("watcher degraded on this machine")
		}
		framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}}))
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed outside\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		m, ok := r.wait(framingWait, func(m map[string]any) bool {
			p, _ := m["params"].(map[string]any)
			return m["method"] == "workspace/externalChange" && p["uri"] == framingURI(filepath.Join(ws, "a.txt"))
		})
		if !ok {
			t.Fatalf("no workspace/externalChange for a.txt; frames:\n%s", r.dump())
		}
		p := m["params"].(map[string]any)
		if p["kind"] != "changed" || p["readStale"] != true {
			t.Errorf("externalChange %v: want kind changed, readStale true", p)
		}
	})
	t.Run("didChangeWorkspaceFolders", func(t *testing.T) {
		readO := func() map[string]any {
			return framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": filepath.Join(other, "o.txt")}}))
		}
		if res := readO(); res["isError"] != true {
			t.Fatalf("a file outside the roots was read: %s", framingText(res))
		}
		folder := map[string]any{"uri": framingURI(other), "name": "other"}
		r.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{folder}, "removed": []any{}}})
		if res := readO(); res["isError"] != false || !strings.Contains(framingText(res), "omega") {
			t.Errorf("after adding the folder: %s", framingText(res))
		}
		r.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{folder}}})
		if res := readO(); res["isError"] != true {
			t.Errorf("after removing the folder the file is still readable: %s", framingText(res))
		}
	})
}

func TestProtocolStdoutOnlyFramesWithLogs(t *testing.T) {
	t.Parallel()
	// Logging at debug to stderr must not leak onto stdout; the reader
	// above records any non-frame bytes and the cleanup fails on them.
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	cmd := harness.Command(t, []string{"--root", ws, "--log-level", "debug"})
	cmd.Stderr = &lockedBuffer{}
	in, out := harness.StartPiped(t, cmd)
	raw, _ := io.ReadAll(framingInitAndQuit(t, in, out))
	cmd.Wait()
	rest := raw
	for len(rest) > 0 {
		hdr, body, ok := bytes.Cut(rest, []byte("\r\n\r\n"))
		if !ok {
			t.Fatalf("stdout has trailing bytes that are not a frame: %q", rest)
		}
		var n int
		if _, err := fmt.Sscanf(string(hdr), "Content-Length: %d", &n); err != nil || n > len(body) {
			t.Fatalf("bad frame header %q", hdr)
		}
		if !json.Valid(body[:n]) {
			t.Fatalf("frame body is not JSON: %q", body[:n])
		}
		rest = body[n:]
	}
	if cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit code %d after shutdown+exit", cmd.ProcessState.ExitCode())
	}
}

// framingInitAndQuit runs a whole session (initialize, then, after its reply as
// LSP requires, a read and shutdown, then exit) and returns all of stdout.
func framingInitAndQuit(t *testing.T, in io.WriteCloser, out io.Reader) io.Reader {
	br := bufio.NewReader(out)
	var all bytes.Buffer
	until := func(marker string) {
		for {
			n := -1
			for {
				line, err := br.ReadString('\n')
				all.WriteString(line)
				if err != nil {
					t.Fatalf("stdout ended before %s: %v; got %q", marker, err, all.String())
				}
				if line == "\r\n" {
					break
				}
				fmt.Sscanf(line, "Content-Length: %d", &n)
			}
			if n < 0 {
				t.Fatalf("frame without Content-Length: %q", all.String())
			}
			body := make([]byte, n)
			io.ReadFull(br, body)
			all.Write(body)
			if bytes.Contains(body, []byte(marker)) {
				return
			}
		}
	}
	in.Write(framingFrameOf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
	until(`"id":1,`)
	var b bytes.Buffer
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`,
	} {
		b.Write(framingFrameOf(s))
	}
	in.Write(b.Bytes())
	until(`"id":3,`)
	in.Write(framingFrameOf(`{"jsonrpc":"2.0","method":"exit"}`))
	in.Close()
	return io.MultiReader(&all, br)
}

func TestProtocolCancelKillsBashProcess(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, nil))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	marker := fmt.Sprintf("3001.%d%d", os.Getpid(), time.Now().UnixNano()%1e6)
	reapProcessesWithArg(t, marker)
	t0 := time.Now()
	id := r.request("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep " + marker + " & wait"}})
	defer func() { t.Logf("total %v", time.Since(t0)) }()
	if !framingWaitProcs(marker, true, framingWait) {
		t.Fatalf("bash child never started: %s", r.dump())
	}
	start := time.Now()
	r.notify("$/cancelRequest", map[string]any{"id": id})
	if code, msg := framingErr(r.reply(id)); code != -32800 {
		t.Errorf("cancelled bash: code %d %q, want -32800", code, msg)
	}
	t.Logf("bash started after %v; cancel replied after %v", start.Sub(t0), time.Since(start))
	if !framingWaitProcs(marker, false, 2*time.Second) {
		t.Errorf("the cancelled command's child %v still runs", processesWithArg(marker))
	}
	r.alive("cancelled bash")
	// Then the editor quits: the process still exits within 1 s.
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

// Issue 2: "a slow call cancelled by $/cancelRequest replies -32800 within
// 100 ms while the others finish".
func TestProtocolCancelAmongTwoHundred(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := framingWS(t, map[string]string{"a.txt": "alpha\n"})
	r := framingStart(t, ws)
	r.initialize(nil)
	var b bytes.Buffer
	b.Write(framingFrameOf(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_block","arguments":{}}}`))
	for i := 0; i < 200; i++ {
		b.Write(framingFrameOf(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}`, 20000+i)))
	}
	r.writeBytes(b.Bytes())
	framingResult(t, r.reply(20000))
	start := time.Now()
	r.notify("$/cancelRequest", map[string]any{"id": "slow"})
	m := r.reply("slow")
	took := time.Since(start)
	if code, msg := framingErr(m); code != -32800 {
		t.Errorf("slow call: code %d %q, want -32800", code, msg)
	}
	t.Logf("cancel among 200 calls: %v", took)
	if took > 500*time.Millisecond {
		t.Errorf("cancel took %v (issue 2: within 100 ms; 500 ms allowed for load)", took)
	}
	for i := 0; i < 200; i++ {
		if res := framingResult(t, r.reply(20000+i)); !strings.Contains(framingText(res), "alpha") {
			t.Fatalf("call %d: %s", i, framingText(res))
		}
	}
}

// Issue 2 acceptance: unknown tool, missing required field, wrong type,
// extra fields, "limit": "10", file_path alias — exact outcomes.
func TestProtocolInputNormalization(t *testing.T) {
	t.Parallel()
	lines := ""
	for i := 1; i <= 30; i++ {
		lines += fmt.Sprintf("line%d\n", i)
	}
	ws := framingWS(t, map[string]string{"a.txt": lines, "bad.txt": "ok \xff\xfe here\n"})
	r := framingStart(t, ws)
	r.initialize(nil)
	call := func(name string, args any) map[string]any {
		t.Helper()
		return framingResult(t, r.call("tools/call", map[string]any{"name": name, "arguments": args}))
	}
	t.Run("limit as a string, file_path alias, extra field", func(t *testing.T) {
		res := call("read", map[string]any{"file_path": "a.txt", "limit": "10", "bogus": 1})
		txt := framingText(res)
		if res["isError"] != false || !strings.Contains(txt, "line10") || strings.Contains(txt, "line11") {
			t.Fatalf("read: %q", txt)
		}
		if !strings.Contains(txt, "offset=11") {
			t.Errorf("cut read does not say how to continue (offset=11): %q", txt)
		}
		d, _ := res["details"].(map[string]any)
		norm, _ := json.Marshal(d["normalized"])
		for _, want := range []string{"bogus", "file_path", "limit"} {
			if !strings.Contains(string(norm), want) {
				t.Errorf("details.normalized %s does not mention %s", norm, want)
			}
		}
		// A field that may carry meaning is never dropped silently.
		if !strings.Contains(txt, "ignored `bogus`") {
			t.Errorf("the ignored field is not named in the model text: %q", txt)
		}
	})
	t.Run("missing required field", func(t *testing.T) {
		res := call("read", map[string]any{})
		if txt := framingText(res); res["isError"] != true || !strings.Contains(txt, "path") {
			t.Errorf("missing path: %q", txt)
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		res := call("read", map[string]any{"path": "a.txt", "offset": -3})
		txt := framingText(res)
		if res["isError"] != true || !strings.Contains(txt, "offset") || !strings.Contains(txt, "≥ 1") || !strings.Contains(txt, "got -3") {
			t.Errorf("offset -3: %q; docs/tools.md: \"`offset` must be a line number ≥ 1, got -3\"", txt)
		}
		res = call("read", map[string]any{"path": "a.txt", "limit": "ten"})
		if txt := framingText(res); res["isError"] != true || !strings.Contains(txt, "limit") || !strings.Contains(txt, "ten") {
			t.Errorf("limit \"ten\": %q; want the field and what was received", txt)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		res := call("reed", map[string]any{"path": "a.txt"})
		txt := framingText(res)
		if res["isError"] != true || !strings.Contains(txt, "reed") || !strings.Contains(txt, "read") || !strings.Contains(txt, "bash") {
			t.Errorf("unknown tool: %q", txt)
		}
	})
	t.Run("invalid UTF-8 file", func(t *testing.T) {
		res := call("read", map[string]any{"path": "bad.txt"})
		if txt := framingText(res); res["isError"] != false || !strings.Contains(txt, "\uFFFD") || !strings.Contains(txt, "here") {
			t.Errorf("invalid UTF-8 read: %q", txt)
		}
		r.alive("invalid UTF-8 file")
	})
}

func TestProtocolCallBatchParallel(t *testing.T) {
	slow(t)
	// Not parallel: it times calls running side by side, which busy neighbours on 2 cores stretch.
	r := framingStart(t, framingWS(t, nil))
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	const n, each = 4, 600 * time.Millisecond
	var calls []any
	for i := 0; i < n; i++ {
		calls = append(calls, map[string]any{"name": "bash", "arguments": map[string]any{"command": fmt.Sprintf("sleep %.1f", each.Seconds())}})
	}
	start := time.Now()
	res := framingResult(t, r.call("tools/callBatch", map[string]any{"calls": calls}))
	took := time.Since(start)
	for i, x := range res["results"].([]any) {
		if x.(map[string]any)["isError"] != false {
			t.Fatalf("call %d: %s", i, framingText(x.(map[string]any)))
		}
	}
	t.Logf("%d read-only sleeps of %v in a batch: %v", n, each, took)
	if took > time.Duration(n-1)*each {
		t.Errorf("batch of %d read-only commands took %v: not run in parallel (serial would be %v)", n, took, n*each)
	}
}

func TestProtocolListChanged(t *testing.T) {
	t.Parallel()
	ws := framingWS(t, map[string]string{".agentls/keep": ""})
	r := framingStart(t, ws)
	r.initialize(map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	def := map[string]any{"name": "a8p_echo", "description": "Echo a word back.", "deferred": false, "readOnly": true,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []any{"word"}},
		"command":     "echo {{word}}"}
	b, _ := json.Marshal(def)
	if err := os.WriteFile(filepath.Join(ws, ".agentls", "tools", "a8p_echo.json"), b, 0o644); err != nil {
		os.MkdirAll(filepath.Join(ws, ".agentls", "tools"), 0o755)
		if err := os.WriteFile(filepath.Join(ws, ".agentls", "tools", "a8p_echo.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, ok := r.wait(framingWait, func(m map[string]any) bool { return m["method"] == "tools/listChanged" })
	if !ok {
		t.Fatalf("no tools/listChanged after adding an extension tool; frames:\n%s", r.dump())
	}
	if p, has := m["params"]; has && p != nil {
		if pm, ok := p.(map[string]any); !ok || len(pm) != 0 {
			t.Errorf("tools/listChanged params %#v, want {}", p)
		}
	}
	res := framingResult(t, r.call("tools/list", nil))
	found := false
	for _, x := range res["tools"].([]any) {
		if x.(map[string]any)["name"] == "a8p_echo" {
			found = true
		}
	}
	if !found {
		t.Errorf("tools/list after tools/listChanged lacks a8p_echo")
	}
	out := framingResult(t, r.call("tools/call", map[string]any{"name": "a8p_echo", "arguments": map[string]any{"word": "hi there"}}))
	if !strings.Contains(framingText(out), "hi there") {
		t.Errorf("a8p_echo: %q", framingText(out))
	}
}

func TestProtocolRootsFromInitialize(t *testing.T) {
	t.Parallel()
	cli := framingWS(t, map[string]string{"w.txt": "from --root\n"})
	byURI := framingWS(t, map[string]string{"w.txt": "from rootUri\n"})
	byFolder := framingWS(t, map[string]string{"w.txt": "from workspaceFolders\n"})
	cases := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"--root when the client names none", map[string]any{}, "from --root"},
		{"rootUri over --root", map[string]any{"rootUri": framingURI(byURI)}, "from rootUri"},
		{"workspaceFolders over rootUri", map[string]any{"rootUri": framingURI(byURI), "workspaceFolders": []any{map[string]any{"uri": framingURI(byFolder), "name": "f"}}}, "from workspaceFolders"},
		{"rootPath", map[string]any{"rootPath": byURI}, "from rootUri"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := framingStart(t, cli)
			r.initialize(tc.params)
			res := framingResult(t, r.call("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "w.txt"}}))
			if !strings.Contains(framingText(res), tc.want) {
				t.Errorf("read w.txt: %q, want %q", framingText(res), tc.want)
			}
		})
	}
}
