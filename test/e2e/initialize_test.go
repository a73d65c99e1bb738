package e2e

// Contract tests of the wire contract (docs/protocol.md), written from
// the contract alone. Ordering guarantees are checked with a raw framing
// client (initializeRaw) because the harness's async handler may reorder
// notifications relative to replies.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// initializeTimeout bounds every wait for a frame; generous for a loaded machine.
const initializeTimeout = 10 * time.Second

// initializeFrame is one message read from the server's stdout, in arrival order.
type initializeFrame struct {
	Seq int
	At  time.Time
	Raw []byte
	M   map[string]any
}

func (f initializeFrame) method() string { s, _ := f.M["method"].(string); return s }
func (f initializeFrame) params() map[string]any {
	p, _ := f.M["params"].(map[string]any)
	return p
}
func (f initializeFrame) isReply() bool {
	_, has := f.M["method"]
	_, batch := f.M["batch"]
	return !has && !batch
}
func (f initializeFrame) isRequest() bool {
	_, hasID := f.M["id"]
	return !f.isReply() && hasID
}
func (f initializeFrame) errCode() int {
	e, _ := f.M["error"].(map[string]any)
	if e == nil {
		return 0
	}
	n, _ := e["code"].(float64)
	return int(n)
}
func (f initializeFrame) errMsg() string {
	e, _ := f.M["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}
func (f initializeFrame) result() map[string]any {
	r, _ := f.M["result"].(map[string]any)
	return r
}

// initializeRaw speaks LSP framing to a spawned agentls directly.
type initializeRaw struct {
	*rawClient[initializeFrame]
	nextID atomic.Int64
}

func initializeStart(t *testing.T, root string, env ...string) *initializeRaw {
	t.Helper()
	var args []string
	if root != "" {
		args = []string{"--root", root}
	}
	r := &initializeRaw{rawClient: startRaw(t, args, env, initializeReadFrames)}
	r.nextID.Store(100)
	t.Cleanup(func() {
		r.close()
		if bad := r.badFrames(); len(bad) > 0 {
			t.Errorf("stdout carried something other than protocol frames: %q", bad)
		}
		if t.Failed() {
			t.Logf("agentls stderr:\n%s", initializeHead(r.stderr.String(), 4000))
		}
	})
	return r
}

// initializeReadFrames parses stdout strictly: CRLF header lines, only
// Content-Length and Content-Type, JSON-RPC 2.0 bodies.
func initializeReadFrames(br *bufio.Reader, r *rawClient[initializeFrame]) {
	for seq := 0; ; {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if line != "" {
					r.noteBad("partial header at EOF: " + line)
				}
				return
			}
			if line == "\r\n" {
				break
			}
			if !strings.HasSuffix(line, "\r\n") {
				r.noteBad("header line without CRLF: " + line)
			}
			k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ":")
			if !ok {
				r.noteBad("not a header: " + line)
				continue
			}
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "content-length":
				x, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					r.noteBad("bad Content-Length: " + line)
					continue
				}
				n = x
			case "content-type":
			default:
				r.noteBad("unknown header: " + line)
			}
		}
		if n < 0 {
			r.noteBad("frame without Content-Length")
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			r.noteBad("short body")
			return
		}
		var m map[string]any
		var batch []any
		if err := json.Unmarshal(body, &batch); err == nil {
			// A JSON-RPC 2.0 batch reply: kept whole for the test to judge.
			m = map[string]any{"jsonrpc": "2.0", "batch": batch}
		} else if err := json.Unmarshal(body, &m); err != nil {
			r.noteBad("body is not JSON: " + string(body))
			continue
		}
		if m["jsonrpc"] != "2.0" {
			r.noteBad("frame without jsonrpc 2.0: " + string(body))
		}
		r.add(initializeFrame{Seq: seq, At: time.Now(), Raw: body, M: m})
		seq++
	}
}

func (r *initializeRaw) sendMsg(m map[string]any) {
	m["jsonrpc"] = "2.0"
	r.sendJSON(m)
}

// request sends a request and returns its (numeric) id.
func (r *initializeRaw) request(method string, params any) int {
	id := int(r.nextID.Add(1))
	m := map[string]any{"id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	r.sendMsg(m)
	return id
}

func (r *initializeRaw) notify(method string, params any) {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	r.sendMsg(m)
}

func (r *initializeRaw) respond(id any, result any) {
	r.sendMsg(map[string]any{"id": id, "result": result})
}

func (r *initializeRaw) reply(id any, timeout time.Duration) (initializeFrame, bool) {
	want := fmt.Sprint(id)
	return r.wait(timeout, func(f initializeFrame) bool {
		if !f.isReply() {
			return false
		}
		switch v := f.M["id"].(type) {
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64) == want
		case string:
			return v == want
		}
		return false
	})
}

// call sends a request and waits for its reply, failing on timeout.
func (r *initializeRaw) call(method string, params any) initializeFrame {
	r.t.Helper()
	return r.callT(r.t, method, params)
}

// callT is call failing t (a subtest) rather than the test that started r.
func (r *initializeRaw) callT(t *testing.T, method string, params any) initializeFrame {
	t.Helper()
	id := r.request(method, params)
	f, ok := r.reply(id, initializeTimeout)
	if !ok {
		t.Fatalf("%s: no reply within %v", method, initializeTimeout)
	}
	return f
}

func (r *initializeRaw) initialize(params map[string]any) initializeFrame {
	r.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["capabilities"]; !ok {
		params["capabilities"] = map[string]any{}
	}
	f := r.call("initialize", params)
	if f.M["error"] != nil {
		r.t.Fatalf("initialize: %s", f.Raw)
	}
	r.notify("initialized", map[string]any{})
	// Tests change files and expect workspace/externalChange: only once
	// the watchers are armed.
	if _, ok := r.wait(initializeTimeout, func(f initializeFrame) bool { return f.M["method"] == harness.WatcherReady }); !ok {
		r.t.Fatalf("no %s within %v", harness.WatcherReady, initializeTimeout)
	}
	return f
}

// notesOf returns the notifications with method whose params.callId is id.
func initializeNotesOf(frames []initializeFrame, method, callID string) []initializeFrame {
	var out []initializeFrame
	for _, f := range frames {
		if f.method() == method && !f.isRequest() && f.params()["callId"] == callID {
			out = append(out, f)
		}
	}
	return out
}

func initializeHead(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func initializeText(res map[string]any) string {
	var b strings.Builder
	parts, _ := res["content"].([]any)
	for _, p := range parts {
		m, _ := p.(map[string]any)
		if m["type"] == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(fmt.Sprint(m["text"]))
		}
	}
	return b.String()
}

// initializeToolCall runs tools/call over the raw client and returns the reply frame.
func (r *initializeRaw) toolCall(t *testing.T, name, callID string, args any) initializeFrame {
	t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if callID != "" {
		p["callId"] = callID
	}
	f := r.callT(t, "tools/call", p)
	if f.M["error"] != nil {
		t.Fatalf("tools/call %s: protocol error %s", name, f.Raw)
	}
	return f
}

// initializeSession starts agentls on a fresh workspace and initializes it.
func initializeSession(t *testing.T, files map[string]string, init map[string]any) (*initializeRaw, string) {
	t.Helper()
	ws := resolvedWorkspace(t, files)
	r := initializeStart(t, ws)
	if init == nil {
		init = map[string]any{}
	}
	if _, ok := init["initializationOptions"]; !ok {
		init["initializationOptions"] = bypassOptions()
	}
	r.initialize(init)
	return r, ws
}

