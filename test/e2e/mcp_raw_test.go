package e2e

// Contract tests of `agentls mcp` at the wire level: newline-delimited
// JSON-RPC over stdio, checked against the MCP specification (2024-11-05 …
// 2025-11-25), issue 9 and docs/protocol.md's MCP section. No SDK: every
// line is written and read by hand.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// mcpRawTimeout bounds every wait for the server; generous for a loaded machine.
const mcpRawTimeout = 10 * time.Second

// mcpRawConn is a raw MCP client over the server's stdin/stdout. Server
// requests are refused (-32601) unless a test sets a handler.
type mcpRawConn struct {
	*mcpRawClient
	idMu   sync.Mutex
	nextID int
}

// mcpRawStart runs `agentls mcp --root root` with raw pipes and extra
// environment (later entries win).
func mcpRawStart(t *testing.T, root string, env ...string) *mcpRawConn {
	t.Helper()
	c := &mcpRawConn{mcpRawClient: startMCPRaw(t, []string{"mcp", "--root", root}, env), nextID: 100}
	c.setHandler(refuseRequests)
	return c
}

// mcpRawBypassEnv points XDG_CONFIG_HOME at user settings selecting mode
// bypass, so calls that would need approval run (tests not about permissions).
func mcpRawBypassEnv(t *testing.T) string {
	cfg := t.TempDir()
	writeFile(t, filepath.Join(cfg, "agentls", "settings.json"), `{"mode": "bypass"}`)
	return "XDG_CONFIG_HOME=" + cfg
}

// write sends raw bytes (the caller supplies any newline).
func (c *mcpRawConn) write(b []byte) {
	if err := c.writeRaw(b); err != nil {
		c.t.Logf("write: %v", err)
	}
}

// expect returns the first message satisfying pred, or fails the test.
func (c *mcpRawConn) expect(what string, pred func(mcpMsg) bool) mcpMsg {
	c.t.Helper()
	m, ok := c.wait(mcpRawTimeout, pred)
	if !ok {
		c.t.Fatalf("timed out waiting for %s; got:\n%s", what, c.dump())
	}
	return m
}

// badLines are the lines that were not JSON objects; blank lines are
// tolerated.
func (c *mcpRawConn) badLines() []string {
	var out []string
	for _, l := range c.badFrames() {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// mcpRawIDIs matches a response whose id has the given raw JSON text.
func mcpRawIDIs(raw string) func(mcpMsg) bool {
	return func(m mcpMsg) bool { return m.isResponse() && string(m.ID) == raw }
}

// request sends a request with a fresh integer id and waits for its response.
func (c *mcpRawConn) request(method string, params any) mcpMsg {
	c.t.Helper()
	id := c.start(method, params)
	return c.expect(method+" response", mcpRawIDIs(strconv.Itoa(id)))
}

func (c *mcpRawConn) newID() int {
	c.idMu.Lock()
	defer c.idMu.Unlock()
	c.nextID++
	return c.nextID
}

// start sends a request and returns its id without waiting.
func (c *mcpRawConn) start(method string, params any) int {
	id := c.newID()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.sendJSON(msg)
	return id
}

// startCall sends a tools/call and returns its id without waiting.
func (c *mcpRawConn) startCall(tool string, args any) int {
	return c.start("tools/call", map[string]any{"name": tool, "arguments": args})
}

func (c *mcpRawConn) notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.sendJSON(msg)
}

// mcpRawInitResult is the part of an initialize result the tests check.
type mcpRawInitResult struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	ServerInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Instructions string `json:"instructions"`
}

// initialize runs the handshake (initialize + notifications/initialized).
func (c *mcpRawConn) initialize(version string, caps map[string]any) mcpRawInitResult {
	c.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	m := c.request("initialize", map[string]any{"protocolVersion": version, "capabilities": caps, "clientInfo": map[string]any{"name": "a9m", "version": "1"}})
	if m.Error != nil {
		c.t.Fatalf("initialize %s: error %d %s", version, m.Error.Code, m.Error.Message)
	}
	var r mcpRawInitResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		c.t.Fatalf("initialize result %s: %v", m.Result, err)
	}
	c.notify("notifications/initialized", nil)
	return r
}

