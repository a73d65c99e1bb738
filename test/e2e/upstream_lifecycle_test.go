package e2e

// Contract tests of upstream MCP servers under failure (docs/tools.md
// "Upstream MCP servers"). The upstream servers are
// python3 scripts written at run time, agentls mcp itself and node's
// server-filesystem.

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
)

// upstreamLifeServerPy is a fake upstream MCP server. argv: MODE MARKER STATEDIR.
// It appends its start's unix time to STATEDIR/starts and
// every message it reads to STATEDIR/recv.
const upstreamLifeServerPy = `#!/usr/bin/env python3
import sys, json, os, time, threading
mode, marker, state = sys.argv[1], sys.argv[2], sys.argv[3]
def log(name, line):
    with open(os.path.join(state, name), "a") as f:
        f.write(line + "\n")
log("starts", "%f" % time.time())
lock = threading.Lock()
cancelled = set()
def raw(s):
    with lock:
        sys.stdout.write(s + "\n")
        sys.stdout.flush()
def send(rid, key, value):
    raw(json.dumps({"jsonrpc": "2.0", "id": rid, key: value}))
if mode == "exit":
    sys.stderr.write("up-fatal: cannot open the frobnicator\n")
    sys.exit(3)
def tool(name, desc, schema={"type": "object", "properties": {"text": {"type": "string", "description": "text to echo"}}}):
    t = {"name": name, "description": "fakeup " + desc, "annotations": {"readOnlyHint": True}}
    if schema:
        t["inputSchema"] = schema
    return t
TOOLS = [tool("echo", "echo the text back"), tool("env", "print the variable FAKEUP_VAR", {"type": "object"}),
    tool("slow", "slow tool that reports progress", {"type": "object"}), tool("image", "image result", {"type": "object"})]
if mode == "odd":
    TOOLS = [tool("echo", "echo first"), tool("echo", "echo duplicate"), tool("has space", "spaced name"),
        tool("L" * 200, "long name"), tool("noschema", "no input schema", None), tool("fine", "fine tool")]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
def call(msg):
    rid, p = msg["id"], msg.get("params") or {}
    name, args, token = p.get("name"), p.get("arguments") or {}, (p.get("_meta") or {}).get("progressToken")
    if mode == "wrongid":
        return send(987654, "result", {"content": [{"type": "text", "text": "up-wrong-answer"}]})
    content = [{"type": "text", "text": "up-" + str(name)}]
    if name == "echo":
        content = [{"type": "text", "text": "up-echo:" + str(args.get("text"))}]
    elif name == "env":
        content = [{"type": "text", "text": "FAKEUP_VAR=" + os.environ.get("FAKEUP_VAR", "<unset>")}]
    elif name == "slow":
        for i in range(200):
            if rid in cancelled:
                return log("cancelled", json.dumps(rid))
            if token is not None and i < 20:
                raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": i + 1, "total": 200, "message": "fakeup step %d" % (i + 1)}}))
            time.sleep(0.05)
        content = [{"type": "text", "text": "up-slow-done"}]
    elif name == "image":
        content = [{"type": "image", "data": PNG, "mimeType": "image/png"}, {"type": "text", "text": "up-image"}]
    send(rid, "result", {"content": content})
if mode == "stubborn":
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except Exception:
        continue
    log("recv", json.dumps(msg))
    method, rid = msg.get("method"), msg.get("id")
    if mode == "hang":
        continue
    if mode == "garbage" and rid is not None:
        raw("this is not JSON at all")
        raw("{broken")
    if mode == "strayid" and rid is not None:
        send(424242, "result", {})
    if mode == "strangenote" and rid is not None:
        raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/up_unknown", "params": {}}))
    if method == "initialize":
        v = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        send(rid, "result", {"protocolVersion": v, "capabilities": {"tools": {}}, "serverInfo": {"name": "fakeup", "version": "1"}})
    elif method == "notifications/cancelled":
        cancelled.add((msg.get("params") or {}).get("requestId"))
    elif method == "tools/list" and mode == "listerror":
        send(rid, "error", {"code": -32603, "message": "up-list-boom"})
    elif method == "tools/list":
        send(rid, "result", {"tools": TOOLS})
    elif method == "tools/call" and mode == "crash":
        sys.stderr.write("up-crash-on-call\n")
        sys.stderr.flush()
        os._exit(1)
    elif method == "tools/call":
        threading.Thread(target=call, args=(msg,), daemon=True).start()
    elif method == "ping":
        send(rid, "result", {})
    elif rid is not None:
        send(rid, "error", {"code": -32601, "message": "no " + str(method)})
while mode == "stubborn":
    time.sleep(1000)
`

