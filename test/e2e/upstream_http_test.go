package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/test/harness"
)

// fakeHTTPUpstream is an in-process MCP server with an echo tool over
// streamable HTTP (/mcp) and SSE (/sse); it records the headers of every
// request and can be switched off to break sessions.
type fakeHTTPUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hdrs []http.Header
	down int // 0 up, 1: every request 503, 2: every session request 404 (session gone)
}

func newFakeHTTPUpstream(t *testing.T) *fakeHTTPUpstream {
	t.Helper()
	u := &fakeHTTPUpstream{}
	server := mcp.NewServer(&mcp.Implementation{Name: "e2e-upstream", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{Name: "echo", Description: "echo the text back", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + in.Text}}}, nil
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
		case down == 2 && r.Header.Get("Mcp-Session-Id") != "":
			http.Error(w, "session not found", http.StatusNotFound)
		default:
			mux.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeHTTPUpstream) setDown(v int) { u.mu.Lock(); u.down = v; u.mu.Unlock() }

// headers is the distinct values of header name over every request.
func (u *fakeHTTPUpstream) headers(name string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, h := range u.hdrs {
		for _, v := range h[http.CanonicalHeaderKey(name)] {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
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

// Servers over streamable HTTP and SSE from .agentls/mcp.json: calls reach
// them with the configured headers, ${env:…}, ${NAME:-default} and
// ${workspaceFolder} expanded (an unset variable is reported naming the
// server) and no header value in any log; closing stdin ends agentls
// within 1 s with their sessions open. Type spellings and expansion rules
// are internal/upstream's TestParseConfigTransportsAndExpansion, headers
// kept from a redirect's other host its TestHeadersStayOnTheConfiguredOrigin,
// a URL's password and query kept from logs and messages its
// TestRemoteServerUnreachable and TestRedactURLKeepsCredentialsOutOfMessages.
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
		"s1": map[string]any{"type": "sse", "url": up.srv.URL + "/sse", "headers": map[string]any{"X-S": "${env:UPHTTP_TOKEN}"}},
	})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"UPHTTP_TOKEN=tok-s3cr3t-123"},
		Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, bypass())
	for _, srv := range []string{"h1", "s1"} {
		if r := callUntil(t, ctx, c, srv+"__echo", map[string]any{"text": "hi-" + srv}, "echo:hi-"+srv, 10*time.Second); r.IsError || !strings.Contains(r.Text(), "echo:hi-"+srv) {
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
	logs := strings.Join(logMessages(c, 0), "\n")
	if !regexp.MustCompile(`h1[^\n]*UPHTTP_UNSET_TOO|UPHTTP_UNSET_TOO[^\n]*h1`).MatchString(logs) {
		t.Errorf("no window/logMessage naming server h1 and the unset variable UPHTTP_UNSET_TOO:\n%s", logs)
	}
	lf, _ := os.ReadFile(logFile)
	if strings.Contains(logs+string(lf), "tok-s3cr3t-123") {
		t.Errorf("a header value reached the logs")
	}
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
	for name, mode := range map[string]int{"session gone (404)": 2, "server error (503)": 1} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t, 40*time.Second)
			up := newFakeHTTPUpstream(t)
			ws := t.TempDir()
			upstreamLifeConfig(t, ws, "servers", map[string]any{"up": map[string]any{"type": "http", "url": up.srv.URL + "/mcp"}})
			c := harness.Start(t, harness.Options{Root: ws})
			c.Initialize(ctx, nil)
			if r := callUntil(t, ctx, c, "up__echo", map[string]any{"text": "1"}, "echo:1", 10*time.Second); r.IsError {
				t.Fatalf("up__echo: %s", r.Text())
			}
			up.setDown(mode)
			r := c.CallTool(ctx, "up__echo", map[string]any{"text": "2"})
			if !r.IsError {
				t.Fatalf("a call to a broken HTTP session succeeded: %s", r.Text())
			}
			r2 := c.CallTool(ctx, "up__echo", map[string]any{"text": "3"})
			if mode == 2 {
				// The first call may carry the transport error itself; the next says unavailable.
				wantContains(t, "broken session", r.Text()+"\n"+r2.Text(), "unavailable", "restarting in")
			}
			up.setDown(0)
			if r = callUntil(t, ctx, c, "up__echo", map[string]any{"text": "4"}, "echo:4", 8*time.Second); !strings.Contains(r.Text(), "echo:4") {
				t.Errorf("not back within 8 s: %s", r.Text())
			}
		})
	}
}