// mcpRawToolResult is an MCP CallToolResult.
type mcpRawToolResult struct {
	Content           []map[string]any `json:"content"`
	IsError           bool             `json:"isError"`
	StructuredContent json.RawMessage  `json:"structuredContent"`
	Meta              map[string]any   `json:"_meta"`
}

func (r mcpRawToolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c["type"] == "text" {
			parts = append(parts, fmt.Sprint(c["text"]))
		}
	}
	return strings.Join(parts, "\n")
}

// call runs tools/call and fails on a protocol error.
func (c *mcpRawConn) call(name string, args any) mcpRawToolResult {
	c.t.Helper()
	m := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	return c.toolResult(m)
}

func (c *mcpRawConn) toolResult(m mcpMsg) mcpRawToolResult {
	c.t.Helper()
	if m.Error != nil {
		c.t.Fatalf("tools/call: protocol error %d %s", m.Error.Code, m.Error.Message)
	}
	var r mcpRawToolResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		c.t.Fatalf("tools/call result %s: %v", m.Result, err)
	}
	return r
}

func mcpRawCode(m mcpMsg) int {
	if m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// Spec (lifecycle, version negotiation): "If the server supports the
// requested protocol version, it MUST respond with the same version.
// Otherwise ... This SHOULD be the latest version supported by the server."
// Each negotiated session works.
func TestMCPRawVersionNegotiation(t *testing.T) {
	ws := newWorkspace(t, map[string]string{"a.txt": "hello\n"})
	for _, tc := range []struct{ sent, want string }{
		{"2024-11-05", "2024-11-05"}, {"2025-03-26", "2025-03-26"}, {"2025-06-18", "2025-06-18"}, {"2025-11-25", "2025-11-25"},
		{"2099-01-01", "2025-11-25"}, {"2000-01-01", "2025-11-25"},
	} {
		t.Run(tc.sent, func(t *testing.T) {
			c := mcpRawStart(t, ws)
			if r := c.initialize(tc.sent, nil); r.ProtocolVersion != tc.want {
				t.Fatalf("initialize %s: protocolVersion %q, want %q", tc.sent, r.ProtocolVersion, tc.want)
			}
			if res := c.call("read", map[string]any{"path": "a.txt"}); res.IsError || !strings.Contains(res.text(), "1→hello") {
				t.Fatalf("read after initialize %s: %+v", tc.sent, res)
			}
		})
	}
}

// Only what is implemented is declared (tools with listChanged, logging);
// serverInfo and the instructions docs/tools.md lists.
func TestMCPRawInitializeResult(t *testing.T) {
	c := mcpRawStart(t, newWorkspace(t, nil))
	r := c.initialize("2025-06-18", nil)
	if got := compactJSON(r.Capabilities); got != `{"logging":{},"tools":{"listChanged":true}}` {
		t.Errorf("capabilities = %s", got)
	}
	if r.ServerInfo.Name != "agentls" || r.ServerInfo.Version == "" {
		t.Errorf("serverInfo = %+v, want name agentls and a version", r.ServerInfo)
	}
	wantContains(t, "instructions", strings.ToLower(r.Instructions), "read a file before editing", "search", "never guess file contents", "prefer these tools over shell", "cat", "grep", "find", "oldtext small but unique")
}

// mcpRawReservedCode: code is in JSON-RPC's reserved range, where protocol errors belong.
func mcpRawReservedCode(code int) bool { return code >= -32768 && code <= -32000 }

// Every line gets the reply the spec and docs/protocol.md ("Errors", "Bad
// input") name, in one session that goes on: ping any time, a request
// before initialize and a second initialize refused with a reserved code,
// malformed messages, ids echoed exactly (JSON-RPC: "MUST be the same as
// the value of the id member"), a batch with a notification in it on
// 2025-03-26 (the revision that required receiving batches). Bad ids and
// versions are internal/mcp's TestStdioAnswersBadLinesAndGoesOn, CRLF its
// TestStdioDeliversRequestsAndSkipsBlankLines; split writes, big and
// oversize lines TestMCPStdioAnswersEveryMessage's.
func TestMCPRawLineReplies(t *testing.T) {
	c := mcpRawStart(t, newWorkspace(t, map[string]string{"a.txt": "hello\n"}))
	const reserved = 1 // any code in the reserved range
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	for _, tc := range []struct {
		name, line string
		ids        string // the raw ids of the replies, space-separated
		code       int    // 0: a result ({} for a ping), no error reply at all
	}{
		{"ping before initialize", ping("1"), "1", 0},
		{"tools/list before initialize", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "2", reserved},
		{"initialize", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"a9m","version":"1"}}}`, "3", 0},
		{"ping after initialize", ping("4"), "4", 0},
		{"second initialize", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"again","version":"1"}}}`, "5", reserved},
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, "null", -32700},
		{"unknown method", `{"jsonrpc":"2.0","id":8,"method":"nosuch/thing"}`, "8", -32601},
		{"tools/call params a string", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"abc"}`, "9", -32602},
		{"tools/call params an array", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1,2]}`, "10", -32602},
		{"tools/list params a number", `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":5}`, "11", -32602},
		{"tools/call name a number", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}`, "12", -32602},
		{"string id", ping(`"req-α-1"`), `"req-α-1"`, 0},
		{"empty string id", ping(`""`), `""`, 0},
		{"id zero", ping(`0`), `0`, 0},
		{"negative id", ping(`-5`), `-5`, 0},
		{"max int64 id echoed", ping(`9223372036854775807`), `9223372036854775807`, -32600},
		{"batch with a notification", `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}},{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"ls","arguments":{}}},{"jsonrpc":"2.0","id":"c2","method":"ping"}]`, `"c1" "c2"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := c.count()
			c.write([]byte(tc.line + "\n"))
			if tc.name == "initialize" {
				c.expect("initialize", mcpRawIDIs("3"))
				c.notify("notifications/initialized", nil)
			}
			// Requests are answered concurrently: a reply may come after
			// the ping's that shows the session goes on.
			if pong := c.request("ping", nil); pong.Error != nil {
				t.Fatalf("ping after %s: %s", tc.name, pong.Raw)
			}
			for _, id := range strings.Fields(tc.ids) {
				m, ok := c.waitFrom(n, mcpRawTimeout, mcpRawIDIs(id))
				switch code := mcpRawCode(m); {
				case !ok:
					t.Errorf("%s: no reply with id %s; got:\n%s", tc.line, id, lastBytes(c.dump(), 1500))
				case tc.code == reserved && !mcpRawReservedCode(code), tc.code != reserved && code != tc.code:
					t.Errorf("%s: reply %s, want error code %d", tc.line, lastBytes(m.Raw, 300), tc.code)
				case strings.Contains(tc.line, `"ping"`) && string(m.ID) != `"c1"` && tc.code == 0 && string(m.Result) != "{}":
					t.Errorf("%s: reply %s, want result {}", tc.line, m.Raw)
				}
			}
			if m, ok := c.waitFrom(n, 0, func(m mcpMsg) bool { return m.isResponse() && m.Error != nil }); ok && tc.code == 0 {
				t.Errorf("%s produced an error: %s", tc.name, m.Raw)
			}
		})
	}
	if res := c.call("read", map[string]any{"path": "a.txt"}); res.IsError {
		t.Errorf("read after the lines: %s", res.text())
	}
	if bad := c.badLines(); len(bad) > 0 {
		t.Errorf("server wrote non-JSON lines: %q", bad)
	}
}