// upstreamLifeSrv is one fake upstream server: its config entry and its state dir.
type upstreamLifeSrv struct {
	entry  map[string]any
	state  string
	marker string
}

// upstreamLifeNewSrv writes the script and returns a server running mode.
func upstreamLifeNewSrv(t *testing.T, mode string) upstreamLifeSrv {
	t.Helper()
	state := t.TempDir()
	script := filepath.Join(state, "srv.py")
	if err := os.WriteFile(script, []byte(upstreamLifeServerPy), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("up-marker-%s-%d", mode, time.Now().UnixNano())
	reapProcessesWithArg(t, marker)
	return upstreamLifeSrv{entry: map[string]any{"command": script, "args": []any{mode, marker, state}}, state: state, marker: marker}
}

// starts is the start times the server recorded.
func (s upstreamLifeSrv) starts() []float64 {
	b, _ := os.ReadFile(filepath.Join(s.state, "starts"))
	var out []float64
	for _, l := range strings.Fields(string(b)) {
		if v, err := strconv.ParseFloat(l, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// upstreamLifeConfig writes .agentls/mcp.json under ws with servers under key.
func upstreamLifeConfig(t *testing.T, ws, key string, servers map[string]any) {
	writeFile(t, filepath.Join(ws, ".agentls", "mcp.json"), compactJSON(map[string]any{key: servers}))
}

// upstreamLifeSession is an editor-protocol session with its log file.
type upstreamLifeSession struct {
	c   *harness.Client
	ctx context.Context
	log string
	ws  string
}

func (s *upstreamLifeSession) logText() string { b, _ := os.ReadFile(s.log); return string(b) }

// upstreamLifeStart runs agentls on ws in bypass mode with a --log-file.
func upstreamLifeStart(t *testing.T, ws string, env ...string) *upstreamLifeSession {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "agentls.log")
	env = append([]string{"XDG_CACHE_HOME=" + t.TempDir()}, env...)
	c := harness.Start(t, harness.Options{Root: ws, Args: []string{"--log-file", logPath}, Env: env})
	ctx := testCtx(t, 120*time.Second) // a hang guard: several servers start per test
	c.Initialize(ctx, bypass())
	return &upstreamLifeSession{c: c, ctx: ctx, log: logPath, ws: ws}
}

// call runs tools/call bounded by d; a protocol error fails the test.
func (s *upstreamLifeSession) call(t *testing.T, d time.Duration, name string, args any) (harness.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	t0 := time.Now()
	r, err := s.c.TryCallTool(ctx, name, args)
	if err != nil {
		t.Fatalf("tools/call %s after %v: %v", name, time.Since(t0).Round(time.Millisecond), err)
	}
	return r, time.Since(t0)
}

// alive checks agentls still answers a core tool.
func (s *upstreamLifeSession) alive(t *testing.T) {
	t.Helper()
	writeFile(t, filepath.Join(s.ws, "up-probe.txt"), "probe line\n")
	r, d := s.call(t, 5*time.Second, "read", map[string]any{"path": "up-probe.txt"})
	wantResult(t, "core read", r, false, "probe line")
	if d > 3*time.Second {
		t.Errorf("core read took %v", d)
	}
}

// names lists the tools of tools/list in format ("": the editor's), deferred ones too.
func (s *upstreamLifeSession) names(t *testing.T, format string) []string {
	t.Helper()
	params := map[string]any{"includeDeferred": true}
	if format != "" {
		params["format"] = format
	}
	var res struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := s.c.Call(s.ctx, "tools/list", params, &res); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, cmp.Or(tl.Name, tl.Function.Name))
	}
	return out
}

// A server that cannot start (missing, not executable, exits at once),
// answers tools/list with an error or crashes on every call never hangs
// agentls: tool_search answers, a call of its tool says what is wrong
// naming the server ("unavailable … restarting in …" while it cannot
// start), its stderr or error reaches the log, the core tools work. Noise
// on stdout around valid replies (non-JSON lines, a reply with an unknown
// id, an unknown notification) is skipped, as Claude Code's SDK does, and
// the valid replies still count.
func TestUpstreamMisbehavingServersNeverHangAgentls(t *testing.T) {
	t.Parallel()
	down := []string{`"bad"`, "unavailable", "restarting in"}
	echoed := []string{"up-echo:hello"}
	cases := []struct {
		name, mode string
		entry      func(t *testing.T) map[string]any // instead of the mode's server
		isError    bool
		want       []string // in the call's result
		log        []string // in the log file or a window/logMessage
	}{
		{name: "missing command", entry: func(t *testing.T) map[string]any {
			return map[string]any{"command": filepath.Join(t.TempDir(), "up-no-such-server")}
		}, isError: true, want: down, log: []string{"bad"}},
		{name: "not executable", entry: func(t *testing.T) map[string]any {
			p := filepath.Join(t.TempDir(), "srv.py")
			writeFile(t, p, upstreamLifeServerPy) // 0644
			return map[string]any{"command": p, "args": []any{"ok", "x", t.TempDir()}}
		}, isError: true, want: down, log: []string{"bad"}},
		{name: "exits at once", mode: "exit", isError: true, want: down, log: []string{"bad", "up-fatal: cannot open the frobnicator"}},
		{name: "tools/list answered with an error", mode: "listerror", isError: true, want: []string{`"bad"`}, log: []string{"bad", "up-list-boom"}},
		{name: "crashes on every call", mode: "crash", isError: true, log: []string{"up-crash-on-call"},
			want: []string{`bad__echo failed: the MCP server "bad" did not answer (`, `It is restarted automatically; call again shortly.`}},
		{name: "non-JSON lines", mode: "garbage", want: echoed},
		{name: "a reply with an unknown id", mode: "strayid", want: echoed},
		{name: "an unknown notification", mode: "strangenote", want: echoed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := upstreamLifeNewSrv(t, tc.mode)
			ws := newWorkspace(t, nil)
			if tc.entry != nil {
				srv.entry = tc.entry(t)
			}
			upstreamLifeConfig(t, ws, "servers", map[string]any{"bad": srv.entry})
			s := upstreamLifeStart(t, ws)
			if _, d := s.call(t, 10*time.Second, "tool_search", map[string]any{"query": "fakeup echo"}); d > 5*time.Second {
				t.Errorf("tool_search took %v", d)
			}
			r, d := s.call(t, 10*time.Second, "bad__echo", map[string]any{"text": "hello"})
			wantResult(t, "bad__echo", r, tc.isError, tc.want...)
			if d > 5*time.Second {
				t.Errorf("the call took %v", d)
			}
			for _, w := range tc.log {
				if !waitUntil(3*time.Second, func() bool { return strings.Contains(s.logText()+strings.Join(logMessages(s.c, 0), "\n"), w) }) {
					t.Errorf("%q in neither the log file nor a logMessage:\n%s", w, s.logText())
				}
			}
			if tc.mode == "crash" { // the next calls are told it restarts; one start per crash at most
				for i := range 3 {
					r, _ = s.call(t, 10*time.Second, "bad__echo", map[string]any{"text": "x"})
					if !r.IsError || !(strings.Contains(r.Text(), "unavailable") && strings.Contains(r.Text(), "restarting in") || strings.Contains(r.Text(), "did not answer")) {
						t.Errorf("call %d after crashes: %v %q", i+2, r.IsError, r.Text())
					}
				}
				if n := len(srv.starts()); n > 4 {
					t.Errorf("%d starts for 4 crashing calls", n)
				}
			}
			s.alive(t)
		})
	}
}

