package e2e

// Contract tests of `agentls mcp` driven by the official Go MCP
// SDK client (github.com/modelcontextprotocol/go-sdk/mcp), from issue 9,
// docs/protocol.md's MCP section, docs/tools.md.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goClientVersions are the protocol versions the Go SDK client accepts.
var goClientVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// goClientLegacy is the newest version on which roots are not deprecated.
const goClientLegacy = "2025-11-25"

type goClientOpts struct {
	root     string         // --root
	settings map[string]any // the user's agentls/settings.json (nil: none)
	version  string         // ClientSessionOptions.ProtocolVersion ("" = SDK latest)
	roots    []string       // roots added before Connect
	copts    mcp.ClientOptions
}

type goClientConn struct {
	s   *mcp.ClientSession
	cmd *exec.Cmd
}

// goClientConnect starts `agentls mcp --root o.root` and connects the Go SDK client.
func goClientConnect(t *testing.T, ctx context.Context, o goClientOpts) *goClientConn {
	t.Helper()
	var env []string
	if o.settings != nil {
		cfg := t.TempDir()
		writeFile(t, filepath.Join(cfg, "agentls", "settings.json"), goClientJSON(t, o.settings))
		env = append(env, "XDG_CONFIG_HOME="+cfg)
	}
	cmd := harness.Command(t, []string{"mcp", "--root", o.root}, env...)
	errb := &lockedBuffer{}
	cmd.Stderr = errb
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-go-client", Version: "1.0"}, &o.copts)
	for _, r := range o.roots {
		client.AddRoots(&mcp.Root{URI: "file://" + r, Name: filepath.Base(r)})
	}
	var sopts *mcp.ClientSessionOptions
	if o.version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: o.version}
	}
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, sopts)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, errb.String())
	}
	t.Cleanup(func() { s.Close() })
	return &goClientConn{s: s, cmd: cmd}
}

func goClientJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func goClientText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// goClientCall calls a tool and fails the test on a protocol error.
func goClientCall(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return res, goClientText(res)
}

var goClientBypass = map[string]any{"mode": "bypass"}

func TestMCPGoClientReadAndEditResults(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Second)
	ws := resolvedWorkspace(t, map[string]string{"src/a.txt": "alpha\nbeta needle\ngamma\n"})
	c := goClientConnect(t, ctx, goClientOpts{root: ws, settings: goClientBypass})
	// The SDK's own handshake (the raw one is TestMCPRawVersionNegotiation).
	if ir := c.s.InitializeResult(); !slices.Contains(goClientVersions, ir.ProtocolVersion) || ir.ServerInfo.Name != "agentls" || !ir.Capabilities.Tools.ListChanged {
		t.Errorf("initialize result %+v: want a version the SDK knows, agentls, tools.listChanged", ir)
	}
	edit := map[string]any{"path": "src/a.txt", "edits": []any{map[string]any{"oldText": "gamma", "newText": "GAMMA"}}}

	// The texts are the read and edit scripts'.
	res, _ := goClientCall(t, ctx, c.s, "read", map[string]any{"path": "src/a.txt"})
	goClientCheckMeta(t, "read", res)

	res, text := goClientCall(t, ctx, c.s, "edit", edit)
	if res.IsError || !strings.Contains(text, "Edited src/a.txt") {
		t.Errorf("edit after read: isError=%v text=%q", res.IsError, text)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != "alpha\nbeta needle\nGAMMA\n" {
		t.Errorf("file after edit = %q", b)
	}
	d := goClientCheckMeta(t, "edit", res)
	if diff, _ := d["unifiedDiff"].(string); !strings.Contains(diff, "-gamma") || !strings.Contains(diff, "+GAMMA") {
		t.Errorf("edit _meta.details.unifiedDiff = %q", diff)
	}
	for _, k := range []string{"kind", "uri", "unifiedDiff", "edits", "firstChangedLine", "matchLevel", "oldHash", "newHash"} {
		if _, ok := d[k]; !ok {
			t.Errorf("edit _meta.details lacks %q (docs/protocol.md tools/details): %v", k, d)
		}
	}
	if strings.Contains(text, "+GAMMA") {
		t.Errorf("the diff (details) leaked into content: %q", text)
	}
}