// mcpRawTool is one entry of tools/list.
type mcpRawTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  *struct {
		ReadOnlyHint    *bool `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
		IdempotentHint  *bool `json:"idempotentHint"`
		OpenWorldHint   *bool `json:"openWorldHint"`
	} `json:"annotations"`
	Meta map[string]any `json:"_meta"`
}

func (c *mcpRawConn) listTools(params any) ([]mcpRawTool, string) {
	c.t.Helper()
	m := c.request("tools/list", params)
	if m.Error != nil {
		c.t.Fatalf("tools/list: %s", m.Raw)
	}
	var r struct {
		Tools      []mcpRawTool `json:"tools"`
		NextCursor string       `json:"nextCursor"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		c.t.Fatalf("tools/list result: %v", err)
	}
	return r.Tools, r.NextCursor
}

// tools/list: names by MCP's naming rule, descriptions, object input
// schemas that resolve (no tool declares an output schema: the spec's
// "MUST provide structured results that conform" would need a test), complete annotations matching docs/tools.md's
// classification, _meta.source, tool_search always there, pagination
// followed to the end and invalid cursors refused with -32602.
func TestMCPRawToolsList(t *testing.T) {
	c := mcpRawStart(t, newWorkspace(t, nil))
	c.initialize("2025-11-25", nil)
	tools, cursor := c.listTools(map[string]any{})
	for pages := 0; cursor != "" && pages < 50; pages++ {
		more, next := c.listTools(map[string]any{"cursor": cursor})
		tools, cursor = append(tools, more...), next
	}
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) // 2025-11-25 tool names
	// {readOnly, destructive, idempotent, openWorld}: edit and write may
	// rewrite content, bash may run anything.
	want := map[string]string{"read": "true false true false", "ls": "true false true false", "grep": "true false true false", "find": "true false true false",
		"edit": "false true", "write": "false true", "bash": "false true", "tool_search": ""}
	for _, tl := range tools {
		if !nameRE.MatchString(tl.Name) || strings.TrimSpace(tl.Description) == "" || tl.Meta["source"] == nil {
			t.Errorf("tool %q: name, description or _meta.source wrong: %+v", tl.Name, tl)
		}
		if len(tl.OutputSchema) > 0 {
			t.Errorf("tool %q declares an outputSchema: check its structuredContent conforms", tl.Name)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil || s.Type != "object" {
			t.Errorf("tool %q inputSchema %s: %v", tl.Name, tl.InputSchema, err)
		} else if _, err := s.Resolve(nil); err != nil {
			t.Errorf("tool %q inputSchema does not resolve: %v", tl.Name, err)
		}
		a := tl.Annotations
		if a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("tool %q: annotations incomplete: %+v", tl.Name, a)
			continue
		}
		if w, ok := want[tl.Name]; ok {
			got := fmt.Sprint(*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint)
			if !strings.HasPrefix(got, w) || tl.Name == "bash" && !*a.OpenWorldHint {
				t.Errorf("%s annotations {readOnly destructive idempotent openWorld} = %s, want %s…", tl.Name, got, w)
			}
			delete(want, tl.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("tools/list lacks %v", want)
	}
	// Spec (pagination): "Invalid cursors SHOULD result in an error with code -32602".
	for _, cur := range []string{"bogus", "eyJ4IjoxfQ=="} {
		if m := c.request("tools/list", map[string]any{"cursor": cur}); mcpRawCode(m) != -32602 {
			t.Errorf("tools/list cursor %q: %s, want error -32602", cur, lastBytes(m.Raw, 200))
		}
	}
	if m := c.request("tools/list", map[string]any{"cursor": ""}); m.Error != nil {
		t.Errorf("tools/list with empty cursor: %s", m.Raw)
	}
}

// tools/call errors are results (docs/tools.md "Errors are results"): an
// unknown tool names the tools and the closest one (the MCP spec lists
// unknown tools under protocol errors, -32602; the project contract chooses
// a result), absent arguments name the required field, a panicking tool is
// an isError result and the server keeps serving.
func TestMCPRawToolErrors(t *testing.T) {
	c := mcpRawStart(t, newWorkspace(t, map[string]string{"a.txt": "one\ntwo\n"}))
	c.initialize("2025-11-25", nil)
	for _, tc := range []struct {
		params map[string]any
		want   []string
	}{
		{map[string]any{"name": "raed", "arguments": map[string]any{"path": "a.txt"}}, []string{"raed", `"read"`, "bash", "grep"}},
		{map[string]any{"name": "grep"}, []string{"`pattern`"}},
		{map[string]any{"name": "test_panic", "arguments": map[string]any{}}, []string{"test_panic"}},
	} {
		if r := c.toolResult(c.request("tools/call", tc.params)); !r.IsError {
			t.Errorf("%v: isError false: %s", tc.params, r.text())
		} else {
			wantContains(t, fmt.Sprint(tc.params), r.text(), tc.want...)
		}
	}
	if m := c.request("ping", nil); m.Error != nil {
		t.Errorf("ping after test_panic: %s", m.Raw)
	}
}

// Cancellation (spec): the receiver SHOULD stop processing, free resources
// and not send a response for the cancelled request; an unknown id MAY be
// ignored. Cancellation of `sleep 100` kills it; any tool's context being
// cancelled is internal/mcp's TestCancellationStopsTheTool.
func TestMCPRawCancel(t *testing.T) {
	ws := newWorkspace(t, nil)
	c := mcpRawStart(t, ws, mcpRawBypassEnv(t))
	c.initialize("2025-06-18", nil)
	const marker = "100.3917"
	reapProcessesWithArg(t, marker)
	id := c.start("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep " + marker + " & wait"}})
	if !waitUntil(mcpRawTimeout, func() bool { return len(processesWithArg(marker)) > 0 }) {
		t.Fatal("the sleep never ran")
	}
	c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "user pressed stop"})
	if !waitUntil(mcpRawTimeout, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Fatalf("sleep %v still running after notifications/cancelled", processesWithArg(marker))
	}
	// Let anything the cancelled call would reply arrive, then check.
	c.request("ping", nil)
	c.wait(300*time.Millisecond, mcpRawIDIs(strconv.Itoa(id)))
	if m, ok := c.wait(0, mcpRawIDIs(strconv.Itoa(id))); ok {
		t.Errorf("a response was sent for the cancelled request: %s", lastBytes(m.Raw, 300))
	}

	// Unknown and already-finished ids are ignored; no reply to a notification.
	n := len(c.matching(func(m mcpMsg) bool { return m.isResponse() }))
	c.notify("notifications/cancelled", map[string]any{"requestId": 424242})
	c.notify("notifications/cancelled", map[string]any{"requestId": "nope"})
	c.notify("notifications/cancelled", map[string]any{})
	pong := c.request("ping", nil)
	if pong.Error != nil {
		t.Fatalf("ping after stray cancels: %s", pong.Raw)
	}
	if got := len(c.matching(func(m mcpMsg) bool { return m.isResponse() })); got != n+1 {
		t.Errorf("stray notifications/cancelled got %d replies", got-n-1)
	}
	// The session still runs tools.
	if r := c.call("bash", map[string]any{"command": "echo still-here"}); r.IsError || !strings.Contains(r.text(), "still-here") {
		t.Errorf("bash after cancel: %s", r.text())
	}
}