// Restarts of a server that exits at once follow the documented backoff
// (100 ms, then 1 s, 2 s, 4 s …): no tight loop.
func TestUpstreamBackoff(t *testing.T) {
	slow(t)
	t.Parallel()
	srv, s := upstreamLifeOne(t, "exit", "dies")
	// Starts at ~0, 0.1, 1.1, 3.1 s (next at 7.1 s) plus each start's own
	// time, which a loaded machine stretches: wait for the fourth start
	// rather than a fixed time, then check no gap (a fifth start's too) was
	// shorter than the schedule.
	if !waitUntil(20*time.Second, func() bool { return len(srv.starts()) >= 4 }) {
		t.Fatalf("%d starts in 20 s, want at least 4 (backoff 100 ms, 1 s, 2 s): %v", len(srv.starts()), srv.starts())
	}
	st := srv.starts()
	for i, least := range []float64{0.08, 0.9, 1.8, 3.6} {
		if i+1 < len(st) && st[i+1]-st[i] < least {
			t.Errorf("restart %d came %.3f s after the previous start, want ≥ %.2f s (starts %v)", i+1, st[i+1]-st[i], least, st)
		}
	}
	s.alive(t)
}

// A server that never answers initialize: tools/list and core tools answer
// at once; tool_search and a call of its tool answer within the documented
// 30 s bound for connecting and listing, the call with a clear error.
func TestUpstreamHang(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits out the 30 s bound on connecting and listing tools")
	}
	_, s := upstreamLifeOne(t, "hang", "hang")
	t0 := time.Now()
	s.names(t, "")
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("tools/list took %v while an upstream hangs", d)
	}
	s.alive(t)
	sr, d := s.call(t, 40*time.Second, "tool_search", map[string]any{"query": "fakeup echo"})
	if d > 15*time.Second {
		t.Errorf("tool_search took %v; docs/tools.md bounds its wait for starting servers at 10 s", d)
	}
	wantContains(t, "tool_search while a server hangs", sr.Text(), `MCP server "hang" is still starting`)
	r, d := s.call(t, 40*time.Second, "hang__echo", map[string]any{"text": "x"})
	wantResult(t, "call of a hanging server's tool", r, true, `"hang"`)
	if d > 35*time.Second {
		t.Errorf("call took %v", d)
	}
	s.alive(t)
}

