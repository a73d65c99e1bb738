package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// fakeHTTPUpstream is an in-process MCP server reachable over streamable HTTP
// (/mcp) and SSE (/sse); it records the headers of every request and can be
// switched off (every request gets 503) to break sessions.
type fakeHTTPUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hdrs []http.Header
	down int // 0 up, 1: every request 503, 2: every session request 404 (session gone)
}

const upstreamBigLines = 1500

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
	server.AddTool(&mcp.Tool{Name: "big", Description: "a long text", Annotations: ro,
		InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var b strings.Builder
			for i := 1; i <= upstreamBigLines; i++ {
				fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("x", 50))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil
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

func writeMCPJSON(t *testing.T, ws string, cfg map[string]any) {
	t.Helper()
	b, _ := json.MarshalIndent(cfg, "", "  ")
	writeFiles(t, ws, map[string]string{".agentls/mcp.json": string(b)})
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

func TestUpstreamHTTPTransports(t *testing.T) {
	// Not parallel: it bounds a latency that busy neighbours on 2 cores stretch.
	ctx := testCtx(t, 40*time.Second)
	up := newFakeHTTPUpstream(t)
	ws := t.TempDir()
	writeMCPJSON(t, ws, map[string]any{"servers": map[string]any{
		"h1": map[string]any{"type": "http", "url": up.srv.URL + "/mcp", "headers": map[string]any{
			"X-A": "${env:A3F_TOKEN}", "X-B": "Bearer ${A3F_TOKEN}", "X-C": "${A3F_UNSET:-fallback}",
			"X-D": "[${A3F_UNSET_TOO}]", "X-W": "${workspaceFolder}",
		}},
		"h2": map[string]any{"type": "streamable-http", "url": up.srv.URL + "/mcp"},
		"h3": map[string]any{"url": up.srv.URL + "/mcp"},
		"s1": map[string]any{"type": "sse", "url": up.srv.URL + "/sse", "headers": map[string]any{"X-S": "${env:A3F_TOKEN}"}},
	}})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Env: []string{"A3F_TOKEN=tok-s3cr3t-123"},
		Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, nil)
	for _, srv := range []string{"h1", "h2", "h3", "s1"} {
		t0 := time.Now()
		r := callUntil(t, ctx, c, srv+"__echo", map[string]any{"text": "hi-" + srv}, "echo:hi-"+srv, 10*time.Second)
		t.Logf("%s took %v: %s", srv, time.Since(t0), r.Text())
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
	if !regexp.MustCompile(`h1[^\n]*A3F_UNSET_TOO|A3F_UNSET_TOO[^\n]*h1`).MatchString(logs) {
		t.Errorf("no window/logMessage naming server h1 and the unset variable A3F_UNSET_TOO:\n%s", logs)
	}
	lf, _ := os.ReadFile(logFile)
	if strings.Contains(logs+string(lf), "tok-s3cr3t-123") {
		t.Errorf("a header value reached the logs")
	}

	// Governance: over 65,536 bytes is cut at a line boundary with a read call that continues.
	r := c.CallTool(ctx, "h1__big", map[string]any{})
	text := r.Text()
	if len(text) > 65536+2048 {
		t.Errorf("upstream text of %d bytes not cut to the 65,536-byte budget", len(text))
	}
	m := regexp.MustCompile(`read (\{"path": ?"[^"]+", ?"offset": ?\d+\})`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no read {path, offset} call in the cut text's notice:\n%s", text[max(0, len(text)-1500):])
	}
	var args struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
	}
	json.Unmarshal([]byte(m[1]), &args)
	last := 0
	for _, l := range regexp.MustCompile(`(?m)^line (\d{4}) x+$`).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(l[1])
		last = max(last, n)
	}
	if last == 0 || last >= upstreamBigLines {
		t.Fatalf("cut text shows up to line %d of %d", last, upstreamBigLines)
	}
	wantContains(t, "budget notice", text, fmt.Sprintf("1-%d", last))
	rr := c.CallTool(ctx, "read", map[string]any{"path": args.Path, "offset": args.Offset, "limit": 2})
	if rr.IsError {
		t.Fatalf("the notice's call %s: %s", m[1], rr.Text())
	}
	if want := fmt.Sprintf("line %04d ", last+1); !strings.Contains(rr.Text(), want) || strings.Contains(rr.Text(), fmt.Sprintf("line %04d ", last)) {
		t.Errorf("the notice's call %s does not continue after the cut (last shown line %d):\n%s", m[1], last, rr.Text())
	}

	// Closing stdin ends the process within 1 s (docs/protocol.md), upstream
	// HTTP and SSE sessions included.
	start := time.Now()
	c.CloseStdin()
	if code := c.Wait(5 * time.Second); code < 0 || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("closing stdin with HTTP/SSE upstreams connected: exit after %v (code %d), want within 1 s", time.Since(start), code)
	}
	t.Logf("exited after %v", time.Since(start))
}

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
			writeMCPJSON(t, ws, map[string]any{"servers": map[string]any{"up": map[string]any{"type": "http", "url": up.srv.URL + "/mcp"}}})
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
			t.Logf("while broken:\n%s\n%s", r.Text(), r2.Text())
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
	t.Run("server gone and back on the same port", func(t *testing.T) {
		ctx := testCtx(t, 40*time.Second)
		up := newFakeHTTPUpstream(t)
		addr := up.srv.Listener.Addr().String()
		ws := t.TempDir()
		writeMCPJSON(t, ws, map[string]any{"servers": map[string]any{"up": map[string]any{"type": "http", "url": up.srv.URL + "/mcp"}}})
		c := harness.Start(t, harness.Options{Root: ws})
		c.Initialize(ctx, nil)
		if r := callUntil(t, ctx, c, "up__echo", map[string]any{"text": "1"}, "echo:1", 10*time.Second); r.IsError {
			t.Fatalf("up__echo: %s", r.Text())
		}
		up.srv.CloseClientConnections()
		up.srv.Close()
		r := c.CallTool(ctx, "up__echo", map[string]any{"text": "2"})
		r2 := c.CallTool(ctx, "up__echo", map[string]any{"text": "3"})
		t.Logf("while gone:\n%s\n%s", r.Text(), r2.Text())
		wantContains(t, "server gone", r.Text()+"\n"+r2.Text(), "unavailable", "restarting in")
		// Same address again, a fresh server (sessions lost).
		up2 := newFakeHTTPUpstream(t)
		up2.srv.Close()
		var l net.Listener
		var err error
		for i := 0; i < 50; i++ {
			if l, err = net.Listen("tcp", addr); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Skipf("cannot listen on %s again: %v", addr, err)
		}
		srv := &http.Server{Handler: up2.srv.Config.Handler}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		start := time.Now()
		r = callUntil(t, ctx, c, "up__echo", map[string]any{"text": "4"}, "echo:4", 8*time.Second)
		if !strings.Contains(r.Text(), "echo:4") {
			t.Errorf("not restarted within 8 s: %s", r.Text())
		}
		t.Logf("back after %v", time.Since(start))
	})
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
	writeMCPJSON(t, ws, map[string]any{"mcpServers": map[string]any{
		"redir": map[string]any{"type": "http", "url": redirector.URL + "/mcp", "headers": map[string]any{"X-Secret": "hdr-secret-99", "Authorization": "Bearer hdr-secret-99"}},
		"dead":  map[string]any{"type": "http", "url": du.String()},
	}})
	logFile := filepath.Join(t.TempDir(), "agentls.log")
	c := harness.Start(t, harness.Options{Root: ws, Args: []string{"--log-file", logFile, "--log-level", "debug"}})
	c.Initialize(ctx, nil)
	r := callUntil(t, ctx, c, "dead__echo", map[string]any{"text": "x"}, "unavailable", 3*time.Second)
	t.Logf("dead__echo: %s", r.Text())
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