// Progress (spec): notifications/progress carry the request's progressToken
// (string or integer), increase, stop at completion and carry the command's
// output, masked like the result; no token, no notifications; never a token
// that was not sent.
func TestMCPRawProgress(t *testing.T) {
	slow(t)
	c := mcpRawStart(t, newWorkspace(t, nil))
	c.initialize("2025-06-18", nil)
	gh := "ghp_" + strings.Repeat("Zq7Wx2Lp9K", 3) + "Rt5Yu8"
	script := "for i in 1 2 3 4 5 6; do echo step$i " + gh + "; sleep 0.15; done"
	type note struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    *float64        `json:"total"`
		Message  string          `json:"message"`
	}
	for _, tc := range []struct {
		token any
		raw   string
	}{{"tok-α", `"tok-α"`}, {77, `77`}, {nil, ""}} {
		t.Run(fmt.Sprint("token ", tc.raw), func(t *testing.T) {
			params := map[string]any{"name": "bash", "arguments": map[string]any{"command": script}}
			if tc.token != nil {
				params["_meta"] = map[string]any{"progressToken": tc.token}
			}
			n := c.count()
			resp := c.expect("bash response", mcpRawIDIs(strconv.Itoa(c.start("tools/call", params))))
			if r := c.toolResult(resp); r.IsError || !strings.Contains(r.text(), "step6") || strings.Contains(r.text(), gh) {
				t.Fatalf("bash: %s", r.text())
			}
			last, count, after, messages := -1.0, 0, false, ""
			for _, m := range c.all()[n:] {
				after = after || m.Raw == resp.Raw
				var p note
				if m.Method != "notifications/progress" || json.Unmarshal(m.Params, &p) != nil {
					continue
				}
				count++
				messages += p.Message
				if string(p.Token) != tc.raw || after || p.Progress <= last || p.Total != nil && p.Progress > *p.Total {
					t.Errorf("progress %s: wrong token, after the response, not increasing (last %v) or past its total", m.Raw, last)
				}
				last = p.Progress
			}
			if tc.token == nil && count != 0 || tc.token != nil && (count == 0 || !strings.Contains(messages, "step")) {
				t.Errorf("%d notifications/progress carrying %q", count, messages)
			}
			if strings.Contains(messages, gh) {
				t.Errorf("a secret in notifications/progress: %q", messages)
			}
		})
	}
}

