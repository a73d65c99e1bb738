package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/toolstest"
)

// start runs a Server over in-memory transports and connects a client.
func start(t testing.TB, copts *sdk.ClientOptions) (*session.Session, *sdk.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sess, err := session.New(session.Options{Folders: []ops.FolderSpec{{Path: dir}}, TestTools: toolstest.Tools(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	srv := New(Options{Session: sess, Version: "test", Log: slog.New(slog.DiscardHandler)})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, copts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		sess.Close()
	})
	return sess, cs, dir
}

func textOf(r *sdk.CallToolResult) string {
	s := ""
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func TestToolsListedWithAnnotations(t *testing.T) {
	_, cs, _ := start(t, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	tests := []struct {
		name     string
		readOnly bool
	}{
		{"read", true}, {"grep", true}, {"ls", true}, {"find", true}, {"edit", false}, {"write", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := byName[tc.name]
			if tl == nil {
				t.Fatalf("%s not listed", tc.name)
			}
			if tl.Annotations == nil || tl.Annotations.ReadOnlyHint != tc.readOnly {
				t.Errorf("annotations %+v, want readOnlyHint=%v", tl.Annotations, tc.readOnly)
			}
			if tl.Annotations.DestructiveHint == nil || tl.Annotations.OpenWorldHint == nil {
				t.Errorf("destructiveHint and openWorldHint must be explicit: %+v", tl.Annotations)
			}
			if s, _ := tl.InputSchema.(map[string]any); s["type"] != "object" {
				t.Errorf("schema %v", tl.InputSchema)
			}
		})
	}
}

func TestCallRoundTrip(t *testing.T) {
	_, cs, _ := start(t, nil)
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		// In order: the edit is refused because nothing was read yet.
		{"edit before read is refused", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "beta", "newText": "B"}}}, true, "read"},
		{"read", "read", map[string]any{"path": "a.txt"}, false, "beta"},
		{"missing file is a result", "read", map[string]any{"path": "nope.txt"}, true, "nope.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tc.isError {
				t.Fatalf("isError=%v: %s", r.IsError, textOf(r))
			}
			if got := textOf(r); !contains(got, tc.want) {
				t.Errorf("text %q lacks %q", got, tc.want)
			}
			if r.Meta["callId"] == nil {
				t.Errorf("no callId in _meta: %v", r.Meta)
			}
		})
	}
}