// goClientCheckMeta asserts _meta.callId and _meta.details (with durationMs).
func goClientCheckMeta(t *testing.T, tool string, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if id, _ := res.Meta["callId"].(string); id == "" {
		t.Errorf("%s: _meta.callId absent: %v", tool, res.Meta)
	}
	d, _ := res.Meta["details"].(map[string]any)
	if d == nil {
		t.Errorf("%s: _meta.details absent: %v", tool, res.Meta)
		return nil
	}
	if _, ok := d["durationMs"]; !ok {
		t.Errorf("%s: _meta.details.durationMs absent: %v", tool, d)
	}
	return d
}

func TestMCPGoClientAsk(t *testing.T) {
	t.Parallel()
	// On the SDK's latest protocol, 2026-07-28, the question is an input
	// request answering the call and the client's answer comes with the
	// retried call (SEP-2322); the 2025 revisions are TestMCPRawElicitation's.
	// Action "" means the client has no elicitation.
	for _, tc := range []struct {
		action, decision string
		runs             bool
		want             string // in the result text
	}{
		{"accept", "allowOnce", true, "gosdk-ran"},
		{"accept", "rejectOnce", false, "denied by the user"},
		{"decline", "", false, "the MCP host declined the question"},
		{"", "", false, "the MCP host could not ask the user"},
	} {
		t.Run(cmp.Or(strings.TrimSpace(tc.action+" "+tc.decision), "no elicitation"), func(t *testing.T) {
			ctx := testCtx(t, 10*time.Second)
			// The user's ask rule asks; agentls's default mode alone
			// leaves the call to the MCP host.
			ws := resolvedWorkspace(t, map[string]string{".agentls/settings.json": `{"permissions":{"ask":["Bash(echo:*)"]}}`})
			var asked atomic.Int32
			o := goClientOpts{root: ws}
			if tc.action != "" {
				o.copts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					if !strings.Contains(goClientJSON(t, r.Params.RequestedSchema), `"Allow once"`) || !strings.Contains(r.Params.Message, "gosdk-out.txt") {
						t.Errorf("elicitation %q, schema %s", r.Params.Message, goClientJSON(t, r.Params.RequestedSchema))
					}
					return &mcp.ElicitResult{Action: tc.action, Content: map[string]any{"decision": tc.decision}}, nil
				}
			}
			c := goClientConnect(t, ctx, o)
			if v := c.s.InitializeResult().ProtocolVersion; v < "2026-07-28" {
				t.Fatalf("the go-sdk client negotiated %s, before multi-round-trip requests", v)
			}
			res, text := goClientCall(t, ctx, c.s, "bash", map[string]any{"command": "echo gosdk-ran > gosdk-out.txt && cat gosdk-out.txt"})
			_, err := os.Stat(filepath.Join(ws, "gosdk-out.txt"))
			if (err == nil) != tc.runs || res.IsError == tc.runs || !strings.Contains(text, tc.want) {
				t.Errorf("ran=%v isError=%v %q; want ran=%v and %q", err == nil, res.IsError, text, tc.runs, tc.want)
			}
			if n, want := asked.Load(), map[bool]int32{true: 1, false: 0}[tc.action != ""]; n != want {
				t.Errorf("asked %d times, want %d", n, want)
			}
		})
	}
}

// An image read over MCP is an ImageContent part of the file's bytes
// (which files are images is the read scripts'), with the result's _meta.
func TestMCPGoClientImage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Second)
	pic, err := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
	if err != nil {
		t.Fatal(err)
	}
	ws := resolvedWorkspace(t, map[string]string{"named.txt": string(pic)})
	c := goClientConnect(t, ctx, goClientOpts{root: ws})
	res, text := goClientCall(t, ctx, c.s, "read", map[string]any{"path": "named.txt"})
	var ic *mcp.ImageContent
	for _, part := range res.Content {
		if x, ok := part.(*mcp.ImageContent); ok {
			ic = x
		}
	}
	if res.IsError || ic == nil || ic.MIMEType != "image/png" || !bytes.Equal(ic.Data, pic) {
		t.Fatalf("read of a PNG: isError %v, image part %+v (text %q)", res.IsError, ic, text)
	}
	goClientCheckMeta(t, "read image", res)
}