// A reply with a wrong id is not taken as the call's answer; the call can
// be cancelled (-32800) and agentls goes on.
func TestUpstreamWrongID(t *testing.T) {
	slow(t)
	t.Parallel()
	srv, s := upstreamLifeOne(t, "wrongid", "wid")
	ch := s.callAsync(map[string]any{"name": "wid__echo", "arguments": map[string]any{"text": "x"}})
	srv.waitCall(t, 10*time.Second)
	select {
	case rep := <-ch:
		if strings.Contains(rep.r.Text(), "up-wrong-answer") {
			t.Fatalf("a reply with a wrong id was taken as the answer: %q", rep.r.Text())
		}
		// A clear error instead of waiting is acceptable.
		wantResult(t, "call answered with a wrong id", rep.r, true, `"wid"`)
	case <-time.After(1500 * time.Millisecond):
		s.cancel(t, ch)
	}
	s.alive(t)
}

type upstreamLifeReply struct {
	r   harness.Result
	err error
}

// callAsync sends tools/call with params; its answer arrives on the channel.
func (s *upstreamLifeSession) callAsync(params map[string]any) chan upstreamLifeReply {
	ch := make(chan upstreamLifeReply, 1)
	go func() {
		var r harness.Result
		_, err := s.c.Conn.Call(context.Background(), "tools/call", params, &r)
		ch <- upstreamLifeReply{r, err}
	}()
	return ch
}