func TestCancellationStopsTheTool(t *testing.T) {
	_, cs, dir := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_block", Arguments: map[string]any{"marker": "m.txt"}})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "m.txt")); err == nil && string(b) == "cancelled\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool did not see the cancellation (no marker file)")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestActivationSendsListChanged(t *testing.T) {
	changed := make(chan struct{}, 8)
	sess, cs, _ := start(t, &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	tl, err := tools.NewTool("later", "A deferred tool.", map[string]any{"type": "object"})
	if err != nil {
		t.Fatal(err)
	}
	tl.Deferred = true
	tl.SetHandler(func(map[string]any) tools.Labels { return tools.Labels{ReadOnly: true} },
		func(context.Context, *tools.Call, map[string]any) (tools.Result, error) {
			return tools.Text("later ran"), nil
		})
	if err := sess.Registry.Register(tl); err != nil {
		t.Fatal(err)
	}
	// The client has a tool list, so a change to it is news.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// A deferred tool called by name is activated and runs.
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "later"})
	if err != nil || textOf(r) != "later ran" {
		t.Fatalf("call: %v %v", err, r)
	}
	select {
	case <-changed:
	case <-time.After(3 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range res.Tools {
		found = found || x.Name == "later"
	}
	if !found {
		t.Error("activated tool not listed")
	}
}

// The tools a session starts with are registered while the client
// connects: no list_changed for them. A later activation is announced
// whether or not the client has listed tools yet.
func TestListChangedOnlyForLaterChanges(t *testing.T) {
	dir := t.TempDir()
	changed := make(chan struct{}, 8)
	var sess *session.Session
	opened := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	srv := New(Options{Version: "test", Log: slog.New(slog.DiscardHandler), Open: func(Host) (*session.Session, error) {
		var err error
		sess, err = openDir(dir)
		close(opened)
		return sess, err
	}})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A call (not a list) opens the session: this client speaks the
	// stateless protocol, which has no notifications/initialized.
	cs.CallTool(ctx, &sdk.CallToolParams{Name: "no-such-tool"})
	<-opened
	select {
	case <-changed:
		t.Fatal("list_changed sent for the tools the session started with")
	case <-time.After(200 * time.Millisecond): // the SDK coalesces changes for 10 ms
	}
	tl, err := tools.NewTool("later", "A deferred tool.", map[string]any{"type": "object"})
	if err != nil {
		t.Fatal(err)
	}
	tl.Deferred = true
	if err := sess.Registry.Register(tl); err != nil {
		t.Fatal(err)
	}
	sess.Registry.Activate("later")
	select {
	case <-changed:
	case <-time.After(3 * time.Second):
		t.Fatal("no list_changed after an activation")
	}
	cs.Close()
	cancel()
	<-done
}

// startOpen runs a Server whose session is built by open, and connects a
// client.
// stop ends the server and waits for Run.
func startOpen(t *testing.T, open func() (*session.Session, error)) (cs *sdk.ClientSession, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	srv := New(Options{Open: func(Host) (*session.Session, error) { return open() }, Version: "test", Log: slog.New(slog.DiscardHandler)})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cs.Close()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return cs, stop
}

func TestInitializeDoesNotWaitForTheSession(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	opened := make(chan *session.Session, 1)
	cs, stop := startOpen(t, func() (*session.Session, error) {
		<-release
		s, err := openDir(dir)
		opened <- s
		return s, err
	})
	// Connected (initialize and discovery answered) and ping answered while the session
	// is still being built.
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	listed := make(chan error, 1)
	go func() {
		res, err := cs.ListTools(context.Background(), nil)
		if err == nil && len(res.Tools) == 0 {
			err = errors.New("empty tool list")
		}
		listed <- err
	}()
	select {
	case err := <-listed:
		t.Fatalf("tools/list answered before the session was open: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-listed; err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	sess := <-opened
	stop()
	// Run closed the session it opened: its spill directory is gone.
	if sess.Env.SpillDir == nil {
		t.Fatal("session without a spill directory")
	}
	if _, err := os.Stat(sess.Env.SpillDir.Path()); !os.IsNotExist(err) {
		t.Errorf("spill directory after Run: %v", err)
	}
}

// The session is built after the handshake, not during it: a client that
// has only sent initialize has not started it; notifications/initialized
// (or a tools/* request) does.
func TestOpenStartsAfterTheHandshake(t *testing.T) {
	dir := t.TempDir()
	opened := make(chan struct{}, 1)
	ctx := context.Background()
	conn := serveRaw(t, func() (*session.Session, error) {
		opened <- struct{}{}
		return openDir(dir)
	})
	send := func(id any, method, params string) {
		t.Helper()
		req := &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}
		if id != nil {
			req.ID, _ = jsonrpc.MakeID(id)
		}
		if err := conn.Write(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	send(float64(1), "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	if m, err := conn.Read(ctx); err != nil || m.(*jsonrpc.Response).Error != nil {
		t.Fatalf("initialize: %v %+v", err, m)
	}
	select {
	case <-opened:
		t.Fatal("the session was opened before the client finished the handshake")
	case <-time.After(50 * time.Millisecond):
	}
	send(nil, "notifications/initialized", `{}`)
	select {
	case <-opened:
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/initialized did not open the session")
	}
}

// Stopping the server (its context, as on SIGTERM) ends a running call
// instead of waiting for it.
func TestStopEndsRunningCalls(t *testing.T) {
	dir := t.TempDir()
	sess, err := session.New(session.Options{Folders: []ops.FolderSpec{{Path: dir}}, TestTools: toolstest.Tools(), Log: slog.New(slog.DiscardHandler), NoUpstream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() {
		done <- New(Options{Session: sess, Version: "test", Log: slog.New(slog.DiscardHandler)}).Run(ctx, st)
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "test_block", Arguments: map[string]any{"marker": "stopped.marker"}})
	time.Sleep(100 * time.Millisecond) // the call is running
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waits for the running call after its context ended")
	}
	if _, err := os.Stat(filepath.Join(dir, "stopped.marker")); err != nil {
		t.Errorf("the tool did not see its context end: %v", err)
	}
}

// openDir opens a session on dir without upstream servers.
func openDir(dir string) (*session.Session, error) {
	return session.New(session.Options{Folders: []ops.FolderSpec{{Path: dir}}, Log: slog.New(slog.DiscardHandler), NoUpstream: true})
}

// serveRaw runs a Server whose session comes from open and returns the
// client end of the connection, for tests that speak JSON-RPC themselves.
// The server stops with the test.
func serveRaw(t *testing.T, open func() (*session.Session, error)) sdk.Connection {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	srv := New(Options{Version: "test", Log: slog.New(slog.DiscardHandler), Open: func(Host) (*session.Session, error) { return open() }})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return conn
}

// roots/list goes only to a client that declared the roots capability.
func TestRootsAskedOnlyWhenDeclared(t *testing.T) {
	tests := []struct {
		name  string
		caps  string
		asked bool
	}{
		{"no roots capability", `{}`, false},
		{"roots without listChanged", `{"roots":{}}`, true},
		{"roots with listChanged", `{"roots":{"listChanged":true}}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			conn := serveRaw(t, func() (*session.Session, error) { return openDir(dir) })
			id := func(n float64) jsonrpc.ID { i, _ := jsonrpc.MakeID(n); return i }
			conn.Write(ctx, &jsonrpc.Request{ID: id(1), Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":` + tc.caps + `,"clientInfo":{"name":"raw","version":"1"}}`)})
			conn.Read(ctx)
			conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
			conn.Write(ctx, &jsonrpc.Request{ID: id(2), Method: "tools/list", Params: json.RawMessage(`{}`)})
			// The roots are asked for in the background: read until the
			// tools/list answer and a roots/list request came, or a while.
			asked, listed := false, false
			readCtx, stopReading := context.WithTimeout(ctx, 500*time.Millisecond)
			defer stopReading()
			for !(asked && listed) {
				m, err := conn.Read(readCtx)
				if err != nil {
					break
				}
				if r, ok := m.(*jsonrpc.Request); ok && r.Method == "roots/list" {
					asked = true
					conn.Write(ctx, &jsonrpc.Response{ID: r.ID, Result: json.RawMessage(`{"roots":[]}`)})
				}
				if r, ok := m.(*jsonrpc.Response); ok && r.ID == id(2) {
					listed = true
				}
			}
			if !listed {
				t.Fatal("tools/list was not answered")
			}
			if asked != tc.asked {
				t.Errorf("roots/list sent: %v, want %v", asked, tc.asked)
			}
		})
	}
}

