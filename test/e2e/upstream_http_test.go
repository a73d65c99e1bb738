package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/test/harness"
	"github.com/agentls/agentls/test/httpfixture"
)

// httpSecret is a GitHub token the fixture's tool returns; the masker must
// keep it from the model.
const httpSecret = "ghp_Z9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8cB7aQ"

// httpUpstream is an MCP server over streamable HTTP in the test process,
// at an address that survives stop and start (a restarted remote server).
type httpUpstream struct {
	t       *testing.T
	http    *httpfixture.Server
	deleted atomic.Int64 // runs of delete_all

	mu   sync.Mutex
	auth []string // Authorization of every request
}

func newHTTPUpstream(t *testing.T) *httpUpstream {
	u := &httpUpstream{t: t, http: httpfixture.New(t)}
	u.start()
	return u
}

func (u *httpUpstream) url() string { return "http://" + u.http.Addr() + "/mcp" }

// start serves a fresh server (no sessions) on the upstream's address.
func (u *httpUpstream) start() {
	u.t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "http-fixture", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo_team", Description: "Echoes the X-Team request header the server received."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "team=" + req.Extra.Header.Get("X-Team")}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "planted_secret", Description: "Returns the deployment credentials."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deploy token: " + httpSecret + " (rotate monthly)"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "delete_all", Description: "Deletes every record."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			u.deleted.Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deleted"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	u.http.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
}

// stop closes the listener and every connection, event streams included.
func (u *httpUpstream) stop() { u.http.Stop() }

func (u *httpUpstream) authorizations() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.auth...)
}

// startHTTPUpstream runs agentls with the upstream configured in the VS Code
// shape, its headers taken from agentls's environment, and a deny rule for
// one of its tools.
func startHTTPUpstream(t *testing.T, up *httpUpstream) (*harness.Client, context.Context) {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"servers": map[string]any{"remote": map[string]any{
		"type": "http",
		"url":  up.url(),
		"headers": map[string]string{
			"Authorization": "Bearer ${env:AGENTLS_E2E_API_TOKEN}",
			"X-Team":        "${AGENTLS_E2E_TEAM:-nobody}",
		},
	}}})
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".agentls/mcp.json": string(cfg)})
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"AGENTLS_E2E_API_TOKEN=e2e-bearer-7f3a", "AGENTLS_E2E_TEAM=blue"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{
		"mode":        "bypass",
		"permissions": map[string]any{"deny": []any{"mcp__remote__delete_all"}},
	}})
	waitTool(t, c, ctx, "remote__echo_team")
	return c, ctx
}

// waitTool waits until the upstream's tools are registered: servers start
// in the background after initialize.
func waitTool(t *testing.T, c *harness.Client, ctx context.Context, name string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", map[string]any{"includeDeferred": true}, &list); err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if tool.Name == name {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not registered after 5 s", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A streamable-HTTP server from .agentls/mcp.json: tool_search finds its
// tools, calls reach it with the ${env:…}-expanded headers, a secret in its
// result is masked, and a deny rule blocks its tool before it runs.
func TestHTTPUpstreamToolsThroughAgentls(t *testing.T) {
	t.Parallel()
	up := newHTTPUpstream(t)
	c, ctx := startHTTPUpstream(t, up)

	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "team header echo"})
	if r.IsError || !strings.Contains(r.Text(), "remote__echo_team") {
		t.Fatalf("tool_search does not find remote__echo_team: %s", r.Text())
	}
	if r := c.CallTool(ctx, "remote__echo_team", map[string]any{}); r.IsError || r.Text() != "team=blue" {
		t.Fatalf("remote__echo_team = %q (isError %v), want team=blue", r.Text(), r.IsError)
	}
	auth := up.authorizations()
	if len(auth) == 0 {
		t.Fatal("the upstream saw no request")
	}
	for i, a := range auth {
		if a != "Bearer e2e-bearer-7f3a" {
			t.Fatalf("request %d carried Authorization %q, want the expanded ${env:AGENTLS_E2E_API_TOKEN}", i, a)
		}
	}

	c.CallTool(ctx, "tool_search", map[string]any{"query": "deployment credentials"})
	r = c.CallTool(ctx, "remote__planted_secret", map[string]any{})
	if r.IsError || !strings.Contains(r.Text(), "rotate monthly") {
		t.Fatalf("remote__planted_secret: %s", r.Text())
	}
	if strings.Contains(r.Text(), httpSecret) {
		t.Errorf("the upstream's secret reached the model: %s", r.Text())
	}

	c.CallTool(ctx, "tool_search", map[string]any{"query": "deletes every record"})
	r = c.CallTool(ctx, "remote__delete_all", map[string]any{})
	if !r.IsError || !strings.Contains(r.Text(), "mcp__remote__delete_all") {
		t.Errorf("denied remote__delete_all = %q (isError %v), want a refusal naming the rule", r.Text(), r.IsError)
	}
	if n := up.deleted.Load(); n != 0 {
		t.Errorf("the denied tool ran %d times upstream", n)
	}
}