// cancel sends $/cancelRequest for request 2 (the first after initialize)
// and wants the call on ch to answer -32800.
func (s *upstreamLifeSession) cancel(t *testing.T, ch chan upstreamLifeReply) {
	t.Helper()
	if err := s.c.Conn.Notify(s.ctx, "$/cancelRequest", map[string]any{"id": 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case rep := <-ch:
		if rpcCode(rep.err) != -32800 {
			t.Errorf("cancelled call: err %v result %q, want -32800", rep.err, rep.r.Text())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call never answered")
	}
}

// upstreamLifeOne starts agentls with one fake server running mode, named name.
func upstreamLifeOne(t *testing.T, mode, name string, env ...string) (upstreamLifeSrv, *upstreamLifeSession) {
	t.Helper()
	srv := upstreamLifeNewSrv(t, mode)
	ws := newWorkspace(t, nil)
	upstreamLifeConfig(t, ws, "servers", map[string]any{name: srv.entry})
	return srv, upstreamLifeStart(t, ws, env...)
}

// got is the first message with method the server read (nil: none).
func (s upstreamLifeSrv) got(method string) map[string]any {
	b, _ := os.ReadFile(filepath.Join(s.state, "recv"))
	for _, l := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["method"] == method {
			return m
		}
	}
	return nil
}

// waitCall is the server's first tools/call, waited for up to d.
func (s upstreamLifeSrv) waitCall(t *testing.T, d time.Duration) map[string]any {
	t.Helper()
	if !waitUntil(d, func() bool { return s.got("tools/call") != nil }) {
		t.Fatal("upstream never got tools/call")
	}
	return s.got("tools/call")
}

// cancelled says whether the server got notifications/cancelled for call.
func (s upstreamLifeSrv) cancelled(call map[string]any) bool {
	c := s.got("notifications/cancelled")
	p, _ := c["params"].(map[string]any)
	return c != nil && fmt.Sprint(p["requestId"]) == fmt.Sprint(call["id"])
}

// Odd tool lists: every listed name is a valid model tool name
// (^[a-zA-Z0-9_-]{1,64}$, docs/tools.md), listed once; a tool without
// inputSchema has an object schema or is left out; an extension tool that
// takes an upstream tool's prefixed name does not give two tools one name.
func TestUpstreamOddTools(t *testing.T) {
	t.Parallel()
	srv := upstreamLifeNewSrv(t, "odd")
	ws := newWorkspace(t, map[string]string{
		".agentls/tools/odd__fine.json": `{"name": "odd__fine", "description": "fakeup extension that takes the upstream name", "inputSchema": {"type": "object"}, "command": "echo up-extension"}`,
	})
	upstreamLifeConfig(t, ws, "servers", map[string]any{"odd": srv.entry})
	s := upstreamLifeStart(t, ws)
	s.call(t, 10*time.Second, "tool_search", map[string]any{"query": "fakeup", "limit": 20})
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	var listed map[string]bool
	for _, format := range []string{"", "openai", "anthropic"} {
		listed = map[string]bool{}
		for _, n := range s.names(t, format) {
			if !valid.MatchString(n) || listed[n] {
				t.Errorf("format %q: tool name %q (%d chars) is not a valid tool name or is listed twice", format, n, len(n))
			}
			listed[n] = true
		}
		if !listed["odd__echo"] {
			t.Errorf("format %q: odd__echo missing from %v", format, listed)
		}
	}
	if tl := listedTools(t, s.c, s.ctx, map[string]any{"includeDeferred": true})["odd__noschema"]; tl != nil {
		if sc, _ := tl["inputSchema"].(map[string]any); sc["type"] != "object" {
			t.Errorf("odd__noschema listed with inputSchema %v, want an object schema", tl["inputSchema"])
		}
	}
	// The duplicate's first, the extension tool, and renamed tools reaching
	// the upstream tool they stand for.
	long := "odd__" + strings.Repeat("L", 59)
	for tool, want := range map[string]string{"odd__echo": "up-echo:z", "odd__fine": "up-extension", "odd__has_space": "up-has space",
		"odd__noschema": "up-noschema", long: "up-" + strings.Repeat("L", 200)} {
		if tool != long || listed[long] {
			r, _ := s.call(t, 10*time.Second, tool, map[string]any{"text": "z"})
			wantResult(t, tool, r, false, want)
		}
	}
	// docs/tools.md: a tool whose name is taken is not offered, and a
	// window/logMessage says so.
	if !waitUntil(5*time.Second, func() bool {
		return strings.Contains(strings.Join(logMessages(s.c, 0), "\n"), `its tool "fine" is not offered`)
	}) {
		t.Errorf("the name clash odd__fine (extension vs upstream) is not reported to the client; logMessages %q", logMessages(s.c, 0))
	}
	s.alive(t)
}

// A slow upstream tool: its progress reaches the editor as tools/progress
// for the call, $/cancelRequest answers -32800 and sends
// notifications/cancelled upstream with the upstream request's id.
func TestUpstreamCancelAndProgress(t *testing.T) {
	t.Parallel()
	srv, s := upstreamLifeOne(t, "ok", "up")
	ch := s.callAsync(map[string]any{"name": "up__slow", "arguments": map[string]any{}, "callId": "up-slow-1"})
	call := srv.waitCall(t, 10*time.Second)
	meta, _ := call["params"].(map[string]any)["_meta"].(map[string]any)
	if meta["progressToken"] == nil {
		t.Errorf("upstream tools/call carries no progressToken: %v", call["params"])
	} else {
		_, ok := s.c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "tools/progress" && strings.Contains(string(n.Params), "up-slow-1") && strings.Contains(string(n.Params), "fakeup step")
		})
		if !ok {
			t.Errorf("upstream progress not forwarded as tools/progress; notes %v", s.c.Notes("tools/progress"))
		}
	}
	s.cancel(t, ch)
	if !waitUntil(5*time.Second, func() bool { return srv.cancelled(call) }) {
		t.Errorf("upstream got no notifications/cancelled for request %v; got %v", call["id"], srv.got("notifications/cancelled"))
	}
	s.alive(t)
}