func TestInitializeInitializeResult(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "x\n"})
	r := initializeStart(t, ws)
	f := r.initialize(map[string]any{"rootUri": fileURI(ws), "clientInfo": map[string]any{"name": "initialize-test", "version": "1"}})
	res := f.result()
	si, _ := res["serverInfo"].(map[string]any)
	if si["name"] != "agentls" {
		t.Errorf("serverInfo.name = %v, want agentls", si["name"])
	}
	if v, ok := si["version"].(string); !ok || v == "" {
		t.Errorf("serverInfo.version = %#v, want a non-empty string", si["version"])
	}
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	if ag == nil {
		t.Fatalf("capabilities.experimental.agentls missing: %s", f.Raw)
	}
	if v, ok := ag["protocolVersion"].(string); !ok || v == "" {
		t.Errorf("protocolVersion = %#v, want a non-empty string", ag["protocolVersion"])
	}
	ready, _ := r.wait(initializeTimeout, func(f initializeFrame) bool { return f.M["method"] == harness.WatcherReady })
	checkWatcherStart(t, ag, watcherReadyMode(ready.M))
	names := map[string]bool{}
	list, ok := ag["tools"].([]any)
	if !ok {
		t.Fatalf("tools = %#v, want an array of names", ag["tools"])
	}
	for _, n := range list {
		s, ok := n.(string)
		if !ok {
			t.Errorf("tools entry %#v is not a string", n)
		}
		names[s] = true
	}
	for _, core := range []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"} {
		if !names[core] {
			t.Errorf("initialize tools %v lacks %q", list, core)
		}
	}
	instr, _ := res["instructions"].(string)
	if instr == "" {
		t.Fatalf("instructions missing: %s", f.Raw)
	}
	// docs/tools.md lists what the text says; the tool and field names are the
	// stable words of each point.
	wantContains(t, "instructions", instr, "read", "edit", "cat", "grep", "find", "oldText")

	// The names in initialize are the active tool set tools/list gives.
	lr := r.call("tools/list", map[string]any{})
	tl, _ := lr.result()["tools"].([]any)
	listed := map[string]bool{}
	for _, x := range tl {
		m, _ := x.(map[string]any)
		listed[fmt.Sprint(m["name"])] = true
	}
	for n := range names {
		if !listed[n] {
			t.Errorf("initialize names %q but tools/list does not", n)
		}
	}
	for n := range listed {
		if !names[n] {
			t.Errorf("tools/list names %q but initialize does not", n)
		}
	}
}

func TestInitializeWorkspaceRoots(t *testing.T) {
	t.Parallel()
	a := resolvedWorkspace(t, map[string]string{"marker.txt": "folder A\n"})
	b := resolvedWorkspace(t, map[string]string{"marker.txt": "folder B\n"})
	c := resolvedWorkspace(t, map[string]string{"marker.txt": "folder C\n"})
	folder := func(p string) map[string]any { return map[string]any{"uri": fileURI(p), "name": filepath.Base(p)} }
	read := func(r *initializeRaw, p string) (string, bool) {
		res := r.toolCall(t, "read", "", map[string]any{"path": p}).result()
		return initializeText(res), res["isError"] == true
	}
	cases := []struct {
		name   string
		params map[string]any
		first  string // what relative marker.txt shows
		inside []string
		out    []string
	}{
		{"rootUri only", map[string]any{"rootUri": fileURI(a)}, "folder A", []string{a}, []string{b}},
		{"workspaceFolders", map[string]any{"workspaceFolders": []any{folder(b), folder(a)}}, "folder B", []string{a, b}, []string{c}},
		{"folders and rootUri", map[string]any{"rootUri": fileURI(c), "workspaceFolders": []any{folder(a), folder(b)}}, "folder A", []string{a, b}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := initializeStart(t, "") // no --root: the params alone name the roots
			tc.params["initializationOptions"] = bypassOptions()
			r.initialize(tc.params)
			if text, isErr := read(r, "marker.txt"); isErr || !strings.Contains(text, tc.first) {
				t.Errorf("relative marker.txt: isError=%v text=%q, want %q", isErr, text, tc.first)
			}
			for _, d := range tc.inside {
				if text, isErr := read(r, filepath.Join(d, "marker.txt")); isErr {
					t.Errorf("absolute path in folder %s refused: %s", d, text)
				}
			}
			for _, d := range tc.out {
				if text, isErr := read(r, filepath.Join(d, "marker.txt")); !isErr {
					t.Errorf("absolute path outside the folders was read: %s", text)
				}
			}
		})
	}

	t.Run("didChangeWorkspaceFolders", func(t *testing.T) {
		r := initializeStart(t, "")
		r.initialize(map[string]any{"workspaceFolders": []any{folder(a), folder(b)}, "initializationOptions": bypassOptions()})
		r.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
			"added": []any{folder(c)}, "removed": []any{folder(b)},
		}})
		// Notifications are handled in order, so a request after it sees it.
		if text, isErr := read(r, filepath.Join(c, "marker.txt")); isErr {
			t.Errorf("added folder not readable: %s", text)
		}
		if text, isErr := read(r, filepath.Join(b, "marker.txt")); !isErr {
			t.Errorf("removed folder still readable: %s", text)
		}
	})
}

func TestInitializeInitializationOptions(t *testing.T) {
	t.Parallel()
	bad := []struct {
		name  string
		opts  any
		field string
	}{
		{"unknown mode", map[string]any{"mode": "yolo"}, "mode"},
		{"rule list not an array", map[string]any{"permissions": map[string]any{"allow": "Bash"}}, "allow"},
		{"rule list of numbers", map[string]any{"permissions": map[string]any{"deny": []any{1}}}, "deny"},
		{"negative limit", map[string]any{"limits": map[string]any{"readLines": -1}}, "readLines"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := initializeStart(t, resolvedWorkspace(t, nil))
			f := r.call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": tc.opts})
			if f.errCode() != -32602 {
				t.Fatalf("initialize with %v: got %s, want error -32602", tc.opts, f.Raw)
			}
			wantContains(t, "error message", f.errMsg(), tc.field)
		})
	}

	// `[]` stands for `{}` (how Lua encodes an empty table) at every level.
	good := []struct {
		name string
		init map[string]any
	}{
		{"options []", map[string]any{"initializationOptions": []any{}}},
		{"permissions []", map[string]any{"initializationOptions": map[string]any{"permissions": []any{}, "limits": []any{}}}},
		{"experimental agentls []", map[string]any{"initializationOptions": map[string]any{}, "capabilities": map[string]any{"experimental": map[string]any{"agentls": []any{}}}}},
		{"experimental []", map[string]any{"initializationOptions": map[string]any{}, "capabilities": map[string]any{"experimental": []any{}}}},
		{"capabilities []", map[string]any{"initializationOptions": map[string]any{}, "capabilities": []any{}}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			r := initializeStart(t, resolvedWorkspace(t, map[string]string{"a.txt": "hello\n"}))
			tc.init["initializationOptions"] = tc.init["initializationOptions"]
			f := r.call("initialize", tc.init)
			if f.M["error"] != nil {
				t.Fatalf("initialize %v: %s", tc.init, f.Raw)
			}
			r.notify("initialized", map[string]any{})
			res := r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result()
			wantContains(t, "read", initializeText(res), "hello")
		})
	}

	t.Run("readOnly mode refuses changes as results", func(t *testing.T) {
		r, ws := initializeSession(t, map[string]string{"a.txt": "hello\n"}, map[string]any{"initializationOptions": map[string]any{"mode": "readOnly"}})
		r.toolCall(t, "read", "", map[string]any{"path": "a.txt"})
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"write", map[string]any{"path": "new.txt", "content": "x"}},
			{"edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "hello", "newText": "bye"}}}},
			{"bash", map[string]any{"command": "touch made-by-bash"}},
		} {
			res := r.toolCall(t, call.tool, "", call.args).result()
			if res["isError"] != true {
				t.Errorf("%s in readOnly mode: not an error: %s", call.tool, initializeText(res))
			}
		}
		for _, p := range []string{"new.txt", "made-by-bash"} {
			if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
				t.Errorf("%s was created in readOnly mode", p)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "hello\n" {
			t.Errorf("a.txt changed in readOnly mode: %q", b)
		}
	})

	t.Run("deny rule", func(t *testing.T) {
		r, _ := initializeSession(t, map[string]string{"a.txt": "hello\n"}, map[string]any{"initializationOptions": map[string]any{
			"mode": "bypass", "permissions": map[string]any{"deny": []any{"Read"}},
		}})
		res := r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result()
		if res["isError"] != true || strings.Contains(initializeText(res), "hello") {
			t.Errorf("read under deny rule Read: %s", initializeText(res))
		}
	})

	t.Run("unknown key is a logMessage warning", func(t *testing.T) {
		r := initializeStart(t, resolvedWorkspace(t, nil))
		r.initialize(map[string]any{"initializationOptions": map[string]any{"colour": "blue"}})
		f, ok := r.wait(initializeTimeout, func(f initializeFrame) bool {
			return f.method() == "window/logMessage" && strings.Contains(fmt.Sprint(f.params()["message"]), "colour")
		})
		if !ok {
			t.Fatalf("no window/logMessage naming the unknown key; frames: %d", len(r.all()))
		}
		if f.params()["type"] != float64(2) {
			t.Errorf("logMessage type = %v, want 2 (Warning): %s", f.params()["type"], f.Raw)
		}
	})
}

