package harness

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/internal/rpc"
	"github.com/agentls/agentls/internal/tools/toolstest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestTag is the build tag that compiles the test-only tools (test_block,
// test_panic) into agentls; the tests need a binary built with it.
const TestTag = "agentlstest"

// Binary returns the path of an agentls binary: $AGENTLS_BIN when set, else
// one built once per test process from this checkout with -tags agentlstest.
// A Go binary in $AGENTLS_BIN built without the tag is refused in a test:
// the tests that call test_block would fail far from the cause. Benchmarks
// call no test-only tool and take any binary (a shipped one, an older
// build as the reference).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("AGENTLS_BIN"); p != "" {
		if _, bench := t.(*testing.B); !bench {
			if err := checkTestTag(p); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentls-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "agentls")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-tags", TestTag, "-o", binPath, "github.com/agentls/agentls/cmd/agentls")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as shipped
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// checkTestTag refuses a Go binary at p built without TestTag. A file that
// is not a Go binary (a test's wrapper script around the real binary)
// passes: what it runs was checked when AGENTLS_BIN named it.
func checkTestTag(p string) error {
	info, err := buildinfo.ReadFile(p)
	if err != nil {
		return nil
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), TestTag) {
			return nil
		}
	}
	return fmt.Errorf("AGENTLS_BIN=%s was built without -tags %s, so it lacks the test-only tools; build it with: go build -tags %s -o %s ./cmd/agentls", p, TestTag, TestTag, p)
}

// Note is one notification received from the server.
type Note struct {
	Method string
	Params json.RawMessage
	At     time.Time
}

// Client is a JSON-RPC client connected to an agentls server: one in the
// test process over pipes, or a spawned binary (Options.Process).
type Client struct {
	t     testing.TB
	cmd   *exec.Cmd // nil for a server in the test process
	Conn  jsonrpc2.Conn
	stdin io.WriteCloser

	mu      sync.Mutex
	notes   []Note
	waiters []chan struct{}
	// OnRequest answers server→client requests (tools/confirm); nil → MethodNotFound.
	OnRequest func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// WatcherMode is the watch mode the first agentls/watcherReady
	// reported (set by Initialize).
	WatcherMode string

	exited chan struct{}
	code   int // the exit code, once exited is closed
}

// Options for Start.
type Options struct {
	Root string   // --root
	Args []string // extra command-line arguments: the server runs as a process
	Env  []string // extra environment: the server runs as a process
	// Process runs the real binary, for a test whose point is the process:
	// its pid, signals, exit, stderr, orphans. Without it (and without Args
	// or Env) the server runs in the test process over pipes, as the binary
	// would serve stdio, with the test-only tools and its own audit and
	// user configuration directories.
	Process bool
}

// Start starts agentls and connects to it; it is stopped at cleanup.
func Start(t testing.TB, opts Options) *Client {
	t.Helper()
	if opts.Process || len(opts.Args) > 0 || len(opts.Env) > 0 {
		return startProcess(t, opts)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &Client{t: t, stdin: inW, exited: make(chan struct{})}
	logs := &testWriter{t: t, prefix: "agentls log"}
	sopts := rpc.Options{Version: "test", Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		TestTools: toolstest.Tools(), AuditDir: t.TempDir(), UserConfigDir: t.TempDir()}
	if opts.Root != "" {
		sopts.Roots = []string{opts.Root}
	}
	go func() {
		defer close(c.exited)
		c.code = rpc.Serve(context.Background(), inR, outW, sopts)
	}()
	c.connect(outR, inW)
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("the in-process server did not stop within 10s of its input's end")
		}
		logs.stop()
		c.Conn.Close()
	})
	return c
}

// startProcess spawns the binary.
func startProcess(t testing.TB, opts Options) *Client {
	args := append([]string{}, opts.Args...)
	if opts.Root != "" {
		args = append(args, "--root", opts.Root)
	}
	cmd := Command(t, args, opts.Env...)
	stderr := &testWriter{t: t, prefix: "agentls stderr"}
	cmd.Stderr = stderr
	stdin, stdout := StartPiped(t, cmd)
	c := &Client{t: t, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		c.code = cmd.ProcessState.ExitCode()
		close(c.exited)
	}()
	c.connect(stdout, stdin)
	t.Cleanup(func() {
		c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-c.exited
		}
		stderr.stop()
		c.Conn.Close()
	})
	return c
}

// connect speaks JSON-RPC with LSP framing over the server's stdout and stdin.
func (c *Client) connect(stdout io.ReadCloser, stdin io.WriteCloser) {
	c.Conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(&pipeRWC{r: stdout, w: stdin}))
	// Server→client requests (tools/confirm) may block, so they run async;
	// notifications are recorded inline, in wire order, before the read
	// loop delivers the reply that follows them (tests check that
	// tools/details comes first).
	c.Conn.Go(context.Background(), protocol.CancelHandler(func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() {
			jsonrpc2.Async(ctx)
		}
		return c.handle(ctx, req)
	}))
}

// Process is the spawned server's process; a test that calls it must start
// the server with Options.Process.
func (c *Client) Process() *os.Process {
	c.t.Helper()
	if c.cmd == nil {
		c.t.Fatal("the server runs in the test process: start it with harness.Options{Process: true}")
	}
	return c.cmd.Process
}