// An upstream result is governed like any tool's: a value of a
// secret-looking variable of agentls's environment (which the upstream
// cannot know to mask) is masked, and an image content item passes
// through. (The byte budget cutting any tool's result, with a continuation
// read of the spill file, is TestExtensionToolRunsLikeBash's.)
func TestUpstreamResultsGovernedLikeAnyTool(t *testing.T) {
	t.Parallel()
	secret := fmt.Sprintf("upkey%027d", time.Now().UnixNano())
	_, s := upstreamLifeOne(t, "ok", "up", "UPSTREAM_SERVICE_TOKEN="+secret)
	r, _ := s.call(t, 10*time.Second, "up__echo", map[string]any{"text": "v=" + secret})
	wantResult(t, "up__echo", r, false, "up-echo:v=")
	wantLacks(t, "up__echo", compactJSON(r), secret)
	r, _ = s.call(t, 10*time.Second, "up__image", map[string]any{})
	wantContains(t, "image result text", r.Text(), "up-image")
	i := slices.IndexFunc(r.Content, func(c map[string]any) bool { return c["type"] == "image" })
	if i < 0 {
		t.Fatalf("image content not passed through: %v", r.Content)
	}
	data, _ := r.Content[i]["data"].(string)
	if raw, err := base64.StdEncoding.DecodeString(data); err != nil || !strings.HasPrefix(string(raw), "\x89PNG") || r.Content[i]["mimeType"] != "image/png" {
		t.Errorf("image item %v: decode err %v", r.Content[i], err)
	}
}

// A server's env reaches its process, ${env:NAME} expanded from agentls's
// environment, and a relative command starts from the project folder (as
// Claude Code runs it). The rest of the expansion rules are
// internal/upstream's TestParseConfigTransportsAndExpansion.
func TestUpstreamConfigShapes(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, nil)
	writeFile(t, filepath.Join(ws, "tools", "srv.py"), upstreamLifeServerPy)
	os.Chmod(filepath.Join(ws, "tools", "srv.py"), 0o755)
	upstreamLifeConfig(t, ws, "servers", map[string]any{"relative": map[string]any{"command": "./tools/srv.py",
		"args": upstreamLifeNewSrv(t, "ok").entry["args"], "env": map[string]any{"FAKEUP_VAR": "${env:FAKEUP_FROM_AGENTLS}"}}})
	s := upstreamLifeStart(t, ws, "FAKEUP_FROM_AGENTLS=from-agentls-env")
	r, _ := s.call(t, 15*time.Second, "relative__env", map[string]any{})
	wantResult(t, "relative__env", r, false, "FAKEUP_VAR=from-agentls-env")
}