func TestInitializeLifecycle(t *testing.T) {
	t.Parallel()
	t.Run("before initialize", func(t *testing.T) {
		r := initializeStart(t, resolvedWorkspace(t, nil))
		for _, m := range []string{"tools/list", "tools/call", "shutdown"} {
			f := r.call(m, map[string]any{"name": "ls", "arguments": map[string]any{}})
			if f.errCode() != -32002 {
				t.Errorf("%s before initialize: %s, want error -32002", m, f.Raw)
			}
		}
		// The refused requests did not break the session.
		r.initialize(nil)
		if f := r.call("tools/list", map[string]any{}); f.M["error"] != nil {
			t.Errorf("tools/list after initialize: %s", f.Raw)
		}
	})

	t.Run("second initialize", func(t *testing.T) {
		r := initializeStart(t, resolvedWorkspace(t, nil))
		r.initialize(nil)
		f := r.call("initialize", map[string]any{"capabilities": map[string]any{}})
		if f.errCode() != -32600 {
			t.Errorf("second initialize: %s, want error -32600", f.Raw)
		}
	})

	t.Run("shutdown then exit", func(t *testing.T) {
		r := initializeStart(t, resolvedWorkspace(t, nil))
		r.initialize(nil)
		f := r.call("shutdown", nil)
		if v, has := f.M["result"]; !has || v != nil || f.M["error"] != nil {
			t.Errorf("shutdown reply %s, want result null", f.Raw)
		}
		for _, m := range []string{"tools/list", "tools/call", "shutdown", "initialize"} {
			f := r.call(m, map[string]any{"name": "ls", "arguments": map[string]any{}, "capabilities": map[string]any{}})
			if f.errCode() != -32600 {
				t.Errorf("%s after shutdown: %s, want error -32600", m, f.Raw)
			}
		}
		r.notify("exit", nil)
		if code := r.exitCode(5 * time.Second); code != 0 {
			t.Errorf("exit after shutdown: code %d, want 0", code)
		}
	})

	t.Run("exit without shutdown", func(t *testing.T) {
		r := initializeStart(t, resolvedWorkspace(t, nil))
		r.initialize(nil)
		r.notify("exit", nil)
		if code := r.exitCode(5 * time.Second); code != 1 {
			t.Errorf("exit without shutdown: code %d, want 1", code)
		}
	})

	t.Run("closing stdin cancels everything running", func(t *testing.T) {
		marker := fmt.Sprintf("%d.%d", 40+time.Now().Nanosecond()%50, time.Now().Nanosecond()%997+1000)
		r, ws := initializeSession(t, nil, nil)
		r.request("tools/call", map[string]any{"name": "bash", "callId": "c-sleep", "arguments": map[string]any{"command": "sleep " + marker + "; touch after-sleep"}})
		r.request("tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{}})
		if !waitUntil(5*time.Second, func() bool { return len(initializeProcs(marker)) > 0 }) {
			t.Fatalf("sleep %s never started", marker)
		}
		start := time.Now()
		r.stdin.Close()
		if code := r.exitCode(3 * time.Second); code == -1 {
			t.Fatalf("process still running 3 s after stdin closed")
		}
		t.Logf("exited %v after EOF", time.Since(start))
		if !waitUntil(3*time.Second, func() bool { return len(initializeProcs(marker)) == 0 }) {
			t.Errorf("bash child survived the end of the session: pids %v", initializeProcs(marker))
		}
		if _, err := os.Stat(filepath.Join(ws, "after-sleep")); err == nil {
			t.Errorf("the cancelled command ran on")
		}
	})
}

// initializeProcs lists the processes whose command line has arg.
func initializeProcs(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(arg)) && !bytes.Contains(b, []byte("-test.")) {
			out = append(out, pid)
		}
	}
	return out
}

