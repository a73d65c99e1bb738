package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/test/httpfixture"
)

// tokenHeader is the header the fixture server records.
const tokenHeader = "X-Test-Token"

// fixture is an in-process MCP server over HTTP whose address survives a
// stop and a start, as a restarted remote server's does.
type fixture struct {
	t         *testing.T
	transport string // TransportHTTP or TransportSSE
	http      *httpfixture.Server
	extra     func(*sdk.Server)

	mu      sync.Mutex
	tokens  []string // tokenHeader of every request
	missing int      // requests without it
}

func newFixture(t *testing.T, transport string) *fixture {
	return newFixtureWith(t, transport, nil)
}

// newFixtureWith is newFixture with more tools: extra adds them to each
// server start makes.
func newFixtureWith(t *testing.T, transport string, extra func(*sdk.Server)) *fixture {
	f := &fixture{t: t, transport: transport, extra: extra, http: httpfixture.New(t)}
	f.start()
	return f
}

// url is the endpoint to configure.
func (f *fixture) url() string { return "http://" + f.http.Addr() + "/mcp" }

// start serves a fresh MCP server (new sessions, as after a restart) on
// the fixture's address.
func (f *fixture) start() {
	f.t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "fixture", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo_token", Description: "echoes the token header"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		f.mu.Lock()
		last := f.tokens[len(f.tokens)-1]
		f.mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "token=" + last}}}, nil, nil
	})
	if f.extra != nil {
		f.extra(srv)
	}
	var h http.Handler
	if f.transport == TransportSSE {
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	} else {
		h = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if v := r.Header.Get(tokenHeader); v != "" {
			f.tokens = append(f.tokens, v)
		} else {
			f.missing++
		}
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	})
	f.http.Start(record)
}

// stop ends the server: the listener and every open connection.
func (f *fixture) stop() { f.http.Stop() }

func (f *fixture) seen() (tokens []string, missing int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tokens...), f.missing
}

// syncBuffer is a log sink tests read while servers write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startManager registers cfg and waits for its first start.
func startManager(t *testing.T, cfg ServerConfig) (*Manager, *tools.Executor, *syncBuffer) {
	t.Helper()
	reg := tools.NewRegistry()
	logs := &syncBuffer{}
	m, err := Register(context.Background(), reg, []ServerConfig{cfg}, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m, &tools.Executor{Registry: reg, Env: &tools.Env{}, Permission: tools.AllowAll{}}, logs
}

// call runs an upstream tool through the executor, activating it first as
// tool_search would.
func call(t *testing.T, x *tools.Executor, name string) tools.Result {
	t.Helper()
	x.Registry.Activate(name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return x.Call(ctx, tools.Request{Name: name, Arguments: json.RawMessage(`{}`)}, nil)
}

// An http or sse server is reached with the configured headers on every
// request, its tools are proxied as <server>__<tool>, it has no PID, and
// the header values never reach the log.
func TestRemoteServerCallsCarryHeaders(t *testing.T) {
	const token = "tok-abc123-never-logged"
	for _, transport := range []string{TransportHTTP, TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			f := newFixture(t, transport)
			m, x, logs := startManager(t, ServerConfig{Name: "remote", Type: transport, URL: f.url(), Headers: map[string]string{tokenHeader: token}})
			r := call(t, x, "remote__echo_token")
			if r.IsError || r.TextOf() != "token="+token {
				t.Fatalf("remote__echo_token = %q (isError %v), want %q", r.TextOf(), r.IsError, "token="+token)
			}
			if up, _ := r.Details["upstream"].(map[string]any); up["transport"] != transport {
				t.Errorf("details.upstream = %v, want transport %q", r.Details["upstream"], transport)
			}
			if pids := m.PIDs(); len(pids) != 0 {
				t.Errorf("PIDs() = %v, want none for a remote server", pids)
			}
			m.Close()
			if _, missing := f.seen(); missing != 0 {
				t.Errorf("%d requests without %s", missing, tokenHeader)
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("the log holds the header value:\n%s", logs)
			}
		})
	}
}