// A broken mcp.json is reported (window/logMessage naming the file) and
// the core tools and tool_search still work.
func TestUpstreamBrokenConfig(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{"notjson": `{"servers": {"x": {"command": `, "wrongtype": `{"servers": {"x": {"command": 42}}}`} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := upstreamLifeStart(t, newWorkspace(t, map[string]string{".agentls/mcp.json": body}))
			s.alive(t)
			s.call(t, 10*time.Second, "tool_search", map[string]any{"query": "anything"})
			if !waitUntil(3*time.Second, func() bool { return strings.Contains(strings.Join(logMessages(s.c, 0), "\n"), "mcp.json") }) {
				t.Errorf("broken mcp.json not reported by window/logMessage naming it; got %q", logMessages(s.c, 0))
			}
		})
	}
}

// Ending agentls (EOF, shutdown+exit, EOF while an upstream call runs)
// leaves no upstream process alive: one that exits at EOF, one that
// ignores SIGTERM and agentls mcp as upstreams (how a child is ended is
// internal/upstream's TestChildStdinClose).
func TestUpstreamNoOrphans(t *testing.T) {
	slow(t)
	t.Parallel()
	for _, how := range []string{"eof", "shutdown", "eof-mid-call"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			py, stub := upstreamLifeNewSrv(t, "ok"), upstreamLifeNewSrv(t, "stubborn")
			innerWS := newWorkspace(t, map[string]string{"inner.txt": "inner file\n"})
			reapProcessesWithArg(t, innerWS)
			ws := newWorkspace(t, nil)
			upstreamLifeConfig(t, ws, "servers", map[string]any{"py": py.entry, "stub": stub.entry,
				"inner": map[string]any{"command": harness.Binary(t), "args": []any{"mcp", "--root", innerWS}}})
			s := upstreamLifeStart(t, ws)
			// The deadlines are for a hang, not a speed bound: three servers
			// start at once in three subtests on a loaded machine.
			for tool, want := range map[string]string{"py__echo": "up-echo:a", "inner__read": "inner file", "stub__echo": "up-echo:a"} {
				r, _ := s.call(t, 40*time.Second, tool, map[string]any{"text": "a", "path": "inner.txt"})
				wantResult(t, tool, r, false, want)
			}
			markers := []string{py.marker, stub.marker, innerWS}
			for _, m := range markers {
				if len(processesWithArg(m)) == 0 {
					t.Fatalf("upstream %s not running before the end", m)
				}
			}
			switch how {
			case "eof":
				s.c.CloseStdin()
			case "shutdown":
				if code := s.c.Shutdown(s.ctx); code != 0 {
					t.Errorf("exit code %d after shutdown", code)
				}
			case "eof-mid-call":
				go s.c.Conn.Call(context.Background(), "tools/call", map[string]any{"name": "py__slow", "arguments": map[string]any{}}, nil)
				waitUntil(5*time.Second, func() bool { return py.got("tools/call") != nil })
				s.c.CloseStdin()
			}
			// The stubborn server takes its two graces (stdin closed, then
			// SIGTERM ignored) on top of agentls's wind-down: 5 s at best.
			if s.c.Wait(15*time.Second) == -1 {
				t.Errorf("agentls did not exit within 15 s")
			}
			for _, m := range markers {
				if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(m)) == 0 }) {
					t.Errorf("upstream with argument %s still alive 3 s after agentls exited: pids %v", m, processesWithArg(m))
				}
			}
		})
	}
}

