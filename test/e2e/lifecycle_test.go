package e2e

// Contract tests of issue 2 (transport, lifecycle, registry,
// normalize/validate, executor, paths, read), written from
// shared/docs/tools.md, docs/protocol.md and the acceptance list.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// lifecycleStart starts agentls on root and initializes it with params (nil: defaults).
func lifecycleStart(t *testing.T, root string, params map[string]any, env ...string) (*harness.Client, context.Context) {
	t.Helper()
	c := harness.Start(t, harness.Options{Root: root, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	c.Initialize(ctx, params)
	return c, ctx
}

// lifecycleRaw is a hand-framed JSON-RPC connection to agentls, for what the
// jsonrpc2 client hides: request ids, raw bytes, reply codes after a cancel.
type lifecycleRaw struct{ *rawClient[map[string]any] }

func lifecycleStartRaw(t *testing.T, root string, env ...string) *lifecycleRaw {
	t.Helper()
	return &lifecycleRaw{startRaw(t, []string{"--root", root}, env, lifecycleReadFrames)}
}

// lifecycleReadFrames parses stdout, noting header lines other than
// Content-Length and Content-Type and bodies that are not JSON.
func lifecycleReadFrames(br *bufio.Reader, r *rawClient[map[string]any]) {
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if line != "" {
					r.noteBad(line)
				}
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			} else if !strings.HasPrefix(line, "Content-Type:") {
				r.noteBad(line)
			}
		}
		if n < 0 {
			r.noteBad("header without Content-Length")
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			r.noteBad(string(body))
			continue
		}
		r.add(m)
	}
}

func (r *lifecycleRaw) sendBytes(body []byte) {
	r.t.Helper()
	if err := r.writeFrame(body); err != nil {
		r.t.Fatalf("write frame: %v", err)
	}
}

func (r *lifecycleRaw) send(id any, method string, params any) {
	r.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != nil {
		m["id"] = id
	}
	b, err := json.Marshal(m)
	if err != nil {
		r.t.Fatal(err)
	}
	r.sendBytes(b)
}

func (r *lifecycleRaw) reply(id float64, timeout time.Duration) (map[string]any, bool) {
	return r.wait(timeout, func(f map[string]any) bool {
		v, ok := f["id"].(float64)
		_, hasMethod := f["method"]
		return ok && v == id && !hasMethod
	})
}

func (r *lifecycleRaw) initialize() {
	r.t.Helper()
	r.send(0, "initialize", map[string]any{"capabilities": map[string]any{}})
	if f, ok := r.reply(0, 20*time.Second); !ok || f["error"] != nil {
		r.t.Fatalf("initialize: %v", f)
	}
	r.send(nil, "initialized", map[string]any{})
}

func lifecycleResultText(f map[string]any) string {
	res, _ := f["result"].(map[string]any)
	parts, _ := res["content"].([]any)
	var sb strings.Builder
	for _, p := range parts {
		if m, _ := p.(map[string]any); m["type"] == "text" {
			sb.WriteString(fmt.Sprint(m["text"]))
		}
	}
	return sb.String()
}

func TestLifecycleLifecycleExitsZero(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"src/config.ts": "export const a = 1;\nexport const b = 2;\n"})
	c := harness.Start(t, harness.Options{Root: ws})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := c.Initialize(ctx, map[string]any{"rootUri": "file://" + ws, "clientInfo": map[string]any{"name": "audit"}})

	si, _ := res["serverInfo"].(map[string]any)
	if si["name"] != "agentls" || fmt.Sprint(si["version"]) == "" || si["version"] == nil {
		t.Errorf("serverInfo = %v, want name agentls and a version", si)
	}
	caps, _ := res["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	ag, _ := exp["agentls"].(map[string]any)
	if ag["protocolVersion"] == nil || ag["protocolVersion"] == "" {
		t.Errorf("capabilities.experimental.agentls.protocolVersion missing: %v", ag)
	}
	names := fmt.Sprint(ag["tools"])
	for _, tool := range []string{"read", "ls", "grep", "find"} {
		if !strings.Contains(names, tool) {
			t.Errorf("capabilities.experimental.agentls.tools = %v, lacks %s", ag["tools"], tool)
		}
	}
	checkWatcherStart(t, ag, c.WatcherMode)
	instr, _ := res["instructions"].(string)
	for _, w := range []string{"read", "edit", "oldText", "cat", "grep", "find"} {
		if !strings.Contains(instr, w) {
			t.Errorf("instructions lack %q (docs/tools.md lists what they must say): %q", w, instr)
		}
	}

	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 || list.Tools[0]["name"] == nil {
		t.Fatalf("tools/list: %v", list)
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "src/config.ts"})
	if r.IsError || !strings.HasPrefix(r.Text(), "src/config.ts, lines 1-2 of 2") {
		t.Errorf("read: %+v", r)
	}
	if code := c.Shutdown(ctx); code != 0 {
		t.Errorf("exit code after shutdown+exit = %d, want 0", code)
	}
}