// Stopping the HTTP server mid-session makes its tools answer
// "unavailable" with the restart delay; once it is back at the same
// address, a call after the backoff works again.
func TestHTTPUpstreamRestart(t *testing.T) {
	t.Parallel()
	up := newHTTPUpstream(t)
	c, ctx := startHTTPUpstream(t, up)
	c.CallTool(ctx, "tool_search", map[string]any{"query": "team header echo"})
	if r := c.CallTool(ctx, "remote__echo_team", map[string]any{}); r.IsError {
		t.Fatalf("first call: %s", r.Text())
	}

	up.stop()
	r := c.CallTool(ctx, "remote__echo_team", map[string]any{})
	if !r.IsError || !strings.Contains(r.Text(), `remote__echo_team is unavailable: MCP server "remote" stopped`) || !strings.Contains(r.Text(), "restarting in") {
		t.Fatalf("call while the server is down = %q, want the unavailable message", r.Text())
	}

	up.start()
	deadline := time.Now().Add(4 * time.Second)
	for {
		r = c.CallTool(ctx, "remote__echo_team", map[string]any{})
		if !r.IsError {
			break
		}
		if !strings.Contains(r.Text(), "unavailable") {
			t.Fatalf("call after the server came back = %q", r.Text())
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 4 s after the server came back: %s", r.Text())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r.Text() != "team=blue" {
		t.Errorf("after the restart = %q", r.Text())
	}
}

// Configuration mistakes of HTTP servers are reported (window/logMessage)
// naming the server and what to fix; an unset variable is reported but its
// server is kept.
func TestHTTPUpstreamConfigErrors(t *testing.T) {
	t.Parallel()
	up := newHTTPUpstream(t)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"badurl":   map[string]any{"type": "http", "url": "ftp://example.com/mcp"},
		"badtype":  map[string]any{"type": "websocket", "url": "ws://example.com/"},
		"nourl":    map[string]any{"type": "sse"},
		"unsetvar": map[string]any{"url": up.url(), "headers": map[string]string{"Authorization": "Bearer ${env:AGENTLS_E2E_UNSET_TOKEN}"}},
	}})
	c, _, ctx := start(t, map[string]string{".agentls/mcp.json": string(cfg)})
	for _, want := range []string{
		`server \"badurl\": url \"ftp://example.com/mcp\" must start with http:// or https://`,
		`server \"badtype\": type \"websocket\" is not supported (use \"stdio\", \"http\" or \"sse\")`,
		`server \"nourl\": type \"sse\" needs a \"url\"`,
		`server \"unsetvar\": header \"Authorization\": environment variable AGENTLS_E2E_UNSET_TOKEN is not set`,
	} {
		if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), want)
		}); !ok {
			t.Errorf("no window/logMessage containing %s; got %v", want, c.Notes("window/logMessage"))
		}
	}
	// The server with the unset variable still runs (with an empty token).
	waitTool(t, c, ctx, "unsetvar__echo_team")
	r := c.CallTool(ctx, "tool_search", map[string]any{"query": "team header echo"})
	if !strings.Contains(r.Text(), "unsetvar__echo_team") {
		t.Fatalf("the server with an unset variable did not load: %s", r.Text())
	}
	if r := c.CallTool(ctx, "unsetvar__echo_team", map[string]any{}); r.IsError || r.Text() != "team=" {
		t.Errorf("unsetvar__echo_team = %q (isError %v)", r.Text(), r.IsError)
	}
}