// A remote server that goes away makes its tools answer "unavailable" with
// the restart delay; once it is back, a call after the backoff works.
func TestRemoteServerRestart(t *testing.T) {
	for _, transport := range []string{TransportHTTP, TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			f := newFixture(t, transport)
			_, x, logs := startManager(t, ServerConfig{Name: "remote", Type: transport, URL: f.url(), Headers: map[string]string{tokenHeader: "t0ken-value"}})
			if r := call(t, x, "remote__echo_token"); r.IsError {
				t.Fatalf("first call: %s", r.TextOf())
			}
			f.stop()
			r := call(t, x, "remote__echo_token")
			t.Logf("while stopped: %s", r.TextOf())
			if !r.IsError || !strings.Contains(r.TextOf(), "remote__echo_token is unavailable: MCP server \"remote\" stopped") || !strings.Contains(r.TextOf(), "restarting in") {
				t.Fatalf("call while stopped = %q, want the unavailable message", r.TextOf())
			}
			f.start()
			deadline := time.Now().Add(4 * time.Second)
			for {
				r = call(t, x, "remote__echo_token")
				if !r.IsError {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no successful call after the server came back; last: %s\nlog:\n%s", r.TextOf(), logs)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if r.TextOf() != "token=t0ken-value" {
				t.Errorf("after restart = %q", r.TextOf())
			}
			if strings.Contains(logs.String(), "t0ken-value") {
				t.Errorf("the log holds the header value:\n%s", logs)
			}
		})
	}
}

// Headers go to the configured origin only: a redirect to another host
// does not carry the token.
func TestHeadersStayOnTheConfiguredOrigin(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["other"] = r.Header.Get("Authorization")
		mu.Unlock()
	}))
	defer other.Close()
	// "localhost" is another host than the "127.0.0.1" configured.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["origin"] = r.Header.Get("Authorization")
		mu.Unlock()
		http.Redirect(w, r, otherURL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	c := newHTTPClient(ServerConfig{URL: origin.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer secret"}}, slog.New(slog.DiscardHandler))
	resp, err := c.Get(origin.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if got["origin"] != "Bearer secret" {
		t.Errorf("origin got Authorization %q, want the configured value", got["origin"])
	}
	if v, ok := got["other"]; !ok || v != "" {
		t.Errorf("redirect target got Authorization %q (reached: %v), want none", v, ok)
	}
}

// A server that cannot be reached at all registers no tools, and its
// failure is logged with the reason but without the URL's user info and
// query (which may hold a password or a key).
func TestRemoteServerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens here now
	m, x, logs := startManager(t, ServerConfig{Name: "gone", Type: TransportHTTP, URL: "http://alice:pw-secret@" + addr + "/mcp?key=qk-secret"})
	if got := x.Registry.List(true); len(got) != 0 {
		t.Errorf("an unreachable server registered %d tools", len(got))
	}
	m.Close()
	log := logs.String()
	if want := `MCP server \"gone\" (http://` + addr + `/mcp) did not start`; !strings.Contains(log, want) || !strings.Contains(log, "connection refused") {
		t.Errorf("log lacks %s ... connection refused:\n%s", want, log)
	}
	if strings.Contains(log, "qk-secret") || strings.Contains(log, "pw-secret") {
		t.Errorf("the log holds the URL's query or password:\n%s", log)
	}
}

// recordingReporter keeps the progress a call reported.
type recordingReporter struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recordingReporter) Progress(p tools.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, p.Message)
}

func (r *recordingReporter) Details(map[string]any) {}