// Through `agentls mcp`, an upstream call's progress reaches the MCP client
// as notifications/progress with its token, the client's
// notifications/cancelled reaches the upstream with the upstream request's
// id, and EOF leaves no upstream alive. (Search and calls over MCP are
// test/mcp/aggregation.test.mjs's.)
func TestUpstreamMCPBothDirections(t *testing.T) {
	t.Parallel()
	py := upstreamLifeNewSrv(t, "ok")
	ws := newWorkspace(t, map[string]string{".agentls/settings.json": `{"mode": "bypass"}`})
	upstreamLifeConfig(t, ws, "mcpServers", map[string]any{"py": py.entry})
	m := startMCPRaw(t, []string{"mcp", "--root", ws}, []string{"XDG_CACHE_HOME=" + t.TempDir()})
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "fakeup", "version": "1"}}})
	m.mustReply(1, 10*time.Second)
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{"name": "py__slow", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "up-tok"}}})
	call := py.waitCall(t, 20*time.Second)
	if _, ok := m.wait(5*time.Second, func(v mcpMsg) bool {
		p, _ := v.Obj["params"].(map[string]any)
		return v.Method == "notifications/progress" && p["progressToken"] == "up-tok"
	}); !ok {
		t.Errorf("upstream progress not forwarded to the MCP client")
	}
	m.sendJSON(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 5, "reason": "fakeup"}})
	if !waitUntil(5*time.Second, func() bool { return py.cancelled(call) }) {
		t.Errorf("MCP notifications/cancelled not forwarded upstream")
	}
	if !waitUntil(3*time.Second, func() bool { _, err := os.Stat(filepath.Join(py.state, "cancelled")); return err == nil }) {
		t.Errorf("upstream slow call did not see its cancellation")
	}
	m.stdin.Close()
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("agentls mcp did not exit at EOF")
	}
	if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(py.marker)) == 0 }) {
		t.Errorf("the upstream is alive after agentls mcp exited: %v", processesWithArg(py.marker))
	}
}

// Editing .agentls/mcp.json while the server runs starts and stops upstream
// servers; their tools come and go with them and the removed server's
// process ends.
func TestUpstreamServersFollowMCPJSON(t *testing.T) {
	t.Parallel()
	first, second := upstreamLifeNewSrv(t, "ok"), upstreamLifeNewSrv(t, "ok")
	ws := newWorkspace(t, nil)
	upstreamLifeConfig(t, ws, "mcpServers", map[string]any{"first": first.entry})
	s := upstreamLifeStart(t, ws)
	r, _ := s.call(t, 15*time.Second, "first__echo", map[string]any{"text": "1"})
	wantResult(t, "first__echo", r, false, "up-echo:1")
	upstreamLifeConfig(t, ws, "mcpServers", map[string]any{"second": second.entry})
	if !waitUntil(15*time.Second, func() bool {
		l := s.names(t, "")
		return !slices.Contains(l, "first__echo") && slices.Contains(l, "second__echo")
	}) {
		t.Fatalf("first__echo not gone or second__echo not listed: %v", s.names(t, ""))
	}
	r, _ = s.call(t, 10*time.Second, "first__echo", map[string]any{"text": "2"})
	wantResult(t, "a removed server's tool", r, true)
	r, _ = s.call(t, 10*time.Second, "second__echo", map[string]any{"text": "3"})
	wantResult(t, "second__echo", r, false, "up-echo:3")
	if !waitUntil(5*time.Second, func() bool { return len(processesWithArg(first.marker)) == 0 }) {
		t.Errorf("the removed server's process is alive: %v", processesWithArg(first.marker))
	}
}

// Upstream servers start in the background; a tool_search or a call of one
// of their tools right after initialize waits for their first listing
// instead of missing them.
func TestSearchRightAfterStartSeesASlowUpstream(t *testing.T) {
	slow(t)
	t.Parallel()
	srv := upstreamLifeNewSrv(t, "ok")
	ws := newWorkspace(t, nil)
	upstreamLifeConfig(t, ws, "servers", map[string]any{"slow": map[string]any{
		"command": "sh", "args": append([]any{"-c", `sleep 1; exec "$0" "$@"`, srv.entry["command"]}, srv.entry["args"].([]any)...)}})
	s := upstreamLifeStart(t, ws)
	r, _ := s.call(t, 20*time.Second, "tool_search", map[string]any{"query": "fakeup echo"})
	wantResult(t, "tool_search right after start", r, false, "slow__echo")
	r, _ = s.call(t, 20*time.Second, "slow__echo", map[string]any{"text": "late"})
	wantResult(t, "slow__echo", r, false, "up-echo:late")
}