func TestInitializeErrorCodes(t *testing.T) {
	t.Parallel()
	r, _ := initializeSession(t, map[string]string{"a.txt": "hello\n"}, nil)
	idOf := func(f initializeFrame) any { return f.M["id"] }
	cases := []struct {
		name   string
		send   func() // writes one message
		code   int
		wantID any // the id the error reply carries
	}{
		{"body not JSON", func() { r.writeFrame([]byte(`{"jsonrpc":"2.0","id":1,`)) }, -32700, nil},
		{"no jsonrpc member", func() { r.writeFrame([]byte(`{"id":7,"method":"tools/list","params":{}}`)) }, -32600, float64(7)},
		{"jsonrpc 1.0", func() { r.writeFrame([]byte(`{"jsonrpc":"1.0","id":"v1","method":"tools/list"}`)) }, -32600, "v1"},
		{"unknown method", func() { r.writeFrame([]byte(`{"jsonrpc":"2.0","id":"u1","method":"tools/frobnicate","params":{}}`)) }, -32601, "u1"},
		{"tools/call params a string", func() { r.writeFrame([]byte(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":"read"}`)) }, -32602, float64(21)},
		{"tools/call name a number", func() {
			r.writeFrame([]byte(`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":5,"arguments":{}}}`))
		}, -32602, float64(22)},
		{"tools/list unknown format", func() {
			r.writeFrame([]byte(`{"jsonrpc":"2.0","id":23,"method":"tools/list","params":{"format":"xml"}}`))
		}, -32602, float64(23)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(r.all())
			tc.send()
			f, ok := r.wait(initializeTimeout, func(f initializeFrame) bool { return f.Seq >= before && f.isReply() && f.M["error"] != nil })
			if !ok {
				t.Fatalf("no error reply")
			}
			if f.errCode() != tc.code {
				t.Errorf("code %d, want %d: %s", f.errCode(), tc.code, f.Raw)
			}
			if id, has := f.M["id"]; !has || fmt.Sprint(idOf(f)) != fmt.Sprint(tc.wantID) {
				t.Errorf("id %#v (present %v), want %#v: %s", id, has, tc.wantID, f.Raw)
			}
			// The connection goes on.
			if g := r.callT(t, "tools/list", map[string]any{}); g.M["error"] != nil {
				t.Errorf("tools/list afterwards: %s", g.Raw)
			}
		})
	}

	t.Run("invalid batch", func(t *testing.T) {
		// JSON-RPC 2.0 §6: `[1,2]` is valid JSON holding two invalid
		// requests; the answer is -32600 for each, never a parse error.
		before := len(r.all())
		r.writeFrame([]byte(`[1,2]`))
		f, ok := r.wait(initializeTimeout, func(f initializeFrame) bool {
			return f.Seq >= before && (f.M["batch"] != nil || f.M["error"] != nil)
		})
		if !ok {
			t.Fatalf("no answer to [1,2]")
		}
		items, _ := f.M["batch"].([]any)
		if items == nil {
			items = []any{f.M}
		}
		for _, it := range items {
			m, _ := it.(map[string]any)
			e, _ := m["error"].(map[string]any)
			if code, _ := e["code"].(float64); code != -32600 {
				t.Errorf("answer to [1,2] has code %v, want -32600: %s", e["code"], f.Raw)
			}
		}
		if g := r.callT(t, "tools/list", map[string]any{}); g.M["error"] != nil {
			t.Errorf("tools/list afterwards: %s", g.Raw)
		}
	})

	t.Run("broken header skips to the next Content-Length", func(t *testing.T) {
		before := len(r.all())
		r.writeRaw([]byte("Content-Length: banana\r\n\r\n{}"))
		id := r.request("tools/list", map[string]any{})
		if f, ok := r.reply(id, initializeTimeout); !ok || f.M["error"] != nil {
			t.Errorf("request after a broken header: ok=%v %s", ok, f.Raw)
		}
		if f, ok := r.wait(time.Second, func(f initializeFrame) bool { return f.Seq >= before && f.errCode() == -32700 }); !ok {
			t.Errorf("no -32700 for the broken header")
		} else if f.M["id"] != nil {
			t.Errorf("parse error id = %v, want null", f.M["id"])
		}
	})

	t.Run("notifications are never answered", func(t *testing.T) {
		before := len(r.all())
		r.notify("custom/unknownNotification", map[string]any{"x": 1})
		r.notify("$/setTrace", map[string]any{"value": "off"})
		r.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": "file:///nowhere"}})
		r.callT(t, "tools/list", map[string]any{})
		for _, f := range r.all()[before:] {
			if f.isReply() && f.M["error"] != nil {
				t.Errorf("a notification got a reply: %s", f.Raw)
			}
		}
	})

	// Tool failures are never protocol errors.
	fails := []struct {
		name string
		tool string
		args any
		want string
	}{
		{"unknown tool", "frobnicate", map[string]any{}, "read"},
		{"missing field", "read", map[string]any{}, "path"},
		{"wrong type", "read", map[string]any{"path": "a.txt", "offset": "soon"}, "offset"},
		{"negative offset", "read", map[string]any{"path": "a.txt", "offset": -3}, "offset"},
		{"missing file", "read", map[string]any{"path": "nope.txt"}, "nope.txt"},
		{"panicking tool", "test_panic", map[string]any{}, ""},
		{"arguments not an object", "read", "a.txt", ""},
	}
	for _, tc := range fails {
		t.Run("result: "+tc.name, func(t *testing.T) {
			f := r.callT(t, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
			if f.M["error"] != nil {
				t.Fatalf("protocol error for a tool failure: %s", f.Raw)
			}
			res := f.result()
			if res["isError"] != true {
				t.Errorf("isError = %v, want true: %s", res["isError"], f.Raw)
			}
			if tc.want != "" {
				wantContains(t, "message", initializeText(res), tc.want)
			}
		})
	}
	if g := r.call("tools/list", map[string]any{}); g.M["error"] != nil {
		t.Errorf("session broken after the failures: %s", g.Raw)
	}
}

func TestInitializeDetailsBeforeReplyAndCallIDs(t *testing.T) {
	t.Parallel()
	old := "alpha\nbeta\ngamma\ndelta\n"
	r, ws := initializeSession(t, map[string]string{"a.txt": old, "b.txt": "one\n"}, nil)
	r.toolCall(t, "read", "", map[string]any{"path": "a.txt"})
	r.toolCall(t, "read", "", map[string]any{"path": "b.txt"})

	cases := []struct {
		name, callID, tool string
		args               map[string]any
		kind, file         string
	}{
		{"edit", "c-edit", "edit", map[string]any{"path": "a.txt", "edits": []any{
			map[string]any{"oldText": "beta", "newText": "BETA"}, map[string]any{"oldText": "delta\n", "newText": "delta\nepsilon\n"},
		}}, "edit", "a.txt"},
		{"write existing", "c-write", "write", map[string]any{"path": "b.txt", "content": "two\n"}, "write", "b.txt"},
		{"write new", "c-create", "write", map[string]any{"path": "sub/new.txt", "content": "fresh\n"}, "create", "sub/new.txt"},
		{"edit without callId", "", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "gamma", "newText": "GAMMA"}}}, "edit", "a.txt"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(ws, tc.file))
			reply := r.toolCall(t, tc.tool, tc.callID, tc.args)
			res := reply.result()
			if res["isError"] == true {
				t.Fatalf("%s failed: %s", tc.tool, initializeText(res))
			}
			id, _ := res["callId"].(string)
			if tc.callID != "" && id != tc.callID {
				t.Errorf("callId = %q, want the echo %q", id, tc.callID)
			}
			if id == "" || seen[id] {
				t.Errorf("callId %q empty or reused", id)
			}
			seen[id] = true
			notes := initializeNotesOf(r.all(), "tools/details", id)
			if len(notes) == 0 {
				t.Fatalf("no tools/details with callId %q", id)
			}
			n := notes[0]
			if n.Seq > reply.Seq {
				t.Errorf("tools/details (frame %d) arrived after the reply (frame %d)", n.Seq, reply.Seq)
			}
			if n.params()["tool"] != tc.tool {
				t.Errorf("tools/details tool = %v, want %s", n.params()["tool"], tc.tool)
			}
			d, _ := n.params()["details"].(map[string]any)
			if d["kind"] != tc.kind {
				t.Errorf("details.kind = %v, want %s", d["kind"], tc.kind)
			}
			if d["uri"] != fileURI(filepath.Join(ws, tc.file)) {
				t.Errorf("details.uri = %v, want %s", d["uri"], fileURI(filepath.Join(ws, tc.file)))
			}
			for _, k := range []string{"unifiedDiff", "matchLevel", "oldHash", "newHash"} {
				if _, ok := d[k].(string); !ok {
					t.Errorf("details.%s = %#v, want a string", k, d[k])
				}
			}
			if _, ok := d["firstChangedLine"].(float64); !ok {
				t.Errorf("details.firstChangedLine = %#v, want a number", d["firstChangedLine"])
			}
			edits, ok := d["edits"].([]any)
			if !ok {
				t.Fatalf("details.edits = %#v, want TextEdit[]", d["edits"])
			}
			after, _ := os.ReadFile(filepath.Join(ws, tc.file))
			if got := applyTextEdits(t, string(before), edits); got != string(after) {
				t.Errorf("edits applied to the old text give %q, the file holds %q", got, after)
			}
			if d["oldHash"] == d["newHash"] {
				t.Errorf("oldHash == newHash after a change")
			}
			// The reply's details are the notification's.
			if rd, _ := res["details"].(map[string]any); rd == nil || rd["unifiedDiff"] != d["unifiedDiff"] {
				t.Errorf("reply details differ from tools/details: %v", rd)
			}
		})
	}
}