func (r *recordingReporter) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// Over streamable HTTP, as over stdio: progress reaches the caller,
// cancelling a call cancels it upstream, a tools/list_changed registers new
// tools, and Update with a changed header reconnects with the new value.
func TestRemoteServerProgressCancelListChangedUpdate(t *testing.T) {
	started := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	var mcpServer *sdk.Server
	f := newFixtureWith(t, TransportHTTP, func(srv *sdk.Server) {
		mcpServer = srv
		sdk.AddTool(srv, &sdk.Tool{Name: "slow"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2, Message: "half way"})
			started <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		})
	})
	cfg := ServerConfig{Name: "remote", Type: TransportHTTP, URL: f.url(), Headers: map[string]string{tokenHeader: "first"}}
	m, x, _ := startManager(t, cfg)

	rep := &recordingReporter{}
	x.Registry.Activate("remote__slow")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() {
		done <- x.Call(ctx, tools.Request{Name: "remote__slow", Arguments: json.RawMessage(`{}`)}, func(string, string) tools.Reporter { return rep })
	}()
	select {
	case <-started:
	case <-time.After(3 * time.Second):
		t.Fatal("the upstream did not receive the call")
	}
	for deadline := time.Now().Add(3 * time.Second); len(rep.messages()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream's progress did not reach the caller")
		}
	}
	cancel()
	select {
	case <-cancelled:
	case <-time.After(3 * time.Second):
		t.Fatal("cancelling the call did not cancel it upstream")
	}
	if r := <-done; !r.IsError || !strings.Contains(r.TextOf(), "cancelled") {
		t.Errorf("cancelled call = %q", r.TextOf())
	}
	if got := rep.messages(); len(got) != 1 || got[0] != "half way" {
		t.Errorf("progress = %q, want [half way]", got)
	}

	sdk.AddTool(mcpServer, &sdk.Tool{Name: "added_later"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "new"}}}, nil, nil
	})
	deadline := time.Now().Add(3 * time.Second)
	for _, ok := x.Registry.Lookup("remote__added_later"); !ok; _, ok = x.Registry.Lookup("remote__added_later") {
		if time.Now().After(deadline) {
			t.Fatal("a tool added upstream (tools/list_changed) was not registered")
		}
		time.Sleep(20 * time.Millisecond)
	}

	cfg.Headers = map[string]string{tokenHeader: "second"}
	if err := m.Update([]ServerConfig{cfg}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(3 * time.Second)
	for {
		r := call(t, x, "remote__echo_token")
		if r.TextOf() == "token=second" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Update the call says %q, want token=second", r.TextOf())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A tool whose name is taken (here by a tool registered first) is not
// offered, and the user hears why: OnProblem gets it, also when it was
// found before OnProblem was set.
func TestUnregisteredToolIsReported(t *testing.T) {
	f := newFixture(t, TransportHTTP)
	reg := tools.NewRegistry()
	taken, err := tools.NewTool("remote__echo_token", "registered first", map[string]any{"type": "object"})
	if err != nil {
		t.Fatal(err)
	}
	taken.SetHandler(func(map[string]any) tools.Labels { return tools.Labels{} }, func(context.Context, *tools.Call, map[string]any) (tools.Result, error) {
		return tools.Text("first"), nil
	})
	reg.MustRegister(taken)
	m, err := Register(context.Background(), reg, []ServerConfig{{Name: "remote", Type: TransportHTTP, URL: f.url()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	m.OnProblem(func(msg string) { got <- msg })
	select {
	case msg := <-got:
		if want := `MCP server "remote": its tool "echo_token" is not offered: `; !strings.HasPrefix(msg, want) {
			t.Errorf("problem = %q, want it to start with %q", msg, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no problem reported for the clashing tool")
	}
}

// A call of a tool a running server does not have names tool_search as
// the client's model sees it (VS Code: agentls_tool_search) and the
// server and tool as they were called.
func TestUnknownToolOfARunningServerPointsToToolSearch(t *testing.T) {
	f := newFixture(t, TransportHTTP)
	m, _, _ := startManager(t, ServerConfig{Name: "remote", Type: TransportHTTP, URL: f.url()})
	for _, prefix := range []mention.Prefix{"", "agentls_"} {
		msg, ok := m.Explain(prefix, "remote__{{read}}")
		want := `the MCP server "remote" has no tool "{{read}}"; use ` + string(prefix) + `tool_search to find its tools.`
		if !ok || msg != want {
			t.Errorf("Explain with prefix %q = %q, %v; want %q", prefix, msg, ok, want)
		}
	}
}