// mcpRawDecisionSchema is the requestedSchema of every elicitation/create.
const mcpRawDecisionSchema = `{"properties":{"decision":{"oneOf":[{"const":"allowOnce","title":"Allow once"},{"const":"allowAlways","title":"Allow for the rest of this session"},{"const":"rejectOnce","title":"Reject once"},{"const":"rejectAlways","title":"Reject for the rest of this session"}],"title":"Allow this call?","type":"string"}},"required":["decision"],"type":"object"}`

// Elicitation (issue 9, docs/protocol.md "Permissions"): an "ask" decision
// becomes one elicitation/create when the client declares elicitation:
// accept with allowOnce runs the call, allowAlways also the next one unasked,
// anything else refuses it. Without the capability nobody is asked and the
// result says how the user can allow it, never that the user refused.
func TestMCPRawElicitation(t *testing.T) {
	slow(t)
	el := map[string]any{"elicitation": map[string]any{}}
	accept := func(decision string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{"decision": decision, "message": "not now"}}
	}
	cases := []struct {
		name    string
		version string
		caps    map[string]any
		answer  map[string]any // nil: the client answers a JSON-RPC error
		asked   int            // elicitation/create requests for two reads
		allowed bool
		want    string
	}{
		{"accept allowOnce", "2025-06-18", el, accept("allowOnce"), 2, true, "PLAIN_SETTING"},
		{"accept allowOnce 2025-11-25 form", "2025-11-25", map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, accept("allowOnce"), 2, true, "PLAIN_SETTING"},
		{"accept allowAlways asks once", "2025-06-18", el, accept("allowAlways"), 1, true, "PLAIN_SETTING"},
		{"accept rejectOnce", "2025-06-18", el, accept("rejectOnce"), 2, false, ""},
		{"decline", "2025-06-18", el, map[string]any{"action": "decline"}, 2, false, ""},
		{"cancel", "2025-06-18", el, map[string]any{"action": "cancel"}, 2, false, ""},
		{"accept with an invalid decision", "2025-06-18", el, accept("maybe"), 2, false, ""},
		{"accept without content", "2025-06-18", el, map[string]any{"action": "accept"}, 2, false, ""},
		{"client answers an error", "2025-06-18", el, nil, 2, false, ""},
		{"no elicitation capability", "2025-06-18", nil, nil, 0, false, `the MCP host could not ask the user`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mcpRawStart(t, newWorkspace(t, map[string]string{".env": "PLAIN_SETTING=visible-value\n"}))
			var mu sync.Mutex
			var asked []mcpMsg
			c.setHandler(func(m mcpMsg) (any, int) {
				mu.Lock()
				asked = append(asked, m)
				mu.Unlock()
				if m.Method != "elicitation/create" || tc.answer == nil {
					return nil, -32603
				}
				return tc.answer, 0
			})
			c.initialize(tc.version, tc.caps)
			var r mcpRawToolResult
			for range 2 {
				r = c.call("read", map[string]any{"path": ".env"})
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != tc.asked {
				t.Fatalf("elicitation/create sent %d times, want %d", len(asked), tc.asked)
			}
			if r.IsError == tc.allowed || !tc.allowed && strings.Contains(r.text(), "visible-value") || !strings.Contains(r.text(), tc.want) {
				t.Errorf("read of .env: isError %v: %s", r.IsError, r.text())
			}
			if tc.caps == nil {
				// How the user can allow it: the rule for this very file, in
				// the settings that can lift a built-in ask; nobody refused.
				wantContains(t, "denial", r.text(), `{"permissions":{"allow":["Read(/.env)"]}}`, "user settings")
				wantLacks(t, "denial", r.text(), "denied by the user")
				return
			}
			var p struct {
				Mode            string         `json:"mode"`
				Message         string         `json:"message"`
				RequestedSchema map[string]any `json:"requestedSchema"`
			}
			if err := json.Unmarshal(asked[0].Params, &p); err != nil {
				t.Fatalf("elicitation params: %v", err)
			}
			// One required choice of the four decisions with human titles
			// (MCP's titled single-select enum), a flat object of primitives.
			if p.Message == "" || (p.Mode != "" && p.Mode != "form") || compactJSON(p.RequestedSchema) != mcpRawDecisionSchema {
				t.Errorf("elicitation/create params: %s\nwant requestedSchema %s", asked[0].Params, mcpRawDecisionSchema)
			}
		})
	}
}