// Command is agentls with args in the tests' environment: test-only tools
// on, and never the real audit log or the user's settings; env is added.
func Command(t testing.TB, args []string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(append(os.Environ(), "AGENTLS_TEST_TOOLS=1", "AGENTLS_AUDIT_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
	return cmd
}

// StartPiped starts cmd with pipes to its stdin and from its stdout.
func StartPiped(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

func (c *Client) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	params := append(json.RawMessage(nil), req.Params()...)
	if req.IsCall() {
		if c.OnRequest != nil {
			return c.OnRequest(ctx, req.Method(), params)
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "test client: no handler for %s", req.Method())
	}
	c.mu.Lock()
	// Method may point into jsonrpc2's read buffer, reused once an inline
	// handler returns: keep a copy.
	c.notes = append(c.notes, Note{Method: strings.Clone(req.Method()), Params: params, At: time.Now()})
	ws := c.waiters
	c.waiters = nil
	c.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
	return nil, nil
}

// Notes returns the notifications received so far with the given method
// ("" for all).
func (c *Client) Notes(method string) []Note {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Note
	for _, n := range c.notes {
		if method == "" || n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// WaitNote waits until a notification satisfying pred arrives.
func (c *Client) WaitNote(timeout time.Duration, pred func(Note) bool) (Note, bool) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		for _, n := range c.notes {
			if pred(n) {
				c.mu.Unlock()
				return n, true
			}
		}
		w := make(chan struct{})
		c.waiters = append(c.waiters, w)
		c.mu.Unlock()
		select {
		case <-w:
		case <-deadline:
			return Note{}, false
		}
	}
}

// WatcherReady is the notification that the file watchers are armed
// (docs/protocol.md): workspace/externalChange is sent only after it.
const WatcherReady = "agentls/watcherReady"

// ArmTimeout bounds the wait for an arming of the file watchers.
const ArmTimeout = 20 * time.Second

// AwaitWatcher waits until the n-th agentls/watcherReady has come (the
// first follows initialized; each folder change arms anew) and returns its
// watch mode.
func (c *Client) AwaitWatcher(n int) string {
	c.t.Helper()
	deadline := time.After(ArmTimeout)
	for {
		c.mu.Lock()
		seen := 0
		for _, note := range c.notes {
			if note.Method != WatcherReady {
				continue
			}
			if seen++; seen == n {
				c.mu.Unlock()
				var p struct {
					Watcher string `json:"watcher"`
				}
				if err := json.Unmarshal(note.Params, &p); err != nil || p.Watcher == "" {
					c.t.Fatalf("%s without a watch mode: %s", WatcherReady, note.Params)
				}
				return p.Watcher
			}
		}
		w := make(chan struct{})
		c.waiters = append(c.waiters, w)
		c.mu.Unlock()
		select {
		case <-w:
		case <-deadline:
			c.t.Fatalf("%s #%d did not come within %v", WatcherReady, n, ArmTimeout)
		}
	}
}

// Initialize sends initialize (rooted at root unless params say otherwise)
// and initialized, waits until the file watchers are armed (a test that
// changes a file expects workspace/externalChange), and returns the
// result; WatcherMode is the mode agentls/watcherReady reported.
func (c *Client) Initialize(ctx context.Context, params map[string]any) map[string]any {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["capabilities"]; !ok {
		params["capabilities"] = map[string]any{}
	}
	var res map[string]any
	if err := c.Call(ctx, "initialize", params, &res); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	if err := c.Conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
		c.t.Fatalf("initialized: %v", err)
	}
	c.WatcherMode = c.AwaitWatcher(1)
	return res
}

// Call makes a request; cancelling ctx sends $/cancelRequest.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return protocol.Call(ctx, c.Conn, method, params, result)
}

// Result is a tools/call result.
type Result struct {
	CallID  string           `json:"callId"`
	Content []map[string]any `json:"content"`
	IsError bool             `json:"isError"`
	Details map[string]any   `json:"details"`
}

// Text joins the text parts.
func (r Result) Text() string {
	s := ""
	for _, c := range r.Content {
		if c["type"] == "text" {
			if s != "" {
				s += "\n"
			}
			s += fmt.Sprint(c["text"])
		}
	}
	return s
}

// CallTool runs tools/call and fails the test on a protocol error.
func (c *Client) CallTool(ctx context.Context, name string, args any) Result {
	c.t.Helper()
	r, err := c.TryCallTool(ctx, name, args)
	if err != nil {
		c.t.Fatalf("tools/call %s: %v", name, err)
	}
	return r
}

// TryCallTool runs tools/call and returns protocol errors.
func (c *Client) TryCallTool(ctx context.Context, name string, args any) (Result, error) {
	var r Result
	err := c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &r)
	return r, err
}

// Shutdown sends shutdown and exit, and returns the process exit code.
func (c *Client) Shutdown(ctx context.Context) int {
	c.t.Helper()
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		c.t.Fatalf("shutdown: %v", err)
	}
	c.Conn.Notify(ctx, "exit", nil)
	return c.Wait(5 * time.Second)
}

// CloseStdin closes the server's stdin, as an editor that quits does.
func (c *Client) CloseStdin() { c.stdin.Close() }

// Wait waits for the server to exit and returns its exit code (-1 on timeout).
func (c *Client) Wait(timeout time.Duration) int {
	select {
	case <-c.exited:
		return c.code
	case <-time.After(timeout):
		return -1
	}
}

// Exited is closed when the server exits.
func (c *Client) Exited() <-chan struct{} { return c.exited }

type pipeRWC struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (p *pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeRWC) Close() error {
	p.w.Close()
	return p.r.Close()
}

// testWriter logs what the server writes to the test's log, until stop:
// the test's log may not be written once it has ended.
type testWriter struct {
	t       testing.TB
	prefix  string
	mu      sync.Mutex
	stopped bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Logf("%s: %s", w.prefix, b)
	}
	return len(b), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
}