func TestFailedOpenAnswersEveryRequest(t *testing.T) {
	cs, _ := startOpen(t, func() (*session.Session, error) {
		return nil, errors.New("folder /nowhere: no such directory")
	})
	_, err := cs.ListTools(context.Background(), nil)
	if err == nil || !contains(err.Error(), "could not open the workspace") || !contains(err.Error(), "/nowhere") {
		t.Fatalf("tools/list error = %v", err)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "a.txt"}}); err == nil {
		t.Fatal("tools/call succeeded without a session")
	}
}

// Elicitation answers are covered with the TypeScript client (protocol
// 2025-11-25); the Go client speaks 2026-07-28, where elicitation inside a
// request needs multi round-trip requests (not implemented yet).
func TestAskUsesElicitation(t *testing.T) {
	tests := []struct {
		name   string
		copts  *sdk.ClientOptions
		asked  bool
		answer string
	}{
		{"no elicitation support", nil, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sess, cs, _ := start(t, tc.copts)
			got := make(chan Approval, 1)
			tl, _ := tools.NewTool("asker", "Asks.", map[string]any{"type": "object"})
			tl.Deferred = true // activated when called by name
			// Read-only, so the session's permission gate lets it run.
			tl.SetHandler(func(map[string]any) tools.Labels { return tools.Labels{ReadOnly: true} },
				func(ctx context.Context, c *tools.Call, _ map[string]any) (tools.Result, error) {
					a, err := Ask(ctx, "asker", "test", "")
					if err != nil {
						return tools.Errorf("%v", err), nil
					}
					got <- a
					return tools.Text("ok"), nil
				})
			if err := sess.Registry.Register(tl); err != nil {
				t.Fatal(err)
			}
			r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "asker"})
			if err != nil {
				t.Fatal(err)
			}
			var a Approval
			select {
			case a = <-got:
			default:
				t.Fatalf("the tool did not run: %s", textOf(r))
			}
			if a.Asked != tc.asked || a.Decision != tc.answer {
				t.Errorf("got %+v, want asked=%v decision=%q", a, tc.asked, tc.answer)
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// An extension tool file changed while connected: the client is told and
// lists the new definition.
func TestReloadedToolsReachTheClient(t *testing.T) {
	changed := make(chan struct{}, 8)
	sess, cs, dir := start(t, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	describe := func(desc string) {
		def := `{"name": "hello", "description": "` + desc + `", "inputSchema": {"type": "object"}, "command": "echo hi", "deferred": false}`
		os.MkdirAll(filepath.Join(dir, ".agentls", "tools"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, ".agentls", "tools", "hello.json"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
		sess.Reload() // what the watcher does ~100 ms after the change
	}
	listed := func() string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == "hello" {
				return tool.Description
			}
		}
		return ""
	}
	for _, desc := range []string{"Says hello.", "Says hello, politely."} {
		describe(desc)
		select {
		case <-changed:
		case <-time.After(3 * time.Second):
			t.Fatalf("no list_changed after the tool file said %q", desc)
		}
		if got := listed(); got != desc {
			t.Fatalf("listed description = %q, want %q", got, desc)
		}
	}
}

// Roots that are not file:// URIs name no folder: they are skipped and
// reported, and the file roots make the workspace.
func TestFolderSpecsSkipsNonFileRoots(t *testing.T) {
	specs, skipped := folderSpecs([]*sdk.Root{
		{URI: "https://example.com/repo"},
		{URI: "file:///ws/beta", Name: "B"},
		nil,
		{URI: "untitled:Untitled-1"},
		{URI: "file:///ws/gamma"},
	})
	want := []ops.FolderSpec{{Name: "B", Path: "/ws/beta"}, {Name: "gamma", Path: "/ws/gamma"}}
	if !reflect.DeepEqual(specs, want) {
		t.Errorf("specs %+v, want %+v", specs, want)
	}
	if !reflect.DeepEqual(skipped, []string{"https://example.com/repo", "untitled:Untitled-1"}) {
		t.Errorf("skipped %q", skipped)
	}
}