// Serial: the gaps are measured where the notes arrive, and neighbours
// on a 2-core machine bunch them up.
func TestInitializeProgress(t *testing.T) {
	slow(t)
	r, _ := initializeSession(t, nil, nil)
	script := func(tag string) string {
		return "for i in $(seq 1 30); do echo " + tag + "$i; sleep 0.03; done"
	}
	check := func(t *testing.T, callID, tag string, reply initializeFrame) {
		t.Helper()
		notes := initializeNotesOf(r.all(), "tools/progress", callID)
		if len(notes) < 3 {
			t.Fatalf("%d tools/progress for %s over ~1 s of output, want several", len(notes), callID)
		}
		for i, n := range notes {
			p := n.params()
			if p["tool"] != "bash" {
				t.Errorf("progress tool = %v, want bash", p["tool"])
			}
			for _, k := range []string{"message", "output"} {
				if v, has := p[k]; has {
					if _, ok := v.(string); !ok {
						t.Errorf("progress %s = %#v, want a string", k, v)
					}
				}
			}
			if v, has := p["percentage"]; has {
				if _, ok := v.(float64); !ok {
					t.Errorf("progress percentage = %#v, want a number", v)
				}
			}
			text := fmt.Sprint(p["output"], p["message"])
			if strings.Contains(text, "OTHER") && tag != "OTHER" || strings.Contains(text, "MINE") && tag != "MINE" {
				t.Errorf("progress of %s carries another call's output: %q", callID, text)
			}
			if n.Seq > reply.Seq {
				t.Errorf("progress frame %d after the reply frame %d", n.Seq, reply.Seq)
			}
			// ≥ 50 ms apart; 10 ms of reader jitter tolerated.
			if i > 0 {
				if gap := n.At.Sub(notes[i-1].At); gap < 40*time.Millisecond {
					t.Errorf("progress %d and %d of %s only %v apart (contract: ≥ 50 ms)", i-1, i, callID, gap)
				}
			}
		}
	}

	t.Run("explicit callId", func(t *testing.T) {
		reply := r.toolCall(t, "bash", "c-prog", map[string]any{"command": script("MINE")})
		check(t, "c-prog", "MINE", reply)
	})
	t.Run("generated callId", func(t *testing.T) {
		reply := r.toolCall(t, "bash", "", map[string]any{"command": script("MINE")})
		id, _ := reply.result()["callId"].(string)
		if id == "" {
			t.Fatalf("no generated callId: %s", reply.Raw)
		}
		check(t, id, "MINE", reply)
	})
	t.Run("batch stamps each call", func(t *testing.T) {
		f := r.call("tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "bash", "callId": "b-mine", "arguments": map[string]any{"command": script("MINE")}},
			map[string]any{"name": "bash", "callId": "b-other", "arguments": map[string]any{"command": script("OTHER")}},
			map[string]any{"name": "read", "arguments": map[string]any{"path": "missing.txt"}},
		}})
		results, _ := f.result()["results"].([]any)
		if len(results) != 3 {
			t.Fatalf("callBatch results: %s", f.Raw)
		}
		for i, want := range []string{"b-mine", "b-other", ""} {
			res, _ := results[i].(map[string]any)
			if want != "" && res["callId"] != want {
				t.Errorf("results[%d].callId = %v, want %s", i, res["callId"], want)
			}
			if want == "" && (res["callId"] == nil || res["callId"] == "" || res["isError"] != true) {
				t.Errorf("results[2] = %v, want a generated callId and isError", res)
			}
		}
		check(t, "b-mine", "MINE", f)
		check(t, "b-other", "OTHER", f)
		for _, n := range r.all() {
			if n.method() == "tools/progress" || n.method() == "tools/details" {
				if id, _ := n.params()["callId"].(string); id == "" {
					t.Errorf("%s without callId: %s", n.method(), n.Raw)
				}
			}
		}
	})
}

