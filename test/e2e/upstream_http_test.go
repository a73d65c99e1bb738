package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/test/harness"
)

// httpSecret is a GitHub token the fixture's planted_secret returns; the
// masker must keep it from the model.
const httpSecret = "ghp_Z9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8cB7aQ"

// fakeHTTPUpstream is an in-process MCP server reachable over streamable HTTP
// (/mcp) and SSE (/sse); it records the headers of every request and can be
// switched off (every request gets 503) to break sessions.
type fakeHTTPUpstream struct {
	srv     *httptest.Server
	deleted atomic.Int64 // runs of delete_all
	mu      sync.Mutex
	hdrs    []http.Header
	down    int // 0 up, 1: every request 503, 2: every session request 404 (session gone)
}

func newFakeHTTPUpstream(t *testing.T) *fakeHTTPUpstream {
	t.Helper()
	u := &fakeHTTPUpstream{}
	server := mcp.NewServer(&mcp.Implementation{Name: "e2e-upstream", Version: "1.0.0"}, nil)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	server.AddTool(&mcp.Tool{Name: "echo", Description: "echo the text back", Annotations: ro,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + in.Text}}}, nil
		})
	server.AddTool(&mcp.Tool{Name: "planted_secret", Description: "Returns the deployment credentials.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deploy token: " + httpSecret + " (rotate monthly)"}}}, nil
		})
	server.AddTool(&mcp.Tool{Name: "delete_all", Description: "Deletes every record.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.deleted.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	get := func(*http.Request) *mcp.Server { return server }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hdrs = append(u.hdrs, r.Header.Clone())
		down := u.down
		u.mu.Unlock()
		switch {
		case down == 1:
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		case down == 2 && r.Header.Get("Mcp-Session-Id") != "":
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeHTTPUpstream) setDown(v int) { u.mu.Lock(); u.down = v; u.mu.Unlock() }

func (u *fakeHTTPUpstream) headers(name string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, h := range u.hdrs {
		if vs, ok := h[http.CanonicalHeaderKey(name)]; ok {
			for _, v := range vs {
				if !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// callUntil calls tool until its result contains want (upstream servers
// start in the background), returning the last result.
func callUntil(t *testing.T, ctx context.Context, c *harness.Client, tool string, args map[string]any, want string, d time.Duration) harness.Result {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := c.CallTool(ctx, tool, args)
		if strings.Contains(r.Text(), want) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func clientLogs(c *harness.Client) string {
	var b strings.Builder
	for _, n := range c.Notes("window/logMessage") {
		b.Write(n.Params)
		b.WriteByte('\n')
	}
	return b.String()
}

// Servers over streamable HTTP (every spelling of its type) and SSE from
// .agentls/mcp.json: calls reach them with the configured headers, ${env:…},
// ${NAME:-default} and ${workspaceFolder} expanded (an unset variable is
// reported naming the server) and no header value in any log; their tools
// are governed like any other; closing stdin ends agentls within 1 s with
// their sessions open.
func TestUpstreamHTTPTransports(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ctx := testCtx(t, 40*time.Second)
	up := newFakeHTTPUpstream(t)
	ws := t.TempDir()
	upstreamLifeConfig(t, ws, "servers", map[string]any{
		"h1": map[string]any{"type": "http", "url": up.srv.URL + "/mcp", "headers": map[string]any{
			"X-A": "${env:UPHTTP_TOKEN}", "X-B": "Bearer ${UPHTTP_TOKEN}", "X-C": "${UPHTTP_UNSET:-fallback}",
			"X-D": "[${UPHTTP_UNSET_TOO}]", "X-W": "${workspaceFolder}",
		}},
		"h2": map[string]any{"type": "streamable-http", "url": up.srv.URL + "/mcp"},
		"h3": map[string]any{"url": up.srv.URL + "/mcp"},
		"s1": map[string]any{"type": "sse", "url": up.srv.URL + "/sse", "headers": map[string]any{"X-S": "${env:UPHTTP_TOKEN}"}},
	})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"UPHTTP_TOKEN=tok-s3cr3t-123"},
		Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, map[string]any{"initializationOptions": map[string]any{"mode": "bypass", "permissions": map[string]any{"deny": []any{"mcp__h1__delete_all"}}}})
	for _, srv := range []string{"h1", "h2", "h3", "s1"} {
		r := callUntil(t, ctx, c, srv+"__echo", map[string]any{"text": "hi-" + srv}, "echo:hi-"+srv, 10*time.Second)
		if r.IsError || !strings.Contains(r.Text(), "echo:hi-"+srv) {
			t.Errorf("%s__echo: %s", srv, r.Text())
		}
	}
	for name, want := range map[string]string{
		"X-A": "tok-s3cr3t-123", "X-B": "Bearer tok-s3cr3t-123", "X-C": "fallback", "X-D": "[]", "X-W": ws, "X-S": "tok-s3cr3t-123",
	} {
		if got := up.headers(name); len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	logs := clientLogs(c)
	if !regexp.MustCompile(`h1[^\n]*UPHTTP_UNSET_TOO|UPHTTP_UNSET_TOO[^\n]*h1`).MatchString(logs) {
		t.Errorf("no window/logMessage naming server h1 and the unset variable UPHTTP_UNSET_TOO:\n%s", logs)
	}
	lf, _ := os.ReadFile(logFile)
	if strings.Contains(logs+string(lf), "tok-s3cr3t-123") {
		t.Errorf("a header value reached the logs")
	}

	// Governed like any tool: found by tool_search, its secrets masked, a
	// deny rule blocks its tool before it runs.
	wantContains(t, "tool_search", c.CallTool(ctx, "tool_search", map[string]any{"query": "deployment credentials"}).Text(), "h1__planted_secret")
	r := c.CallTool(ctx, "h1__planted_secret", map[string]any{})
	wantResult(t, "h1__planted_secret", r, false, "rotate monthly")
	wantLacks(t, "h1__planted_secret", r.Text(), httpSecret)
	wantResult(t, "denied h1__delete_all", c.CallTool(ctx, "h1__delete_all", map[string]any{}), true, "mcp__h1__delete_all")
	if n := up.deleted.Load(); n != 0 {
		t.Errorf("the denied tool ran %d times upstream", n)
	}

	// Closing stdin ends the process within 1 s (docs/protocol.md), upstream
	// HTTP and SSE sessions included.
	start := time.Now()
	c.CloseStdin()
	if code := c.Wait(5 * time.Second); code < 0 || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("closing stdin with HTTP/SSE upstreams connected: exit after %v (code %d), want within 1 s", time.Since(start), code)
	}
}

// A remote session that breaks (the session gone, 404; the server failing,
// 503) answers "unavailable … restarting in …" and is reconnected once the
// server answers again; a server gone and back on its address is
// internal/upstream's TestRemoteServerRestart.
func TestUpstreamRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mode int
	}{
		{"session gone (404)", 2},
		{"server error (503)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 40*time.Second)
			up := newFakeHTTPUpstream(t)
			ws := t.TempDir()
			upstreamLifeConfig(t, ws, "servers", map[string]any{"up": map[string]any{"type": "http", "url": up.srv.URL + "/mcp"}})
			c := harness.Start(t, harness.Options{Root: ws})
			c.Initialize(ctx, nil)
			if r := callUntil(t, ctx, c, "up__echo", map[string]any{"text": "1"}, "echo:1", 10*time.Second); r.IsError {
				t.Fatalf("up__echo: %s", r.Text())
			}
			up.setDown(tc.mode)
			r := c.CallTool(ctx, "up__echo", map[string]any{"text": "2"})
			if !r.IsError {
				t.Fatalf("a call to a broken HTTP session succeeded: %s", r.Text())
			}
			r2 := c.CallTool(ctx, "up__echo", map[string]any{"text": "3"})
			if tc.mode == 2 {
				// The first call may carry the transport error itself; the next says unavailable.
				wantContains(t, "broken session", r.Text()+"\n"+r2.Text(), "unavailable", "restarting in")
			}
			up.setDown(0)
			r = callUntil(t, ctx, c, "up__echo", map[string]any{"text": "4"}, "echo:4", 8*time.Second)
			if !strings.Contains(r.Text(), "echo:4") {
				t.Errorf("not back within 8 s: %s", r.Text())
			}
		})
	}
}

func TestUpstreamSecretsInURLsAndRedirects(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 40*time.Second)
	// Another host: the target of a redirect.
	other := newFakeHTTPUpstream(t)
	otherURL := strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	// A port nothing listens on.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	du, _ := url.Parse(deadURL)
	du.User = url.UserPassword("alice", "pw-in-url-77")
	du.Path = "/mcp"
	du.RawQuery = "key=query-secret-88"

	ws := t.TempDir()
	upstreamLifeConfig(t, ws, "mcpServers", map[string]any{
		"redir": map[string]any{"type": "http", "url": redirector.URL + "/mcp", "headers": map[string]any{"X-Secret": "hdr-secret-99", "Authorization": "Bearer hdr-secret-99"}},
		"dead":  map[string]any{"type": "http", "url": du.String()},
	})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, nil)
	r := callUntil(t, ctx, c, "dead__echo", map[string]any{"text": "x"}, "unavailable", 3*time.Second)
	if !r.IsError {
		t.Errorf("a server that cannot be reached answered: %s", r.Text())
	}
	wantContains(t, "unreachable server", r.Text(), "unavailable", "restarting in")
	c.CallTool(ctx, "redir__echo", map[string]any{"text": "x"})
	// The log has both servers' lines before it is checked for what they lack.
	var lf []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		lf, _ = os.ReadFile(logFile)
		if bytes.Contains(lf, []byte("mcpServer=redir")) && bytes.Contains(lf, []byte(`request failed" mcpServer=dead`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the debug log never recorded both servers:\n%s", lf)
		}
	}
	all := r.Text() + clientLogs(c) + string(lf)
	wantLacks(t, "messages and logs", all, "pw-in-url-77", "query-secret-88", "hdr-secret-99")
	for _, h := range []string{"X-Secret", "Authorization"} {
		if v := other.headers(h); len(v) > 0 {
			t.Errorf("header %s went across a redirect to another host: %q", h, v)
		}
	}
}