func TestMCPGoClientCloseExits(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Second)
	ws := resolvedWorkspace(t, nil)
	c := goClientConnect(t, ctx, goClientOpts{root: ws, settings: goClientBypass})
	// A child left in the background by a finished command must not
	// outlive the session either.
	marker := fmt.Sprintf("gosdkclosebg%d", time.Now().UnixNano())
	res, text := goClientCall(t, ctx, c.s, "bash", map[string]any{"command": "sh -c 'sleep 100; true' " + marker + " > /dev/null 2>&1 &\necho started"})
	if res.IsError || !waitUntil(5*time.Second, func() bool { return len(processesWithArg(marker)) > 0 }) {
		t.Fatalf("bash: %q; the background child never ran", text)
	}
	start := time.Now()
	c.s.Close() // the SDK waits for in-flight calls, then closes stdin
	took := time.Since(start)
	// CommandTransport waits TerminateDuration (3 s) before SIGTERM:
	// returning well before that means agentls left by itself.
	if took > 2500*time.Millisecond {
		t.Errorf("agentls took %v to exit after the client closed its input", took)
	}
	if c.cmd.ProcessState == nil {
		t.Error("agentls still running after session close")
	}
	if !waitUntil(3*time.Second, func() bool { return len(processesWithArg(marker)) == 0 }) {
		t.Errorf("background child left after session close: %v", processesWithArg(marker))
		reapProcessesWithArg(t, marker)
	}
}

// Tools join the list with notifications/tools/list_changed: a deferred
// tool once tool_search activates it (activation by a call is internal/mcp's
// TestActivationSendsListChanged), the job tools once a background job
// starts; bash_output's wait sends notifications/progress (the job tools'
// texts are the bash scripts').
func TestMCPGoClientToolsJoinWithListChanged(t *testing.T) {
	slow(t)
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	ws := resolvedWorkspace(t, map[string]string{".agentls/tools/c_weather.json": `{"name": "c_weather", "description": "report the weather forecast", "inputSchema": {"type": "object", "properties": {}}, "command": "echo sunny", "readOnly": true, "deferred": true}`})
	changed := make(chan struct{}, 8)
	var mu sync.Mutex
	var progress []string
	o := goClientOpts{root: ws, settings: goClientBypass, version: goClientLegacy}
	o.copts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }
	o.copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}
	c := goClientConnect(t, ctx, o)
	listed := func(tool string) bool {
		lr, err := c.s.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(lr.Tools, func(tl *mcp.Tool) bool { return tl.Name == tool })
	}
	joined := func(after string, tools ...string) {
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Errorf("no list_changed after %s", after)
		}
		if !waitUntil(5*time.Second, func() bool { return !slices.ContainsFunc(tools, func(n string) bool { return !listed(n) }) }) {
			t.Errorf("tools/list after %s lacks one of %v", after, tools)
		}
	}
	for _, tl := range []string{"c_weather", "bash_output", "bash_kill"} {
		if listed(tl) {
			t.Fatalf("%s listed before it joined", tl)
		}
	}
	if res, text := goClientCall(t, ctx, c.s, "tool_search", map[string]any{"query": "weather forecast"}); res.IsError || !strings.Contains(text, "c_weather") {
		t.Fatalf("tool_search: isError=%v %q", res.IsError, text)
	}
	joined("tool_search activated c_weather", "c_weather")
	res, text := goClientCall(t, ctx, c.s, "bash", map[string]any{"command": "sleep 1.5; echo first; sleep 0.5; echo ready now; sleep 60", "run_in_background": true})
	if res.IsError || !strings.Contains(text, "job-1 is running in the background") {
		t.Fatalf("start: %s", text)
	}
	joined("the first job", "bash_output", "bash_kill")
	p := &mcp.CallToolParams{Name: "bash_output", Arguments: map[string]any{"job": "job-1", "wait": 10, "filter": "ready"}}
	p.SetProgressToken("jobs-tok")
	out, err := c.s.CallTool(ctx, p)
	if err != nil || !strings.HasPrefix(goClientText(out), "ready now\n") {
		t.Fatalf("bash_output: %v %s", err, goClientText(out))
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(progress, "|"); !strings.Contains(got, "first") {
		t.Errorf("no progress while bash_output waited: %q", got)
	}
	goClientCall(t, ctx, c.s, "bash_kill", map[string]any{"job": "job-1"})
}