// A notification is never answered, so one that cannot be decoded can only
// be logged: it must not end the session (Errors: protocol errors use
// JSON-RPC error codes; the connection goes on).
func TestInitializeMalformedNotificationsKeepTheSession(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body string }{
		{"cancel without id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}`},
		{"cancel with null id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":null}}`},
		{"cancel with object id", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"a":1}}}`},
		{"cancel params a string", `{"jsonrpc":"2.0","method":"$/cancelRequest","params":"garbage"}`},
		{"tools/call as a notification with bad params", `{"jsonrpc":"2.0","method":"tools/call","params":"garbage"}`},
		{"tools/list as a notification with bad params", `{"jsonrpc":"2.0","method":"tools/list","params":"garbage"}`},
		{"folders change with a numeric uri", `{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":{"event":{"added":[{"uri":5}]}}}`},
		{"didOpen params a string", `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":"garbage"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := initializeSession(t, map[string]string{"a.txt": "hello\n"}, nil)
			r.writeFrame([]byte(tc.body))
			id := r.request("tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}})
			f, ok := r.reply(id, initializeTimeout)
			if !ok {
				code := r.exitCode(time.Second)
				t.Fatalf("after %s the session ended (exit code %d) without a reply to the next request", tc.body, code)
			}
			wantContains(t, "read after the bad notification", initializeText(f.result()), "hello")
		})
	}
}

func TestInitializeCancel(t *testing.T) {
	slow(t)
	t.Parallel()
	r, ws := initializeSession(t, nil, nil)
	cancel := func(t *testing.T, id any, params map[string]any) {
		t.Helper()
		// Wait until the call is running: the server has taken it when a
		// later request on the same connection is answered.
		r.callT(t, "tools/list", map[string]any{})
		start := time.Now()
		r.notify("$/cancelRequest", map[string]any{"id": id})
		f, ok := r.reply(id, 5*time.Second)
		if !ok {
			t.Fatalf("no reply to the cancelled request %v", id)
		}
		if f.errCode() != -32800 {
			t.Errorf("cancelled request %v replied %s, want error -32800", id, f.Raw)
		}
		t.Logf("cancelled in %v", time.Since(start))
	}
	t.Run("numeric id", func(t *testing.T) {
		id := r.request("tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{}})
		cancel(t, id, nil)
	})
	t.Run("string id", func(t *testing.T) {
		r.sendMsg(map[string]any{"id": "blk-s", "method": "tools/call", "params": map[string]any{"name": "test_block", "arguments": map[string]any{}}})
		cancel(t, "blk-s", nil)
	})
	t.Run("batch", func(t *testing.T) {
		// write is not concurrency-safe: it runs after test_block ends
		// ("the rest in order"), and a cancelled batch stops there.
		id := r.request("tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "test_block", "arguments": map[string]any{}},
			map[string]any{"name": "write", "arguments": map[string]any{"path": "batch-after.txt", "content": "x"}},
		}})
		r.callT(t, "tools/list", map[string]any{})
		time.Sleep(300 * time.Millisecond) // observation window, not synchronization
		if _, err := os.Stat(filepath.Join(ws, "batch-after.txt")); err == nil {
			t.Errorf("write ran while the call before it in the batch was still running")
		}
		cancel(t, id, nil)
		r.callT(t, "tools/list", map[string]any{})
		if _, err := os.Stat(filepath.Join(ws, "batch-after.txt")); err == nil {
			t.Errorf("the batch's write happened although the batch was cancelled before it")
		}
	})
	t.Run("batch read after a command sees its change", func(t *testing.T) {
		f := r.callT(t, "tools/callBatch", map[string]any{"calls": []any{
			map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 0.3; echo second > order.txt"}},
			map[string]any{"name": "read", "arguments": map[string]any{"path": "order.txt"}},
		}})
		res, _ := f.result()["results"].([]any)
		if len(res) != 2 {
			t.Fatalf("callBatch: %s", f.Raw)
		}
		wantContains(t, "read after bash in one batch", initializeText(res[1].(map[string]any)), "second")
	})
	t.Run("bash stops", func(t *testing.T) {
		marker := fmt.Sprintf("%d.%d", 50+time.Now().Nanosecond()%40, time.Now().Nanosecond()%991+1000)
		id := r.request("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep " + marker + "; touch bash-after.txt"}})
		if !waitUntil(5*time.Second, func() bool { return len(initializeProcs(marker)) > 0 }) {
			t.Fatalf("sleep never started")
		}
		cancel(t, id, nil)
		if !waitUntil(4*time.Second, func() bool { return len(initializeProcs(marker)) == 0 }) {
			t.Errorf("the cancelled command still runs: %v", initializeProcs(marker))
		}
		if _, err := os.Stat(filepath.Join(ws, "bash-after.txt")); err == nil {
			t.Errorf("the cancelled command went on")
		}
	})
	t.Run("unknown id is harmless", func(t *testing.T) {
		r.notify("$/cancelRequest", map[string]any{"id": 987654})
		r.notify("$/cancelRequest", map[string]any{"id": "never-sent"})
		if f := r.callT(t, "tools/list", map[string]any{}); f.M["error"] != nil {
			t.Errorf("tools/list after cancelling unknown ids: %s", f.Raw)
		}
	})
}

func TestInitializeConfirmWire(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"victim.txt": "keep\n"})
	r := initializeStart(t, ws)
	r.initialize(map[string]any{
		"initializationOptions": map[string]any{"mode": "default"},
		"capabilities":          map[string]any{"experimental": map[string]any{"agentls": map[string]any{"confirm": true}}},
	})
	ask := func(t *testing.T, callID string) (int, initializeFrame) {
		t.Helper()
		id := r.request("tools/call", map[string]any{"name": "bash", "callId": callID, "arguments": map[string]any{"command": "rm -f victim.txt"}})
		q, ok := r.wait(initializeTimeout, func(f initializeFrame) bool {
			return f.isRequest() && f.method() == "tools/confirm" && f.params()["callId"] == callID
		})
		if !ok {
			t.Fatalf("no tools/confirm for a destructive command")
		}
		p := q.params()
		if p["tool"] != "bash" {
			t.Errorf("confirm tool = %v", p["tool"])
		}
		if args, _ := p["arguments"].(map[string]any); args["command"] != "rm -f victim.txt" {
			t.Errorf("confirm arguments = %v", p["arguments"])
		}
		if s, _ := p["reason"].(string); s == "" {
			t.Errorf("confirm reason = %#v, want a non-empty string", p["reason"])
		}
		return id, q
	}
	t.Run("cancelled with the call", func(t *testing.T) {
		id, q := ask(t, "c-ask-cancel")
		r.notify("$/cancelRequest", map[string]any{"id": id})
		if f, ok := r.reply(id, 5*time.Second); !ok || f.errCode() != -32800 {
			t.Errorf("cancelled call replied ok=%v %s, want -32800", ok, f.Raw)
		}
		qid := q.M["id"]
		if _, ok := r.wait(5*time.Second, func(f initializeFrame) bool {
			return f.method() == "$/cancelRequest" && fmt.Sprint(f.params()["id"]) == fmt.Sprint(qid)
		}); !ok {
			t.Errorf("no $/cancelRequest {id: %v} for the open tools/confirm", qid)
		}
		r.respond(qid, map[string]any{"decision": "allowOnce"}) // too late: must not run
		r.callT(t, "tools/list", map[string]any{})
		if _, err := os.Stat(filepath.Join(ws, "victim.txt")); err != nil {
			t.Errorf("the cancelled call ran anyway: %v", err)
		}
	})
	t.Run("reject", func(t *testing.T) {
		id, q := ask(t, "c-ask-reject")
		r.respond(q.M["id"], map[string]any{"decision": "rejectOnce", "message": "not today"})
		f, ok := r.reply(id, initializeTimeout)
		if !ok || f.M["error"] != nil {
			t.Fatalf("rejected call: ok=%v %s, want a result", ok, f.Raw)
		}
		res := f.result()
		if res["isError"] != true {
			t.Errorf("rejected call isError = %v", res["isError"])
		}
		wantContains(t, "rejected call", initializeText(res), "denied by the user: not today")
		if res["callId"] != "c-ask-reject" {
			t.Errorf("callId = %v", res["callId"])
		}
		if _, err := os.Stat(filepath.Join(ws, "victim.txt")); err != nil {
			t.Errorf("the rejected command ran: %v", err)
		}
	})
}

func TestInitializeToolsListWire(t *testing.T) {
	t.Parallel()
	r, _ := initializeSession(t, map[string]string{"a.txt": "x\n"}, nil)
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		initializeSortStrings(ks)
		return strings.Join(ks, ",")
	}
	formats := []struct {
		format string
		check  func(t *testing.T, tool map[string]any)
	}{
		{"", func(t *testing.T, tool map[string]any) {
			for _, k := range []string{"name", "description", "inputSchema", "annotations", "_meta"} {
				if _, ok := tool[k]; !ok {
					t.Errorf("mcp tool lacks %s: %s", k, keys(tool))
				}
			}
			ann, _ := tool["annotations"].(map[string]any)
			for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				if _, ok := ann[k].(bool); !ok {
					t.Errorf("%v annotations.%s = %#v, want bool", tool["name"], k, ann[k])
				}
			}
			meta, _ := tool["_meta"].(map[string]any)
			for _, k := range []string{"concurrencySafe", "deferred"} {
				if _, ok := meta[k].(bool); !ok {
					t.Errorf("%v _meta.%s = %#v, want bool", tool["name"], k, meta[k])
				}
			}
		}},
		{"openai", func(t *testing.T, tool map[string]any) {
			fn, _ := tool["function"].(map[string]any)
			if tool["type"] != "function" || fn == nil || keys(fn) != "description,name,parameters" {
				t.Errorf("openai tool = %v", tool)
			}
		}},
		{"anthropic", func(t *testing.T, tool map[string]any) {
			if keys(tool) != "description,input_schema,name" {
				t.Errorf("anthropic tool keys = %s", keys(tool))
			}
		}},
	}
	for _, tc := range formats {
		t.Run("format "+tc.format, func(t *testing.T) {
			p := map[string]any{}
			if tc.format != "" {
				p["format"] = tc.format
			}
			f := r.callT(t, "tools/list", p)
			tools, _ := f.result()["tools"].([]any)
			if len(tools) < 8 {
				t.Fatalf("tools/list: %s", initializeHead(string(f.Raw), 500))
			}
			for _, x := range tools {
				m, _ := x.(map[string]any)
				tc.check(t, m)
			}
		})
	}
	t.Run("[] for {}", func(t *testing.T) {
		if f := r.callT(t, "tools/list", []any{}); f.M["error"] != nil {
			t.Errorf("tools/list params []: %s", f.Raw)
		}
		f := r.callT(t, "tools/call", map[string]any{"name": "ls", "arguments": []any{}})
		if f.M["error"] != nil || f.result()["isError"] == true || !strings.Contains(initializeText(f.result()), "a.txt") {
			t.Errorf("ls with arguments []: %s", f.Raw)
		}
		f = r.callT(t, "tools/callBatch", map[string]any{"calls": []any{map[string]any{"name": "ls", "arguments": []any{}}}})
		if res, _ := f.result()["results"].([]any); len(res) != 1 {
			t.Errorf("callBatch with arguments []: %s", f.Raw)
		}
	})
	t.Run("isError always present", func(t *testing.T) {
		f := r.callT(t, "tools/call", map[string]any{"name": "ls", "arguments": map[string]any{}})
		if v, has := f.result()["isError"]; !has || v != false {
			t.Errorf("successful result isError = %#v (present %v), want false", v, has)
		}
		if !bytes.Contains(f.Raw, []byte(`"isError":false`)) {
			t.Errorf("isError:false not on the wire: %s", initializeHead(string(f.Raw), 300))
		}
	})
}

func initializeSortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func initializeDoc(uri string, version int) map[string]any {
	return map[string]any{"uri": uri, "version": version}
}

func initializeRange(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}
}

func TestInitializeTextDocumentSync(t *testing.T) {
	t.Parallel()
	const disk = "disk one\ndisk two\n"
	edit := func(old, nw string) map[string]any {
		return map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": old, "newText": nw}}}
	}
	open := func(r *initializeRaw, ws, text string) string {
		uri := fileURI(filepath.Join(ws, "a.txt"))
		r.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": text}})
		return uri
	}
	diskOf := func(ws string) string { b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); return string(b) }

	t.Run("without applyEdit", func(t *testing.T) {
		r, ws := initializeSession(t, map[string]string{"a.txt": disk}, nil)
		uri := open(r, ws, "buffer one\ndisk two\n")
		if text := initializeText(r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result()); !strings.Contains(text, "buffer one") {
			t.Errorf("read does not show the unsaved buffer: %s", text)
		}
		r.notify("textDocument/didChange", map[string]any{"textDocument": initializeDoc(uri, 2),
			"contentChanges": []any{map[string]any{"range": initializeRange(1, 0, 1, 4), "text": "typed"}}})
		if text := initializeText(r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result()); !strings.Contains(text, "typed two") {
			t.Errorf("read does not show the incremental change: %s", text)
		}
		r.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
		res := r.toolCall(t, "edit", "", edit("typed two", "model two")).result()
		if res["isError"] != true {
			t.Errorf("edit of an unsaved document without applyEdit succeeded: %s", initializeText(res))
		}
		wantContains(t, "refusal", initializeText(res), "save")
		if diskOf(ws) != disk {
			t.Errorf("disk changed: %q", diskOf(ws))
		}
		for _, f := range r.all() {
			if f.method() == "workspace/applyEdit" {
				t.Errorf("workspace/applyEdit sent to a client without the capability: %s", f.Raw)
			}
		}
		r.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
		if text := initializeText(r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result()); !strings.Contains(text, "disk one") || strings.Contains(text, "typed") {
			t.Errorf("after didClose read does not show the disk: %s", text)
		}
	})

	t.Run("with applyEdit", func(t *testing.T) {
		r, ws := initializeSession(t, map[string]string{"a.txt": disk}, map[string]any{
			"capabilities": map[string]any{"experimental": map[string]any{"agentls": map[string]any{"applyEdit": true}}},
		})
		uri := open(r, ws, "buffer one\ndisk two\n")
		r.toolCall(t, "read", "", map[string]any{"path": "a.txt"})

		id := r.request("tools/call", map[string]any{"name": "edit", "callId": "c-doc", "arguments": edit("buffer one", "model one")})
		q, ok := r.wait(initializeTimeout, func(f initializeFrame) bool { return f.isRequest() && f.method() == "workspace/applyEdit" })
		if !ok {
			t.Fatalf("no workspace/applyEdit for an edit of an open document")
		}
		we, _ := q.params()["edit"].(map[string]any)
		dcs, _ := we["documentChanges"].([]any)
		if len(dcs) != 1 {
			t.Fatalf("applyEdit documentChanges: %s", q.Raw)
		}
		dc := dcs[0].(map[string]any)
		td, _ := dc["textDocument"].(map[string]any)
		if td["uri"] != uri || td["version"] != float64(1) {
			t.Errorf("documentChanges textDocument = %v, want {uri: %s, version: 1}", td, uri)
		}
		edits, _ := dc["edits"].([]any)
		if got := applyTextEdits(t, "buffer one\ndisk two\n", edits); got != "model one\ndisk two\n" {
			t.Errorf("applyEdit edits give %q", got)
		}
		r.respond(q.M["id"], map[string]any{"applied": true})
		r.notify("textDocument/didChange", map[string]any{"textDocument": initializeDoc(uri, 2),
			"contentChanges": []any{map[string]any{"text": "model one\ndisk two\n"}}})
		f, ok := r.reply(id, initializeTimeout)
		if !ok {
			t.Fatalf("no reply to the edit")
		}
		res := f.result()
		if res["isError"] == true {
			t.Fatalf("edit through the editor failed: %s", initializeText(res))
		}
		wantContains(t, "edit result", initializeText(res), "in the editor (unsaved")
		if d, _ := res["details"].(map[string]any); d["inEditor"] != true || d["saved"] != false {
			t.Errorf("details inEditor/saved = %v/%v, want true/false", d["inEditor"], d["saved"])
		}
		if n := initializeNotesOf(r.all(), "tools/details", "c-doc"); len(n) == 0 || n[0].Seq > f.Seq {
			t.Errorf("tools/details missing or after the reply for an in-editor edit")
		}
		if diskOf(ws) != disk {
			t.Errorf("disk written although the document took the edit: %q", diskOf(ws))
		}

		// applied: false is an isError result with the editor's reason.
		r.toolCall(t, "read", "", map[string]any{"path": "a.txt"})
		id = r.request("tools/call", map[string]any{"name": "edit", "arguments": edit("model one", "again one")})
		q, ok = r.wait(initializeTimeout, func(f initializeFrame) bool {
			return f.isRequest() && f.method() == "workspace/applyEdit" && fmt.Sprint(f.M["id"]) != fmt.Sprint(q.M["id"])
		})
		if !ok {
			t.Fatalf("no second workspace/applyEdit")
		}
		r.respond(q.M["id"], map[string]any{"applied": false, "failureReason": "document is read-only here"})
		f, _ = r.reply(id, initializeTimeout)
		if f.result()["isError"] != true {
			t.Errorf("applied:false gave a success: %s", f.Raw)
		}
		wantContains(t, "applied:false result", initializeText(f.result()), "document is read-only here")
		if diskOf(ws) != disk {
			t.Errorf("disk written after applied:false: %q", diskOf(ws))
		}

		// The user types after the model's read: the next edit must re-read.
		r.toolCall(t, "read", "", map[string]any{"path": "a.txt"})
		r.notify("textDocument/didChange", map[string]any{"textDocument": initializeDoc(uri, 3),
			"contentChanges": []any{map[string]any{"range": initializeRange(1, 0, 1, 0), "text": "user "}}})
		res = r.toolCall(t, "edit", "", edit("model one", "third one")).result()
		if res["isError"] != true {
			t.Errorf("edit after the user typed succeeded: %s", initializeText(res))
		}
		wantContains(t, "guard", initializeText(res), "changed in the editor since you read it")
	})

	t.Run("bad didChange drops the document with a warning", func(t *testing.T) {
		r, ws := initializeSession(t, map[string]string{"a.txt": disk}, nil)
		uri := open(r, ws, "buffer one\n")
		r.notify("textDocument/didChange", map[string]any{"textDocument": initializeDoc(uri, 2),
			"contentChanges": []any{map[string]any{"range": initializeRange(40, 0, 41, 0), "text": "x"}}})
		if _, ok := r.wait(initializeTimeout, func(f initializeFrame) bool {
			return f.method() == "window/logMessage" && f.params()["type"] == float64(2)
		}); !ok {
			t.Errorf("no window/logMessage warning for a didChange outside the text")
		}
		if text := initializeText(r.toolCall(t, "read", "", map[string]any{"path": "a.txt"}).result()); !strings.Contains(text, "disk one") {
			t.Errorf("after the dropped document read does not show the disk: %s", text)
		}
	})
}

func TestInitializeExternalChange(t *testing.T) {
	t.Parallel()
	r, ws := initializeSession(t, map[string]string{"read.txt": "v1\n", "unread.txt": "u1\n"}, nil)
	r.toolCall(t, "read", "", map[string]any{"path": "read.txt"})
	uri := fileURI(filepath.Join(ws, "read.txt"))
	steps := []struct {
		name string
		do   func() error
		kind string
	}{
		{"changed", func() error {
			os.WriteFile(filepath.Join(ws, "unread.txt"), []byte("u2\n"), 0o644)
			return os.WriteFile(filepath.Join(ws, "read.txt"), []byte("v2 longer\n"), 0o644)
		}, "changed"},
		{"deleted", func() error { return os.Remove(filepath.Join(ws, "read.txt")) }, "deleted"},
		{"created", func() error { return os.WriteFile(filepath.Join(ws, "read.txt"), []byte("v3\n"), 0o644) }, "created"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := len(r.all())
			if err := st.do(); err != nil {
				t.Fatal(err)
			}
			f, ok := r.wait(initializeTimeout, func(f initializeFrame) bool {
				return f.Seq >= before && f.method() == "workspace/externalChange" && f.params()["kind"] == st.kind
			})
			if !ok {
				var got []string
				for _, f := range r.all()[before:] {
					got = append(got, string(f.Raw))
				}
				t.Fatalf("no externalChange kind %s; got %v", st.kind, got)
			}
			p := f.params()
			if p["uri"] != uri {
				t.Errorf("uri = %v, want %s", p["uri"], uri)
			}
			if _, ok := p["readStale"].(bool); !ok {
				t.Errorf("readStale = %#v, want a bool", p["readStale"])
			}
			if st.kind == "changed" && p["readStale"] != true {
				t.Errorf("a read file changed: readStale = %v, want true", p["readStale"])
			}
		})
	}
	for _, f := range r.all() {
		if f.method() == "workspace/externalChange" && strings.HasSuffix(fmt.Sprint(f.params()["uri"]), "unread.txt") {
			t.Errorf("externalChange for a file the model never read: %s", f.Raw)
		}
	}
}

func TestInitializeSharedRulesOnTheWire(t *testing.T) {
	t.Parallel()
	outside := resolvedWorkspace(t, map[string]string{"secret-outside.txt": "outside\n"})
	big := numberedLines(2500, func(i int) string { return fmt.Sprintf("row %d", i) })
	r, ws := initializeSession(t, map[string]string{"a.txt": "alpha\n", "sp ace.txt": "spaced\n", "big.txt": big}, nil)
	if err := os.Symlink(filepath.Join(outside, "secret-outside.txt"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	paths := []struct {
		name, path string
		ok         bool
		want       string
	}{
		{"relative", "a.txt", true, "alpha"},
		{"leading @", "@a.txt", true, "alpha"},
		{"NBSP", "sp\u00a0ace.txt", true, "spaced"},
		{"narrow NBSP", "sp\u202face.txt", true, "spaced"},
		{"absolute inside", filepath.Join(ws, "a.txt"), true, "alpha"},
		{"dot-dot escape", "../" + filepath.Base(outside) + "/secret-outside.txt", false, ""},
		{"absolute outside", filepath.Join(outside, "secret-outside.txt"), false, ""},
		{"symlink outside", "link.txt", false, ""},
		{"NUL byte", "a.txt\x00.png", false, ""},
		{"device", "/dev/zero", false, ""},
	}
	for _, tc := range paths {
		t.Run("path "+tc.name, func(t *testing.T) {
			res := r.toolCall(t, "read", "", map[string]any{"path": tc.path}).result()
			text := initializeText(res)
			if tc.ok {
				if res["isError"] == true || !strings.Contains(text, tc.want) {
					t.Errorf("read %q: %s", tc.path, text)
				}
				return
			}
			if res["isError"] != true || strings.Contains(text, "outside\n") {
				t.Errorf("read %q not refused: %s", tc.path, text)
			}
			if len(strings.TrimSpace(text)) < 10 {
				t.Errorf("refusal of %q gives no reason: %q", tc.path, text)
			}
		})
	}

	t.Run("truncation notice", func(t *testing.T) {
		res := r.toolCall(t, "read", "", map[string]any{"path": "big.txt"}).result()
		wantContains(t, "read big.txt", initializeText(res), "lines 1-1998 of 2500", "offset=1999")
		res = r.toolCall(t, "read", "", map[string]any{"path": "big.txt", "offset": 1999}).result()
		text := initializeText(res)
		wantContains(t, "read on", text, "row 1999", "row 2500")
		if strings.Contains(text, "row 1998\n") {
			t.Errorf("offset=1999 repeats line 1998")
		}
	})

	// Secrets: every content string, and details that carry file or
	// command text, pass the masker; so do the notifications.
	const gh = "ghp_" + "Zq3xR8vK2mN5pL7tW9yB4cD6fH1jS0aE3uG8"
	const aws = "AKIA" + "Z3MXQ7PLKR2WTB4N"
	t.Run("secrets", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(ws, "conf.txt"), []byte("token = "+gh+"\nkey = "+aws+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := len(r.all())
		rd := r.toolCall(t, "read", "s-read", map[string]any{"path": "conf.txt"})
		ed := r.toolCall(t, "edit", "s-edit", map[string]any{"path": "conf.txt", "edits": []any{map[string]any{"oldText": "token = " + gh, "newText": "token = " + gh + " # rotated"}}})
		bs := r.toolCall(t, "bash", "s-bash", map[string]any{"command": "cat conf.txt; sleep 0.2; echo " + aws + "; sleep 0.2"})
		for _, f := range append([]initializeFrame{rd, ed, bs}, r.all()[before:]...) {
			for _, s := range []string{gh, aws} {
				if bytes.Contains(f.Raw, []byte(s)) {
					t.Errorf("secret %s… left the server in %s", s[:6], initializeHead(string(f.Raw), 400))
				}
			}
		}
		if ed.result()["isError"] == true {
			t.Errorf("edit failed: %s", initializeText(ed.result()))
		}
		// The masked text is still there, marked: nothing was dropped.
		wantContains(t, "masked read", initializeText(rd.result()), "token = [REDACTED")
		wantContains(t, "masked bash", initializeText(bs.result()), "[REDACTED")
	})
}

func TestInitializeListChanged(t *testing.T) {
	t.Parallel()
	def := `{"name": "frobnicate_widgets", "description": "Frobnicate the widgets of the project.", "inputSchema": {"type": "object", "properties": {"widget": {"type": "string"}}}, "command": "echo frob {{widget}}", "readOnly": true, "deferred": true}`
	r, _ := initializeSession(t, map[string]string{".agentls/tools/frob.json": def}, nil)
	names := func() map[string]bool {
		f := r.call("tools/list", map[string]any{})
		out := map[string]bool{}
		tools, _ := f.result()["tools"].([]any)
		for _, x := range tools {
			out[fmt.Sprint(x.(map[string]any)["name"])] = true
		}
		return out
	}
	if names()["frobnicate_widgets"] {
		t.Fatalf("deferred tool active before tool_search")
	}
	f := r.call("tools/list", map[string]any{"includeDeferred": true})
	found := false
	tools, _ := f.result()["tools"].([]any)
	for _, x := range tools {
		m := x.(map[string]any)
		if m["name"] == "frobnicate_widgets" {
			found = true
			if meta, _ := m["_meta"].(map[string]any); meta["deferred"] != true {
				t.Errorf("_meta.deferred = %v, want true", meta["deferred"])
			}
		}
	}
	if !found {
		t.Errorf("includeDeferred does not list the deferred tool")
	}
	before := len(r.all())
	res := r.toolCall(t, "tool_search", "", map[string]any{"query": "frobnicate widgets"}).result()
	wantContains(t, "tool_search", initializeText(res), "frobnicate_widgets")
	n, ok := r.wait(initializeTimeout, func(f initializeFrame) bool { return f.Seq >= before && f.method() == "tools/listChanged" })
	if !ok {
		t.Fatalf("no tools/listChanged after tool_search activated a tool")
	}
	if n.isRequest() {
		t.Errorf("tools/listChanged sent as a request: %s", n.Raw)
	}
	if !names()["frobnicate_widgets"] {
		t.Errorf("the activated tool is not in tools/list")
	}
}

// The initialize result's instructions cover the points docs/tools.md lists.
func TestInstructions(t *testing.T) {
	t.Parallel()
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	res := c.Initialize(t.Context(), bypass())
	ins := strings.ToLower(fmt.Sprint(res["instructions"]))
	for _, w := range []string{"read a file before editing", "search", "guess", "cat", "grep", "find", "oldtext", "unique"} {
		if !strings.Contains(ins, w) {
			t.Errorf("instructions lack %q:\n%s", w, res["instructions"])
		}
	}
}