// Logging (spec): "Servers that emit log message notifications MUST declare
// the logging capability"; notifications/message has {level, data}.
func TestMCPRawLogging(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		".agentls/settings.json":  `{"limits": {"readMaxLines": "many"}, "bogusKey": 1}`,
		".agentls/tools/bad.json": `{"name": "bad tool!", "command": 5}`,
		".agentls/mcp.json":       `{"servers": {"broken": {"command": "/nonexistent/agentls-a9m"}}}`,
		"a.txt":                   "x\n",
	})
	c := mcpRawStart(t, ws)
	c.initialize("2025-06-18", nil) // logging is declared: TestMCPRawInitializeResult
	if m := c.request("logging/setLevel", map[string]any{"level": "debug"}); m.Error != nil {
		t.Errorf("logging/setLevel: %s", m.Raw)
	}
	if m := c.request("logging/setLevel", map[string]any{"level": "loud"}); mcpRawCode(m) != -32602 {
		t.Errorf("logging/setLevel with an invalid level: %s, want -32602", m.Raw)
	}
	c.call("read", map[string]any{"path": "a.txt"})
	c.call("tool_search", map[string]any{"query": "broken"})
	c.request("ping", nil)
	levels := map[string]bool{"debug": true, "info": true, "notice": true, "warning": true, "error": true, "critical": true, "alert": true, "emergency": true}
	for _, m := range c.matching(mcpMethod("notifications/message")) {
		var p struct {
			Level string          `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		if json.Unmarshal(m.Params, &p) != nil || !levels[p.Level] || len(p.Data) == 0 {
			t.Errorf("notifications/message shape: %s", m.Raw)
		}
	}
	for _, m := range c.matching(func(m mcpMsg) bool {
		return strings.HasPrefix(m.Method, "window/") || strings.HasPrefix(m.Method, "tools/") || strings.HasPrefix(m.Method, "workspace/")
	}) {
		t.Errorf("editor-protocol message on the MCP wire: %s", lastBytes(m.Raw, 300))
	}
}