func TestLifecycleTwoHundredCallsAndCancel(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("f%03d.txt", i)] = fmt.Sprintf("content-%03d\n", i)
	}
	ws := resolvedWorkspace(t, files)
	r := lifecycleStartRaw(t, ws)
	r.initialize()

	r.send(1000, "tools/call", map[string]any{"name": "test_block", "arguments": map[string]any{}, "callId": "blocker"})
	for i := range 100 {
		r.send(i+1, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": fmt.Sprintf("f%03d.txt", i)}})
	}
	if _, ok := r.wait(10*time.Second, func(f map[string]any) bool {
		p, _ := f["params"].(map[string]any)
		return f["method"] == "tools/progress" && p["callId"] == "blocker"
	}); !ok {
		t.Fatal("test_block never reported it was running")
	}
	sent := time.Now()
	r.send(nil, "$/cancelRequest", map[string]any{"id": 1000})
	f, ok := r.reply(1000, 5*time.Second)
	took := time.Since(sent)
	if !ok {
		t.Fatal("no reply to the cancelled call")
	}
	if replyCode(f) != -32800 {
		t.Errorf("cancelled call replied %v, want error -32800", f)
	}
	if took > 100*time.Millisecond {
		t.Errorf("cancelled call replied after %v, want within 100 ms", took)
	}
	for i := 100; i < 200; i++ {
		r.send(i+1, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": fmt.Sprintf("f%03d.txt", i)}})
	}
	for i := range 200 {
		f, ok := r.reply(float64(i+1), 20*time.Second)
		if !ok {
			t.Fatalf("no reply to call %d", i+1)
		}
		want := fmt.Sprintf("f%03d.txt, lines 1-1 of 1\n     1→content-%03d", i, i)
		if got := lifecycleResultText(f); !strings.Contains(got, want) {
			t.Errorf("call %d: got %q, want %q", i+1, got, want)
		}
	}
}

// lifecycleProcs lists pids whose command line contains arg.
func lifecycleProcs(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestLifecycleClosingStdinCancelsAndExits(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	c, ctx := lifecycleStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	// A running command shows that the call's context really is cancelled.
	const marker = "317.913"
	go c.TryCallTool(ctx, "bash", map[string]any{"command": "sleep " + marker})
	go c.TryCallTool(ctx, "test_block", map[string]any{})
	if _, ok := c.WaitNote(10*time.Second, func(n harness.Note) bool {
		return n.Method == "tools/progress" && strings.Contains(string(n.Params), "test_block")
	}); !ok {
		t.Fatal("test_block never started")
	}
	if !waitUntil(10*time.Second, func() bool { return len(lifecycleProcs(marker)) > 0 }) {
		t.Fatal("bash command never started")
	}
	closed := time.Now()
	c.CloseStdin()
	if code := c.Wait(5 * time.Second); code == -1 {
		t.Fatal("process still running 5 s after stdin closed")
	}
	if took := time.Since(closed); took > time.Second {
		t.Errorf("process exited %v after stdin closed, want within 1 s", took)
	}
	if pids := lifecycleProcs(marker); len(pids) > 0 {
		for _, p := range pids {
			if pr, err := os.FindProcess(p); err == nil {
				pr.Kill()
			}
		}
		t.Errorf("the running command survived stdin EOF: pids %v", pids)
	}
}

func TestLifecycleInvalidUTF8OnTheWire(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"ok.txt": "fine\n", "bad.txt": "caf\xe9 au lait\n\xff\xfe\xfd end\n"})
	if err := os.WriteFile(filepath.Join(ws, "name\xff.txt"), []byte("odd name\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := lifecycleStartRaw(t, ws)
	r.initialize()

	r.send(1, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "bad.txt"}})
	f, ok := r.reply(1, 10*time.Second)
	if !ok {
		t.Fatal("no reply to read of an invalid UTF-8 file")
	}
	text := lifecycleResultText(f)
	wantContains(t, "read bad.txt", text, "caf\uFFFD au lait", "\uFFFD end")
	if !regexp.MustCompile(`(?i)utf-?8`).MatchString(text) {
		t.Errorf("read of invalid UTF-8: no note about it (docs/tools.md: shown with U+FFFD and a note):\n%s", text)
	}

	// A request whose JSON strings hold invalid UTF-8 still gets a reply.
	r.sendBytes([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"bad` + "\xff" + `.txt"}}}`))
	if f, ok := r.reply(2, 10*time.Second); !ok {
		t.Error("no reply to a request with invalid UTF-8 in a string")
	} else if f["result"] == nil && f["error"] == nil {
		t.Errorf("reply without result or error: %v", f)
	}
	// A directory listing with a non-UTF-8 file name.
	r.send(3, "tools/call", map[string]any{"name": "ls", "arguments": map[string]any{}})
	if f, ok := r.reply(3, 10*time.Second); !ok || !strings.Contains(lifecycleResultText(f), "ok.txt") {
		t.Errorf("ls with a non-UTF-8 name: %v", f)
	}
	r.send(4, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "ok.txt"}})
	if f, ok := r.reply(4, 10*time.Second); !ok || !strings.Contains(lifecycleResultText(f), "1→fine") {
		t.Errorf("connection did not survive: %v", f)
	}
	if bad := r.badFrames(); len(bad) > 0 {
		t.Errorf("stdout carried non-frames: %q", bad)
	}
}

func TestLifecycleStdoutCarriesOnlyFrames(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	r := lifecycleStartRaw(t, ws, "AGENTLS_LOG_LEVEL=debug")
	r.initialize()
	for i, call := range []map[string]any{
		{"name": "read", "arguments": map[string]any{"path": "a.txt"}},
		{"name": "test_panic", "arguments": map[string]any{}},
		{"name": "nope", "arguments": map[string]any{}},
	} {
		r.send(i+1, "tools/call", call)
		if _, ok := r.reply(float64(i+1), 10*time.Second); !ok {
			t.Fatalf("no reply to %v", call)
		}
	}
	r.send(9, "no/such/method", map[string]any{})
	if f, ok := r.reply(9, 10*time.Second); !ok || replyCode(f) != -32601 {
		t.Errorf("unknown method: %v, want -32601", f)
	}
	r.send(10, "tools/list", []any{}) // Neovim sends {} as []
	if f, ok := r.reply(10, 10*time.Second); !ok || f["error"] != nil {
		t.Errorf("tools/list with params []: %v", f)
	}
	r.send(11, "tools/call", map[string]any{"name": "ls", "arguments": []any{}})
	if f, ok := r.reply(11, 10*time.Second); !ok || !strings.Contains(lifecycleResultText(f), "a.txt") {
		t.Errorf("ls with arguments []: %v", f)
	}
	r.send(12, "shutdown", nil)
	r.reply(12, 10*time.Second)
	r.send(nil, "exit", nil)
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("no exit")
	}
	if bad := r.badFrames(); len(bad) > 0 {
		t.Errorf("stdout carried non-frames: %q", bad)
	}
}

func TestLifecycleInputNormalizationAndErrors(t *testing.T) {
	t.Parallel()
	var twenty strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&twenty, "line %d\n", i)
	}
	ws := resolvedWorkspace(t, map[string]string{"a.txt": twenty.String(), "g.txt": "Hello World\n"})
	c, ctx := lifecycleStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "acceptEdits"}})

	cases := []struct {
		name    string
		tool    string
		args    any
		isError bool
		wants   []string
		check   func(t *testing.T, r harness.Result)
	}{
		{name: "unknown tool lists tools and the closest name", tool: "raed", args: map[string]any{"path": "a.txt"},
			isError: true, wants: []string{`"raed"`, `"read"`, "read", "grep", "find", "ls"}},
		{name: "missing required field names it", tool: "read", args: map[string]any{},
			isError: true, wants: []string{"`path`", "missing"}},
		{name: "wrong type names field and what was received", tool: "read", args: map[string]any{"path": "a.txt", "offset": "abc"},
			isError: true, wants: []string{"`offset`", `"abc"`}},
		{name: "wrong type of path", tool: "read", args: map[string]any{"path": 5},
			isError: true, wants: []string{"`path`", "number"}},
		{name: "negative offset says what to send", tool: "read", args: map[string]any{"path": "a.txt", "offset": -3},
			isError: true, wants: []string{"`offset`", "≥ 1", "got -3", "line number"}},
		{name: "extra fields are dropped and reported", tool: "read", args: map[string]any{"path": "a.txt", "foo": 1, "colour": "red"},
			wants: []string{"a.txt, lines 1-20 of 20"}, check: func(t *testing.T, r harness.Result) {
				n := fmt.Sprint(r.Details["normalized"])
				if !strings.Contains(n, "foo") || !strings.Contains(n, "colour") {
					t.Errorf("details.normalized = %v, want foo and colour listed", r.Details["normalized"])
				}
			}},
		{name: "numeric string limit", tool: "read", args: map[string]any{"path": "a.txt", "limit": "10"},
			wants: []string{"a.txt, lines 1-10 of 20", "offset=11"}, check: func(t *testing.T, r harness.Result) {
				if r.Details["normalized"] == nil {
					t.Errorf("details.normalized missing for a converted limit: %v", r.Details)
				}
			}},
		{name: "numeric string offset", tool: "read", args: map[string]any{"path": "a.txt", "offset": "19"},
			wants: []string{"a.txt, lines 19-20 of 20", "    19→line 19"}},
		{name: "file_path alias", tool: "read", args: map[string]any{"file_path": "a.txt", "limit": 1},
			wants: []string{"a.txt, lines 1-1 of 20"}},
		{name: "filePath alias", tool: "read", args: map[string]any{"filePath": "a.txt", "limit": 1},
			wants: []string{"a.txt, lines 1-1 of 20"}},
		{name: "boolean string", tool: "grep", args: map[string]any{"pattern": "hello world", "ignoreCase": "true"},
			wants: []string{"g.txt:1: Hello World"}},
		{name: "boolean string false", tool: "grep", args: map[string]any{"pattern": "hello world", "ignoreCase": "false"},
			check: func(t *testing.T, r harness.Result) {
				if strings.Contains(r.Text(), "g.txt:1:") {
					t.Errorf(`ignoreCase "false" matched case-insensitively: %s`, r.Text())
				}
			}},
		{name: "JSON string where an array is expected", tool: "edit",
			args: map[string]any{"path": "a.txt", "dryRun": true, "edits": `[{"oldText":"line 7\n","newText":"LINE SEVEN\n"}]`},
			check: func(t *testing.T, r harness.Result) {
				if !strings.Contains(fmt.Sprint(r.Details["unifiedDiff"]), "+LINE SEVEN") {
					t.Errorf("edits given as a JSON string were not parsed: %s %v", r.Text(), r.Details)
				}
			}},
	}
	c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}) // read stamp for the edit case
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.TryCallTool(ctx, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("tool failure became a protocol error: %v", err)
			}
			if r.IsError != tc.isError {
				t.Errorf("isError = %v, want %v: %s", r.IsError, tc.isError, r.Text())
			}
			wantContains(t, tc.name, r.Text(), tc.wants...)
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); strings.Contains(string(b), "SEVEN") {
		t.Error("dryRun wrote the file")
	}
}

// lifecycleWalkSchema reports null unions, type arrays and $refs anywhere in a schema.
func lifecycleWalkSchema(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			switch k {
			case "$ref", "$defs", "definitions":
				t.Errorf("%s: schema has %s", where, k)
			case "type":
				if _, ok := sub.(string); !ok {
					t.Errorf("%s: type is not a plain string: %v", where, sub)
				}
				if sub == "array" && x["items"] == nil {
					t.Errorf("%s: array without items", where)
				}
			case "anyOf", "oneOf":
				if strings.Contains(fmt.Sprint(sub), "null") {
					t.Errorf("%s: null union %v", where, sub)
				}
			case "nullable":
				t.Errorf("%s: nullable", where)
			}
			lifecycleWalkSchema(t, where+"."+k, sub)
		}
	case []any:
		for i, sub := range x {
			lifecycleWalkSchema(t, fmt.Sprintf("%s[%d]", where, i), sub)
		}
	}
}

func TestLifecycleToolsListFormats(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, nil)
	c, ctx := lifecycleStart(t, ws, nil)
	list := func(params any) []map[string]any {
		t.Helper()
		var res struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", params, &res); err != nil {
			t.Fatalf("tools/list %v: %v", params, err)
		}
		if len(res.Tools) < 4 {
			t.Fatalf("tools/list %v: %d tools", params, len(res.Tools))
		}
		return res.Tools
	}
	core := []string{"read", "ls", "grep", "find", "edit", "write", "bash", "tool_search"}
	checkNames := func(format string, names []string) {
		for _, want := range core {
			found := false
			for _, n := range names {
				found = found || n == want
			}
			if !found {
				t.Errorf("%s: %s missing from %v", format, want, names)
			}
		}
	}

	var names []string
	byName := map[string]map[string]any{}
	for _, tool := range list(map[string]any{}) {
		name, _ := tool["name"].(string)
		names = append(names, name)
		byName[name] = tool
		if d, _ := tool["description"].(string); d == "" {
			t.Errorf("mcp %s: empty description", name)
		}
		schema, _ := tool["inputSchema"].(map[string]any)
		if schema["type"] != "object" {
			t.Errorf("mcp %s: inputSchema type %v", name, schema["type"])
		}
		lifecycleWalkSchema(t, "mcp "+name, schema)
		ann, _ := tool["annotations"].(map[string]any)
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[k].(bool); !ok {
				t.Errorf("mcp %s: annotations.%s = %v", name, k, ann[k])
			}
		}
		meta, _ := tool["_meta"].(map[string]any)
		for _, k := range []string{"concurrencySafe", "deferred"} {
			if _, ok := meta[k].(bool); !ok {
				t.Errorf("mcp %s: _meta.%s = %v", name, k, meta[k])
			}
		}
	}
	checkNames("mcp", names)
	if a, _ := byName["read"]["annotations"].(map[string]any); a["readOnlyHint"] != true || a["destructiveHint"] != false {
		t.Errorf("read annotations = %v", a)
	}
	if m, _ := byName["read"]["_meta"].(map[string]any); m["concurrencySafe"] != true {
		t.Errorf("read _meta = %v", m)
	}
	if a, _ := byName["write"]["annotations"].(map[string]any); a["readOnlyHint"] != false {
		t.Errorf("write annotations = %v", a)
	}
	if s, _ := byName["read"]["inputSchema"].(map[string]any); !strings.Contains(fmt.Sprint(s["required"]), "path") {
		t.Errorf("read schema does not require path: %v", s)
	}

	names = nil
	for _, tool := range list(map[string]any{"format": "openai"}) {
		fn, _ := tool["function"].(map[string]any)
		if tool["type"] != "function" || fn == nil {
			t.Errorf("openai: %v", tool)
			continue
		}
		name, _ := fn["name"].(string)
		names = append(names, name)
		if d, _ := fn["description"].(string); d == "" {
			t.Errorf("openai %s: no description", name)
		}
		p, _ := fn["parameters"].(map[string]any)
		if p["type"] != "object" {
			t.Errorf("openai %s: parameters %v", name, p)
		}
		lifecycleWalkSchema(t, "openai "+name, p)
	}
	checkNames("openai", names)

	names = nil
	for _, tool := range list(map[string]any{"format": "anthropic"}) {
		name, _ := tool["name"].(string)
		names = append(names, name)
		s, _ := tool["input_schema"].(map[string]any)
		if s["type"] != "object" || tool["description"] == nil {
			t.Errorf("anthropic %s: %v", name, tool)
		}
		for k := range tool {
			if k != "name" && k != "description" && k != "input_schema" {
				t.Errorf("anthropic %s: extra key %q would be rejected by the API", name, k)
			}
		}
		lifecycleWalkSchema(t, "anthropic "+name, s)
	}
	checkNames("anthropic", names)

	var res map[string]any
	if err := c.Call(ctx, "tools/list", map[string]any{"format": "yaml"}, &res); rpcCode(err) != -32602 {
		t.Errorf("unknown format: err %v, want -32602", err)
	}

	for _, format := range []string{"mcp", "openai", "anthropic"} {
		out, err := harness.Command(t, []string{"tools", "--format", format}).Output()
		if err != nil {
			t.Fatalf("agentls tools --format %s: %v", format, err)
		}
		var tools []map[string]any
		if err := json.Unmarshal(out, &tools); err != nil || len(tools) < len(core) {
			t.Errorf("agentls tools --format %s: %v, %d tools", format, err, len(tools))
		}
	}
}

func TestLifecycleCLI(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "hello\n"})
	out, err := harness.Command(t, []string{"--version"}).Output()
	if err != nil || !strings.Contains(string(out), "agentls") {
		t.Errorf("--version: %q %v", out, err)
	}
	cmd := harness.Command(t, []string{"call", "read", `{"path":"a.txt"}`, "--root", ws})
	out, err = cmd.Output()
	if err != nil || string(out) != "a.txt, lines 1-1 of 1\n     1→hello\n" && !strings.HasPrefix(string(out), "a.txt, lines 1-1 of 1\n     1→hello") {
		t.Errorf("call read: %q %v", out, err)
	}
	cmd = harness.Command(t, []string{"call", "read", `{"path":"missing.txt"}`, "--root", ws})
	out, err = cmd.Output()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "missing.txt") {
		t.Errorf("call read of a missing file: exit %d, %q", cmd.ProcessState.ExitCode(), out)
	}
}

func TestLifecyclePanicIsAResult(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	c, ctx := lifecycleStart(t, ws, nil)
	r, err := c.TryCallTool(ctx, "test_panic", map[string]any{})
	if err != nil || !r.IsError || !strings.Contains(r.Text(), "test_panic") {
		t.Errorf("panic: %+v %v", r, err)
	}
	if r := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"}); r.IsError {
		t.Errorf("server did not survive the panic: %s", r.Text())
	}
}

func TestLifecycleCallIDAndDetails(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	c, ctx := lifecycleStart(t, ws, nil)
	var r harness.Result
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}, "callId": "mine-7"}, &r); err != nil {
		t.Fatal(err)
	}
	if r.CallID != "mine-7" {
		t.Errorf("callId = %q, want echoed mine-7", r.CallID)
	}
	if _, ok := r.Details["durationMs"].(float64); !ok {
		t.Errorf("details.durationMs missing: %v", r.Details)
	}
	r2 := c.CallTool(ctx, "read", map[string]any{"path": "a.txt"})
	r3 := c.CallTool(ctx, "nope", map[string]any{})
	if r2.CallID == "" || r3.CallID == "" || r2.CallID == r3.CallID {
		t.Errorf("generated callIds %q %q: want distinct, non-empty", r2.CallID, r3.CallID)
	}
	if _, ok := r3.Details["durationMs"].(float64); !ok {
		t.Errorf("error result lacks details.durationMs: %v", r3.Details)
	}
}

func TestLifecycleCallBatch(t *testing.T) {
	slow(t)
	// Not parallel: it times calls running side by side, which busy neighbours on 2 cores stretch.
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	c, ctx := lifecycleStart(t, ws, map[string]any{"initializationOptions": map[string]any{"mode": "bypass"}})
	type batch struct {
		Results []harness.Result `json:"results"`
	}
	call := func(name string, args any, id string) map[string]any {
		return map[string]any{"name": name, "arguments": args, "callId": id}
	}
	t.Run("order, ids and isolated failures", func(t *testing.T) {
		var b batch
		err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			call("read", map[string]any{"path": "b.txt"}, "c1"),
			call("test_panic", map[string]any{}, "c2"),
			call("nope", map[string]any{}, "c3"),
			call("read", map[string]any{"path": "missing.txt"}, "c4"),
			call("read", map[string]any{"path": "a.txt"}, "c5"),
		}}, &b)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Results) != 5 {
			t.Fatalf("%d results", len(b.Results))
		}
		wantErr := []bool{false, true, true, true, false}
		for i, r := range b.Results {
			if r.CallID != fmt.Sprintf("c%d", i+1) || r.IsError != wantErr[i] {
				t.Errorf("result %d: callId %q isError %v: %s", i, r.CallID, r.IsError, r.Text())
			}
		}
		if !strings.Contains(b.Results[0].Text(), "1→beta") || !strings.Contains(b.Results[4].Text(), "1→alpha") {
			t.Errorf("results out of order: %q / %q", b.Results[0].Text(), b.Results[4].Text())
		}
	})
	t.Run("a non-safe call runs after everything before it", func(t *testing.T) {
		var b batch
		err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": []any{
			call("bash", map[string]any{"command": "sleep 0.4; echo written > order.txt"}, "w"),
			call("read", map[string]any{"path": "order.txt"}, "r"),
		}}, &b)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Results) != 2 || !strings.Contains(b.Results[1].Text(), "1→written") {
			t.Errorf("read after a non-safe call did not see its effect: %+v", b.Results)
		}
	})
	t.Run("concurrency-safe calls run in parallel", func(t *testing.T) {
		var calls []any
		for i := range 4 {
			calls = append(calls, call("bash", map[string]any{"command": "sleep 1"}, fmt.Sprintf("s%d", i)))
		}
		start := time.Now()
		var b batch
		if err := c.Call(ctx, "tools/callBatch", map[string]any{"calls": calls}, &b); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("4 read-only `sleep 1` calls took %v: not run in parallel", took)
		}
		for _, r := range b.Results {
			if r.IsError {
				t.Errorf("%s: %s", r.CallID, r.Text())
			}
		}
	})
}

func TestLifecycleInitializeParams(t *testing.T) {
	t.Parallel()
	ws1 := resolvedWorkspace(t, map[string]string{"one.txt": "one\n"})
	ws2 := resolvedWorkspace(t, map[string]string{"two.txt": "two\n"})
	other := resolvedWorkspace(t, map[string]string{"x.txt": "x\n"})

	t.Run("workspaceFolders win over --root", func(t *testing.T) {
		c, ctx := lifecycleStart(t, other, map[string]any{"workspaceFolders": []any{
			map[string]any{"uri": "file://" + ws1, "name": "one"},
			map[string]any{"uri": "file://" + ws2, "name": "two"},
		}})
		if r := c.CallTool(ctx, "read", map[string]any{"path": "one.txt"}); r.IsError {
			t.Errorf("relative path not against the first folder: %s", r.Text())
		}
		if r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(ws2, "two.txt")}); r.IsError {
			t.Errorf("absolute path in the second folder: %s", r.Text())
		}
		if r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(other, "x.txt")}); !r.IsError {
			t.Errorf("--root still served although the client named folders: %s", r.Text())
		}
	})
	t.Run("rootUri", func(t *testing.T) {
		c, ctx := lifecycleStart(t, other, map[string]any{"rootUri": "file://" + ws2})
		if r := c.CallTool(ctx, "read", map[string]any{"path": "two.txt"}); r.IsError {
			t.Errorf("rootUri ignored: %s", r.Text())
		}
	})
	t.Run("didChangeWorkspaceFolders", func(t *testing.T) {
		c, ctx := lifecycleStart(t, other, map[string]any{"workspaceFolders": []any{map[string]any{"uri": "file://" + ws1, "name": "one"}}})
		p := filepath.Join(ws2, "two.txt")
		if r := c.CallTool(ctx, "read", map[string]any{"path": p}); !r.IsError {
			t.Fatalf("folder not yet added is readable: %s", r.Text())
		}
		if err := c.Conn.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
			"added":   []any{map[string]any{"uri": "file://" + ws2, "name": "two"}},
			"removed": []any{map[string]any{"uri": "file://" + ws1, "name": "one"}},
		}}); err != nil {
			t.Fatal(err)
		}
		// A notification has no reply: the next request is ordered after it.
		var r harness.Result
		deadline := time.Now().Add(5 * time.Second)
		for {
			r = c.CallTool(ctx, "read", map[string]any{"path": p})
			if !r.IsError || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if r.IsError {
			t.Errorf("added folder not readable: %s", r.Text())
		}
		if r := c.CallTool(ctx, "read", map[string]any{"path": filepath.Join(ws1, "one.txt")}); !r.IsError {
			t.Errorf("removed folder still readable: %s", r.Text())
		}
	})
	t.Run("invalid initializationOptions name the field", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			opts  map[string]any
			field string
		}{
			{"mode", map[string]any{"mode": "yolo"}, "mode"},
			{"permissions", map[string]any{"permissions": map[string]any{"allow": "Bash"}}, "allow"},
			{"negative limit", map[string]any{"limits": map[string]any{"read": -1}}, "limits"},
		} {
			c := harness.Start(t, harness.Options{Root: ws1})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			var res map[string]any
			err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": tc.opts}, &res)
			cancel()
			if rpcCode(err) != -32602 || !strings.Contains(fmt.Sprint(err), tc.field) {
				t.Errorf("%s: err %v, want -32602 naming %q", tc.name, err, tc.field)
			}
		}
	})
	t.Run("initializationOptions [] (Lua's empty table)", func(t *testing.T) {
		c := harness.Start(t, harness.Options{Root: ws1})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var res map[string]any
		if err := c.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": []any{}}, &res); err != nil {
			t.Errorf("initializationOptions []: %v", err)
		}
	})
}

// lifecyclePathFixture builds <dir>/ws (the workspace) next to <dir>/ws2, a sibling
// whose name has the workspace's name as a prefix, holding a secret.
func lifecyclePathFixture(t *testing.T) (ws, sibling string) {
	t.Helper()
	dir := resolvedWorkspace(t, map[string]string{
		"ws/in.txt":      "inside\n",
		"ws/my file.txt": "spaced\n",
		"ws/sub/x.txt":   "x\n",
		"ws2/s.txt":      "SECRET-SIBLING\n",
	})
	ws, sibling = filepath.Join(dir, "ws"), filepath.Join(dir, "ws2")
	links := map[string]string{
		"pl":       "/etc/passwd",
		"sib":      "../ws2",
		"sibabs":   sibling,
		"chain1":   "/etc",
		"sub/deep": "../chain1",
		"dang":     "/nonexistent-agentls/x",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"selfloop": "selfloop",
		"rootlink": "/",
		"inabs":    filepath.Join(ws, "in.txt"),
		"indir":    "sub",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, sibling
}

func TestLifecyclePathResolverRefusesHostileInputs(t *testing.T) {
	t.Parallel()
	ws, sibling := lifecyclePathFixture(t)
	c, ctx := lifecycleStart(t, ws, nil)
	const (
		climb   = `(?i)\.\.|outside`
		outside = `(?i)outside`
		link    = `(?i)symlink|outside`
		loop    = `(?i)loop`
		home    = `~|(?i)home`
		nul     = `(?i)NUL`
		device  = `(?i)device|kernel|not a regular|outside`
	)
	cases := []struct{ path, why string }{
		{"../ws2/s.txt", climb},
		{"../../../../../../../etc/passwd", climb},
		{"sub/../../ws2/s.txt", climb},
		{"./../ws2/s.txt", climb},
		{"sub/../../../../etc/passwd", climb},
		{"in.txt/../../ws2/s.txt", climb},
		{"indir/../../ws2/s.txt", climb},
		{"/etc/passwd", outside},
		{"//etc/passwd", outside},
		{"/tmp/../etc/passwd", outside},
		{sibling + "/s.txt", outside},             // the sibling-prefix trap
		{ws + "2/s.txt", outside},                 // spelled as the root plus "2"
		{ws + "/../ws2/s.txt", climb},             // absolute with a climb
		{"file://" + sibling + "/s.txt", outside}, // URI form
		{"pl", link},                              // symlink to /etc/passwd
		{"sib/s.txt", link},                       // relative symlink to a sibling dir
		{"sibabs/s.txt", link},                    // absolute symlink to a sibling dir
		{"sub/deep/passwd", link},                 // symlink chain ending outside
		{"rootlink/etc/passwd", link},             // symlink to /
		{"dang", link},                            // dangling symlink pointing outside
		{"loop1", loop},                           // symlink loop
		{"selfloop", loop},                        // self loop
		{"~", home},                               // home
		{"~/.bashrc", home},                       // home-relative
		{"~root/.bashrc", home},                   // another user's home
		{"in.txt\x00.png", nul},                   // NUL byte
		{"\x00", nul},                             // only a NUL byte
		{"/dev/zero", device},                     // device
		{"/proc/self/environ", device},            // kernel file
		{"/sys/kernel/mm/transparent_hugepage/enabled", device},
		{"@../ws2/s.txt", climb}, // leading @ does not help
	}
	if len(cases) < 25 {
		t.Fatalf("only %d hostile inputs", len(cases))
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.path, "\x00", "NUL"), func(t *testing.T) {
			r, err := c.TryCallTool(ctx, "read", map[string]any{"path": tc.path})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			text := r.Text()
			if !r.IsError {
				t.Fatalf("read %q was not refused:\n%s", tc.path, text)
			}
			if strings.Contains(text, "SECRET-SIBLING") || strings.Contains(text, "root:") {
				t.Fatalf("read %q escaped:\n%s", tc.path, text)
			}
			if !regexp.MustCompile(tc.why).MatchString(text) {
				t.Errorf("read %q: the message does not say why (want /%s/): %s", tc.path, tc.why, text)
			}
		})
	}

	t.Run("other tools do not escape either", func(t *testing.T) {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"ls", map[string]any{"path": "../ws2"}},
			{"ls", map[string]any{"path": "sib"}},
			{"ls", map[string]any{"path": sibling}},
			{"grep", map[string]any{"pattern": "SECRET", "path": "sib"}},
			{"grep", map[string]any{"pattern": "SECRET", "path": "../ws2"}},
			{"grep", map[string]any{"pattern": "root", "path": "/etc/passwd"}},
			{"find", map[string]any{"pattern": "*", "path": "sibabs"}},
			{"find", map[string]any{"pattern": "*", "path": ".."}},
		} {
			r := c.CallTool(ctx, tc.tool, tc.args)
			if !r.IsError || strings.Contains(r.Text(), "s.txt") && !strings.Contains(r.Text(), "refused") || strings.Contains(r.Text(), "root:") {
				t.Errorf("%s %v: not refused: %s", tc.tool, tc.args, r.Text())
			}
		}
		// Walking the whole workspace must not follow the outward links.
		g := c.CallTool(ctx, "grep", map[string]any{"pattern": "SECRET-SIBLIN[G]|root:[x]:"})
		if strings.Contains(g.Text(), "SECRET-SIBLING") || strings.Contains(g.Text(), "root:x:") {
			t.Errorf("grep over the workspace followed an outward symlink:\n%s", g.Text())
		}
		f := c.CallTool(ctx, "find", map[string]any{"pattern": "*"})
		if strings.Contains(f.Text(), "s.txt") || strings.Contains(f.Text(), "passwd") {
			t.Errorf("find over the workspace followed an outward symlink:\n%s", f.Text())
		}
	})

	t.Run("inside paths still work", func(t *testing.T) {
		for _, tc := range []struct{ path, want string }{
			{filepath.Join(ws, "in.txt"), "1→inside"},
			{"inabs", "1→inside"}, // absolute symlink pointing inside
			{"@in.txt", "1→inside"},
			{"sub/../in.txt", "1→inside"},
			{"indir/x.txt", "1→x"},
			{"my\u00a0file.txt", "1→spaced"},
			{"my\u202ffile.txt", "1→spaced"},
			{"file://" + ws + "/in.txt", "1→inside"},
		} {
			r := c.CallTool(ctx, "read", map[string]any{"path": tc.path})
			if r.IsError || !strings.Contains(r.Text(), tc.want) {
				t.Errorf("read %q: %s", tc.path, r.Text())
			}
		}
	})
}

var lifecycleHeader = regexp.MustCompile(`(?m)^(\S+), lines (\d+)-(\d+) of (\d+)`)

func TestLifecycleRead(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{
		"src/config.ts": numberedLines(42, func(i int) string { return fmt.Sprintf("const v%d = %d;", i, i) }),
		"big.txt":       numberedLines(2500, func(i int) string { return fmt.Sprintf("row %d", i) }),
		"wide.txt":      numberedLines(500, func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("w", 205) }),
		"three.txt":     "one\ntwo\nthree\n",
		"long.txt":      "short\n" + strings.Repeat("L", 3000) + "\nafter\n",
		"bom.txt":       "\xef\xbb\xbfhello bom\nsecond\n",
		"tabs.txt":      "\tindented  \nx\n",
	})
	c, ctx := lifecycleStart(t, ws, nil)
	read := func(args map[string]any) harness.Result {
		t.Helper()
		return c.CallTool(ctx, "read", args)
	}

	t.Run("header and numbered lines", func(t *testing.T) {
		r := read(map[string]any{"path": "src/config.ts"})
		lines := strings.Split(r.Text(), "\n")
		if lines[0] != "src/config.ts, lines 1-42 of 42" {
			t.Errorf("header = %q", lines[0])
		}
		wantContains(t, "config", r.Text(), "     1→const v1 = 1;", "    42→const v42 = 42;")
		if strings.Contains(r.Text(), "offset=") {
			t.Errorf("a whole file announces a continuation:\n%s", r.Text())
		}
		r = read(map[string]any{"path": "tabs.txt"})
		wantContains(t, "tabs", r.Text(), "     1→\tindented  \n")
	})
	t.Run("2500 lines: 2000 in all with header and notice, and offset=1999", func(t *testing.T) {
		r := read(map[string]any{"path": "big.txt"})
		wantContains(t, "big", r.Text(), "big.txt, lines 1-1998 of 2500", "  1998→row 1998", "offset=1999")
		if strings.Contains(r.Text(), "→row 1999") {
			t.Error("line 1999 shown")
		}
		r = read(map[string]any{"path": "big.txt", "offset": 1999})
		wantContains(t, "big 1999", r.Text(), "big.txt, lines 1999-2500 of 2500", "  1999→row 1999", "  2500→row 2500")
		if strings.Contains(r.Text(), "offset=") {
			t.Errorf("last page announces more:\n%s", r.Text())
		}
	})
	t.Run("500 lines of 210 bytes cut by bytes", func(t *testing.T) {
		r := read(map[string]any{"path": "wide.txt"})
		m := lifecycleHeader.FindStringSubmatch(r.Text())
		if m == nil {
			t.Fatalf("no header:\n%.300s", r.Text())
		}
		last, _ := strconv.Atoi(m[3])
		if m[2] != "1" || m[4] != "500" || last >= 500 || last < 200 {
			t.Fatalf("header %q: want lines 1-N of 500 with N cut by the 51,200-byte limit", m[0])
		}
		wantContains(t, "wide", r.Text(), fmt.Sprintf("offset=%d", last+1))
		if !regexp.MustCompile(`(?i)bytes|KB|51,?200`).MatchString(r.Text()) {
			t.Errorf("notice does not say the byte limit was hit:\n%s", r.Text()[strings.LastIndex(r.Text(), "\n")-300:])
		}
		body := r.Text()[strings.Index(r.Text(), "\n")+1:]
		numbered := regexp.MustCompile(`(?m)^ *\d+→.*\n?`).FindAllString(body, -1)
		size := 0
		for _, l := range numbered {
			size += len(l)
		}
		if len(numbered) != last || size > 51200 {
			t.Errorf("%d numbered lines of %d bytes for header %q", len(numbered), size, m[0])
		}
		if !strings.Contains(r.Text(), fmt.Sprintf("%6d→%04d", last, last)) {
			t.Errorf("line %d not shown whole", last)
		}
	})
	t.Run("offset and limit", func(t *testing.T) {
		r := read(map[string]any{"path": "three.txt", "offset": 0})
		wantContains(t, "offset 0", r.Text(), "three.txt, lines 1-3 of 3", "     1→one")
		r = read(map[string]any{"path": "three.txt", "limit": 2})
		wantContains(t, "limit 2", r.Text(), "three.txt, lines 1-2 of 3", "offset=3")
		r = read(map[string]any{"path": "three.txt", "offset": 2, "limit": 1})
		wantContains(t, "offset 2 limit 1", r.Text(), "three.txt, lines 2-2 of 3", "     2→two", "offset=3")
		r = read(map[string]any{"path": "three.txt", "offset": 10})
		if !r.IsError || !strings.Contains(r.Text(), "3") || !strings.Contains(r.Text(), "line") {
			t.Errorf("offset beyond EOF: want isError naming the 3 lines: %+v", r)
		}
	})
	t.Run("a line over 2000 characters is cut with a marker", func(t *testing.T) {
		r := read(map[string]any{"path": "long.txt"})
		line := ""
		for _, l := range strings.Split(r.Text(), "\n") {
			if strings.HasPrefix(l, "     2→") {
				line = l
			}
		}
		if !strings.HasPrefix(line, "     2→"+strings.Repeat("L", 2000)) || strings.Contains(line, strings.Repeat("L", 2001)) {
			t.Errorf("line 2 not cut at 2000 characters: %.80s…(%d bytes)", line, len(line))
		}
		if len(line) == len("     2→")+2000 {
			t.Error("cut line has no marker")
		}
		wantContains(t, "long", r.Text(), "     3→after")
	})
	t.Run("BOM stripped", func(t *testing.T) {
		r := read(map[string]any{"path": "bom.txt"})
		wantContains(t, "bom", r.Text(), "     1→hello bom\n")
		if strings.Contains(r.Text(), "\ufeff") {
			t.Error("BOM shown")
		}
	})
}

func TestLifecycleCancelBatch(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	r := lifecycleStartRaw(t, ws)
	r.initialize()
	r.send(7, "tools/callBatch", map[string]any{"calls": []any{
		map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}},
		map[string]any{"name": "test_block", "arguments": map[string]any{}, "callId": "b-block"},
	}})
	if _, ok := r.wait(10*time.Second, func(f map[string]any) bool {
		p, _ := f["params"].(map[string]any)
		return f["method"] == "tools/progress" && p["callId"] == "b-block"
	}); !ok {
		t.Fatal("test_block in the batch never started")
	}
	sent := time.Now()
	r.send(nil, "$/cancelRequest", map[string]any{"id": 7})
	f, ok := r.reply(7, 5*time.Second)
	if !ok || replyCode(f) != -32800 {
		t.Fatalf("cancelled batch: %v, want -32800", f)
	}
	if took := time.Since(sent); took > 100*time.Millisecond {
		t.Errorf("cancelled batch replied after %v, want within 100 ms", took)
	}
	r.send(8, "tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}})
	if f, ok := r.reply(8, 10*time.Second); !ok || !strings.Contains(lifecycleResultText(f), "1→a") {
		t.Errorf("server unusable after a cancelled batch: %v", f)
	}
}

func TestLifecycleLogFlags(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"a.txt": "a\n"})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Initialize(ctx, nil)
	c.CallTool(ctx, "test_panic", map[string]any{})
	c.Shutdown(ctx)
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), "panic") {
		t.Errorf("--log-file %s: %v, %d bytes; want the panic logged:\n%.500s", logFile, err, len(b), b)
	}
}

func TestLifecycleNumericEdgeCases(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"three.txt": "one\ntwo\nthree\n"})
	c, ctx := lifecycleStart(t, ws, nil)
	for _, tc := range []struct {
		name  string
		args  map[string]any
		wants []string
	}{
		{"fractional offset", map[string]any{"path": "three.txt", "offset": 2.5}, []string{"`offset`", "2.5"}},
		{"zero limit", map[string]any{"path": "three.txt", "limit": 0}, []string{"`limit`", "0"}},
		{"negative limit", map[string]any{"path": "three.txt", "limit": -1}, []string{"`limit`", "-1"}},
		// Past the end like offset 10, only larger: the same error naming the line count.
		{"huge offset", map[string]any{"path": "three.txt", "offset": 1e20}, []string{"offset", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.CallTool(ctx, "read", tc.args)
			if !r.IsError {
				t.Fatalf("not an error: %s", r.Text())
			}
			wantContains(t, tc.name, r.Text(), tc.wants...)
			for _, leak := range []string{"unmarshal", "Go struct", "readInput"} {
				if strings.Contains(r.Text(), leak) {
					t.Errorf("error shows Go internals (%q) instead of what to send: %s", leak, r.Text())
				}
			}
		})
	}
	r := c.CallTool(ctx, "read", map[string]any{"path": "three.txt", "limit": 1e20})
	if r.IsError || !strings.Contains(r.Text(), "three.txt, lines 1-3 of 3") {
		t.Errorf("huge limit: %s", r.Text())
	}
}

func TestLifecycleReadCutsCharactersNotBytes(t *testing.T) {
	t.Parallel()
	ws := resolvedWorkspace(t, map[string]string{"multi.txt": strings.Repeat("é", 2500) + "\n"})
	c, ctx := lifecycleStart(t, ws, nil)
	r := c.CallTool(ctx, "read", map[string]any{"path": "multi.txt"})
	line := strings.Split(r.Text(), "\n")[1]
	if !strings.HasPrefix(line, "     1→"+strings.Repeat("é", 2000)) || strings.Contains(line, strings.Repeat("é", 2001)) {
		t.Errorf("line of 2500 'é' not cut at 2000 characters: %d runes", len([]rune(line)))
	}
	if strings.ContainsRune(line, '\uFFFD') {
		t.Error("cut split a character")
	}
}

func TestLifecycleInitializeListCallShutdownExit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"hello.txt": "hello\nworld\n"})
	c := harness.Start(t, harness.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	res := c.Initialize(ctx, map[string]any{
		"rootUri":          "file://" + ws,
		"workspaceFolders": []any{map[string]any{"uri": "file://" + ws, "name": "ws"}},
		"clientInfo":       map[string]any{"name": "e2e"},
	})
	info := res["serverInfo"].(map[string]any)
	if info["name"] != "agentls" {
		t.Errorf("serverInfo.name = %v", info["name"])
	}
	agentls := res["capabilities"].(map[string]any)["experimental"].(map[string]any)["agentls"].(map[string]any)
	if !strings.Contains(fmt.Sprint(agentls["tools"]), "read") || agentls["protocolVersion"] == nil || agentls["watcher"] == nil {
		t.Errorf("capabilities.experimental.agentls = %v", agentls)
	}
	if !strings.Contains(fmt.Sprint(res["instructions"]), "Read a file before editing") {
		t.Errorf("instructions = %v", res["instructions"])
	}

	var list struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := c.Call(ctx, "tools/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 || list.Tools[0]["name"] != "read" {
		t.Fatalf("tools/list = %v", list.Tools)
	}

	r := c.CallTool(ctx, "read", map[string]any{"path": "hello.txt"})
	if r.IsError || !strings.Contains(r.Text(), "1→hello") || !strings.Contains(r.Text(), "2→world") {
		t.Fatalf("read = %+v", r)
	}
	if r.CallID == "" {
		t.Error("callId missing")
	}
	if code := c.Shutdown(ctx); code != 0 {
		t.Fatalf("exit code = %d, want 0", code)
	}
}

func TestExitWithoutShutdownExitsWithOne(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	c.Conn.Notify(ctx, "exit", nil)
	if code := c.Wait(5 * time.Second); code != 1 {
		t.Fatalf("exit code = %d, want 1", code)
	}
}

func TestRequestsBeforeInitializeAreRefused(t *testing.T) {
	t.Parallel()
	c := harness.Start(t, harness.Options{Root: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Call(ctx, "tools/list", nil, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32002 {
		t.Fatalf("err = %v, want -32002", err)
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
		cmd := harness.Command(t, []string{"--root", ws})
		stdin, stdout := harness.StartPiped(t, cmd)
		stopOnCleanup(t, cmd, stdin)
		var batch strings.Builder
		for id, m := range []string{"initialize", "tools/list", "initialize", "shutdown", "tools/list"} {
			params := "{}"
			if m == "initialize" {
				params = `{"processId":null,"rootUri":null,"capabilities":{}}`
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id+1, m, params)
			fmt.Fprintf(&batch, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		if _, err := io.WriteString(stdin, batch.String()); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(stdout)
		got := map[float64]map[string]any{}
		for len(got) < 5 {
			body, err := readFrame(br)
			if err != nil {
				t.Fatalf("round %d: %v (replies so far %v)", i, err, got)
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			if id, ok := m["id"].(float64); ok && m["method"] == nil {
				got[id] = m
			}
		}
		for id, want := range map[float64]int{1: 0, 2: 0, 3: -32600, 4: 0, 5: -32600} {
			if code := replyCode(got[id]); code != want {
				t.Errorf("round %d: reply %v = %v, want code %d (0: a result)", i, id, got[id], want)
			}
		}
	}
}

func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	t.Parallel()
	c, _, ctx := start(t, nil)
	err := c.Call(ctx, "tools/nope", nil, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.MethodNotFound {
		t.Fatalf("err = %v, want MethodNotFound", err)
	}
}

// 200 calls back to back on one connection all get correct replies, while a
// slow call cancelled by $/cancelRequest replies -32800 within 100 ms.
func TestManyCallsAndCancellation(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 10 {
		files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("content of file %d\n", i)
	}
	c, _, ctx := start(t, files)

	slowCtx, cancelSlow := context.WithCancel(ctx)
	defer cancelSlow()
	slowErr := make(chan error, 1)
	go func() {
		_, err := c.TryCallTool(slowCtx, "test_block", map[string]any{})
		slowErr <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the slow call never started")
	}

	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := i % 10
			r, err := c.TryCallTool(ctx, "read", map[string]any{"path": fmt.Sprintf("f%d.txt", n)})
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("content of file %d", n); !strings.Contains(r.Text(), want) {
				errs <- fmt.Errorf("call %d: got %q, want %q", i, r.Text(), want)
			}
		}()
		if i == 100 {
			cancelSlow()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case err := <-slowErr:
		var je *jsonrpc2.Error
		if !errors.As(err, &je) && !errors.Is(err, context.Canceled) {
			t.Fatalf("slow call err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("slow call never returned")
	}
}

// The cancellation reply is timed on the wire: a fresh client's ids are
// sequential (initialize is 1), so the blocking call is id 2 and the test
// sends $/cancelRequest for it by hand, without the client giving up first.
func TestCancelRequestRepliesRequestCancelledWithin100ms(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	c, ws, ctx := start(t, nil)
	elapsed := cancelBlockingCall(t, ctx, c, map[string]any{"seconds": 10, "marker": "cancelled.txt"})
	if elapsed > 100*time.Millisecond {
		t.Errorf("cancel reply took %v, want < 100ms", elapsed)
	}
	// The tool's own context was cancelled: it left its marker.
	waitFile(t, filepath.Join(ws, "cancelled.txt"), 2*time.Second)
	// The connection still works.
	if r := c.CallTool(ctx, "read", map[string]any{"path": "cancelled.txt"}); r.IsError {
		t.Fatalf("read after cancel: %s", r.Text())
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
			c, ws, ctx := start(t, nil)
			elapsed := cancelBlockingCall(t, ctx, c, map[string]any{"seconds": 10, "marker": "wound-down.txt", "windDown": tc.windDown.Seconds()})
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

// cancelBlockingCall starts test_block with args as request 2 of a fresh
// client (initialize is 1), sends $/cancelRequest for it by hand once it
// runs, checks the reply is -32800 and returns how long the reply took.
func cancelBlockingCall(t *testing.T, ctx context.Context, c *harness.Client, args map[string]any) time.Duration {
	t.Helper()
	errCh := make(chan error, 1)
	go func() {
		var r harness.Result
		_, err := c.Conn.Call(ctx, "tools/call", map[string]any{"name": "test_block", "arguments": args}, &r)
		errCh <- err
	}()
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the blocking call never started")
	}
	t0 := time.Now()
	if err := c.Conn.Notify(ctx, "$/cancelRequest", map[string]any{"id": 2}); err != nil {
		t.Fatal(err)
	}
	err := <-errCh
	elapsed := time.Since(t0)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != -32800 {
		t.Fatalf("err = %v, want RequestCancelled -32800", err)
	}
	return elapsed
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

// Closing stdin while a call runs cancels the call's context and the process
// exits within 1 s.
func TestClosingStdinCancelsCallsAndExits(t *testing.T) {
	t.Parallel()
	c, ws, ctx := start(t, nil)
	go c.TryCallTool(ctx, "test_block", map[string]any{"seconds": 30, "marker": "eof-cancelled.txt"})
	if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool { return n.Method == "tools/progress" }); !ok {
		t.Fatal("the blocking call never started")
	}
	t0 := time.Now()
	c.CloseStdin()
	select {
	case <-c.Exited():
	case <-time.After(time.Second):
		t.Fatalf("process still running 1s after stdin closed")
	}
	t.Logf("exited %v after EOF", time.Since(t0))
	if _, err := os.Stat(filepath.Join(ws, "eof-cancelled.txt")); err != nil {
		t.Fatalf("the call's context was not cancelled: %v", err)
	}
}
