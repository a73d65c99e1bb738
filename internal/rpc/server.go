package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/internal/jobs"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/overlay"
	"github.com/agentls/agentls/internal/policy"
	"github.com/agentls/agentls/internal/proc"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/settings"
	"github.com/agentls/agentls/internal/tools"
	"github.com/agentls/agentls/internal/tools/builtin"
)

// ProtocolVersion is the agentls wire protocol version in the initialize result.
const ProtocolVersion = "1.0"

// ErrServerNotInitialized is LSP's -32002.
const codeServerNotInitialized jsonrpc2.Code = -32002

// Options configure the server.
type Options struct {
	Version string
	// Roots are used when the client names no workspace folder (--root).
	Roots    []string
	Log      *slog.Logger
	LogLevel *slog.LevelVar
	// TestTools are passed to each session (session.Options.TestTools).
	TestTools []*tools.Tool
	// AuditDir and UserConfigDir are passed to each session ("" = the
	// defaults): a test that serves in-process gives its own.
	AuditDir, UserConfigDir string
	// Watchdog is passed to each session (session.Options.Watchdog).
	Watchdog *proc.Watchdog
}

type state int

const (
	stateNew state = iota
	stateInitialized
	stateShutdown
)

// Server is one client connection's server.
type Server struct {
	opts Options
	conn jsonrpc2.Conn

	base   context.Context // cancelled at EOF, exit, or shutdown of the process
	cancel context.CancelFunc

	mu       sync.Mutex
	state    state
	sess     *session.Session
	docs     *overlay.Store // the client's open documents (set at initialize)
	caps     clientCaps
	initOpts settings.InitOptions

	calls sync.WaitGroup // running tool calls (they may outlive an early -32800 reply)
	exit  chan int
	log   *slog.Logger
	// masker is the session's secret masker, once there is a session:
	// window/logMessage texts pass it (a setting or a path may hold a
	// token). Atomic, as logMessage may run under mu.
	masker atomic.Pointer[tools.Executor]

	// inFlight holds the ids of requests not yet answered: a second
	// request with one of them is refused (its reply could not be told
	// from the first's).
	inFlightMu sync.Mutex
	inFlight   map[jsonrpc2.ID]struct{}

	ready watcherNotice
}

type clientCaps struct {
	Confirm     bool `json:"confirm"`
	ApplyEdit   bool `json:"applyEdit"`
	Diagnostics bool `json:"diagnostics"`
}

// Serve runs the server on in/out until the client exits or closes its end,
// and returns the process exit code (LSP: 0 after shutdown+exit, 1 for exit
// without shutdown).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) int {
	base, cancel := context.WithCancel(ctx)
	s := &Server{opts: opts, base: base, cancel: cancel, exit: make(chan int, 1)}
	s.log = opts.Log
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	closers := []io.Closer{}
	if c, ok := in.(io.Closer); ok {
		closers = append(closers, c)
	}
	if c, ok := out.(io.Closer); ok {
		closers = append(closers, c)
	}
	rwc := &stdio{Reader: &eofReader{r: in, onEOF: cancel}, Writer: out, closers: closers}
	stream := newTolerantStream(rwc, func(m string) { s.log.Warn("malformed message answered", "problem", m) })
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(codec{}))
	s.conn.Go(base, s.contained(s.uniqueIDs(cancelHandler(s.asyncCalls(s.handle)))))

	code := 0
	select {
	case code = <-s.exit:
	case <-s.conn.Done():
	case <-base.Done():
	}
	cancel()
	s.waitCalls(time.Second)
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
	return code
}

// waitCalls gives cancelled calls a moment to clean up (kill process
// groups, remove temp files) before the process exits.
func (s *Server) waitCalls(d time.Duration) {
	done := make(chan struct{})
	go func() {
		s.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		s.log.Warn("calls still running at exit")
	}
}

// lifecycleCall reports whether method is a call that runs inline on the
// read loop: initialize and shutdown change the lifecycle state, so a
// request written right behind one (a client that pipelines) is judged in
// the state it expects, and a second initialize cannot race the first.
// Neither calls back to the client, and neither goes through the cancel
// handler: that derives a context from the pooled request context, which
// an inline call must never do (docs/dependencies.md).
func lifecycleCall(method string) bool { return method == "initialize" || method == "shutdown" }

// asyncCalls releases every other call to run concurrently, while
// notifications (workspace folder changes, exit) run inline in wire order,
// so a folder change is in effect for the next request. The lifecycle
// state a call is judged in is read here, on the read loop, before the
// call goes async: a request written before shutdown runs although the
// shutdown, behind it, may be handled first. Inline handlers never derive
// a context from the pooled request context.
func (s *Server) asyncCalls(h func(context.Context, *jsonrpc2.Request, state) (any, error)) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		s.mu.Lock()
		st := s.state
		s.mu.Unlock()
		if req.IsCall() && !lifecycleCall(req.Method()) {
			jsonrpc2.Async(ctx)
		}
		return h(ctx, req, st)
	}
}

// uniqueIDs refuses a request whose id is that of one still in flight
// (-32600), instead of running it and sending two replies with one id. It
// runs on the read loop, before the call goes async, so the check and the
// claim are in the order the requests came.
func (s *Server) uniqueIDs(h jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if !req.IsCall() {
			return h(ctx, req)
		}
		id := req.ID()
		s.inFlightMu.Lock()
		if _, dup := s.inFlight[id]; dup {
			s.inFlightMu.Unlock()
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "invalid request: id %v is that of a request still in flight; give each request its own id", idText(id))
		}
		if s.inFlight == nil {
			s.inFlight = map[jsonrpc2.ID]struct{}{}
		}
		s.inFlight[id] = struct{}{}
		s.inFlightMu.Unlock()
		defer func() {
			s.inFlightMu.Lock()
			delete(s.inFlight, id)
			s.inFlightMu.Unlock()
		}()
		return h(ctx, req)
	}
}

// idText is an id as the client wrote it.
func idText(id jsonrpc2.ID) string {
	b, err := json.Marshal(id)
	if err != nil {
		return fmt.Sprint(id)
	}
	return string(b)
}

// contained keeps one bad message from ending the connection: jsonrpc2
// fails the whole connection when a notification's handler returns an
// error (there is no reply to carry it) or any handler panics. A bad
// notification ($/cancelRequest without a usable id, tools/call sent
// without an id and with bad params) is logged and dropped instead, and a
// panic becomes an internal error for a call.
func (s *Server) contained(h jsonrpc2.Handler) jsonrpc2.Handler {
	return func(ctx context.Context, req *jsonrpc2.Request) (res any, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("handler panicked", "method", req.Method(), "panic", r, "stack", string(debug.Stack()))
				res, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "agentls: internal error handling %s: %v", req.Method(), r)
			}
			if err != nil && !req.IsCall() {
				s.log.Warn("notification ignored", "method", req.Method(), "err", err)
				s.logMessage(2, fmt.Sprintf("agentls: ignored the notification %s: %v", req.Method(), err))
				res, err = nil, nil
			}
		}()
		return h(ctx, req)
	}
}

func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request, st state) (any, error) {
	method := req.Method()
	params := req.Params()
	switch method {
	case "initialize":
		if st != stateNew {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "initialize was already called")
		}
		return s.initialize(params)
	case "initialized":
		if st != stateNew {
			s.clientInitialized()
		}
		return nil, nil
	case "exit":
		code := 1
		if st == stateShutdown {
			code = 0
		}
		select {
		case s.exit <- code:
		default:
		}
		return nil, nil
	}
	if st == stateNew {
		if !req.IsCall() {
			return nil, nil
		}
		return nil, jsonrpc2.NewError(codeServerNotInitialized, "the server is not initialized: send initialize first")
	}
	if st == stateShutdown && req.IsCall() {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted")
	}
	switch method {
	case "shutdown":
		s.mu.Lock()
		s.state = stateShutdown
		s.mu.Unlock()
		return nil, nil
	case "tools/list":
		return s.toolsList(params)
	case "tools/call":
		return s.toolsCall(ctx, params)
	case "tools/callBatch":
		return s.toolsCallBatch(ctx, params)
	case "tools/prepare":
		return s.toolsPrepare(ctx, params)
	case "jobs/list":
		return s.jobsList()
	case "jobs/output":
		return s.jobsOutput(params)
	case "jobs/kill":
		return s.jobsKill(ctx, params)
	case "workspace/didChangeWorkspaceFolders":
		return nil, s.didChangeFolders(params)
	case "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose":
		// A bad notification's error is logged by contained.
		return nil, s.textDocument(method, params)
	}
	if !req.IsCall() {
		return nil, nil // unknown notifications ($/setTrace, textDocument/didSave) are ignored
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
}

type initializeParams struct {
	ProcessID        *int                   `json:"processId"`
	RootURI          string                 `json:"rootUri"`
	RootPath         string                 `json:"rootPath"`
	WorkspaceFolders []workspaceFolder      `json:"workspaceFolders"`
	ClientInfo       *struct{ Name string } `json:"clientInfo"`
	// Capabilities is raw: Lua clients send [] for an empty object.
	Capabilities          json.RawMessage `json:"capabilities"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

func (s *Server) initialize(raw []byte) (any, error) {
	var p initializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	initOpts, warnings, err := settings.ParseInitOptions(p.InitializationOptions, settings.Checks{
		Rule:   func(r string) error { _, err := policy.ParseRule(r); return err },
		Limits: func(v any) error { _, _, err := tools.DefaultLimits().Apply(v); return err },
	})
	if err != nil {
		// Nothing runs (initialize fails); the user is told where they
		// look, as an editor may show a failed initialize only in a log.
		s.showMessage(1, "agentls: initializationOptions: "+err.Error()+"; agentls did not start")
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initializationOptions: %v", err)
	}
	// Capabilities are read leniently (an [] anywhere is an empty object):
	// a client's unusual capabilities must not fail initialize.
	caps := clientCaps{}
	var clientCapabilities struct {
		Experimental json.RawMessage `json:"experimental"`
	}
	if json.Unmarshal(p.Capabilities, &clientCapabilities) == nil && len(clientCapabilities.Experimental) > 0 {
		var exp struct {
			Agentls json.RawMessage `json:"agentls"`
		}
		if json.Unmarshal(clientCapabilities.Experimental, &exp) == nil && len(exp.Agentls) > 0 {
			decodeParams(exp.Agentls, &caps)
		}
	}
	folders, skipped, err := s.folderSpecs(p)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
	}
	sopts := session.Options{Folders: folders, Log: s.log, TestTools: s.opts.TestTools, Watchdog: s.opts.Watchdog,
		AuditDir: s.opts.AuditDir, UserConfigDir: s.opts.UserConfigDir, DeferThreshold: initOpts.DeferThreshold, ToolNamePrefix: initOpts.ToolNamePrefix,
		OnExternalChange: func(uri, kind string, readStale bool) {
			s.conn.Notify(s.base, "workspace/externalChange", map[string]any{"uri": uri, "kind": kind, "readStale": readStale})
		}, Editor: &initOpts.Editor}
	if caps.Confirm {
		sopts.Confirmer = &confirmer{s: s}
	}
	sopts.OnWatcherDegraded = func() { s.logMessage(2, watcherDegradedMessage) }
	sopts.OnJobChanged = s.jobChanged
	sopts.OnJobOutput = s.jobOutput
	sopts.OnReload = s.tellProblems
	sopts.OnWatcherReady = s.watcherReady
	docs := overlay.New()
	sopts.Buffers = docs
	if caps.ApplyEdit {
		sopts.BufferEditor = &applier{s: s}
	}
	if caps.Diagnostics {
		sopts.Diagnostics = &diagnoser{s: s}
	}
	sess, err := session.New(sopts)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "cannot open the workspace: %v", err)
	}
	sess.Registry.OnChange(func() { s.conn.Notify(s.base, "tools/listChanged", map[string]any{}) })
	s.masker.Store(sess.Executor)
	s.mu.Lock()
	s.sess, s.docs, s.caps, s.initOpts, s.state = sess, docs, caps, initOpts, stateInitialized
	s.mu.Unlock()
	for _, w := range warnings {
		s.logMessage(2, "agentls: initializationOptions: "+w)
	}
	for _, f := range skipped {
		s.showMessage(2, "agentls: workspace folder skipped: "+f)
	}
	s.tellProblems(sess.Problems)
	return map[string]any{
		"serverInfo": map[string]any{"name": "agentls", "version": s.opts.Version},
		"capabilities": map[string]any{
			"workspace": map[string]any{
				"workspaceFolders": map[string]any{"supported": true, "changeNotifications": true},
			},
			"textDocumentSync": textDocumentSync(),
			"experimental": map[string]any{
				"agentls": map[string]any{
					"protocolVersion": ProtocolVersion,
					"tools":           sess.Registry.Names(),
					"watcher":         watcherStarting,
					// Whether bash commands run sandboxed, and if not why.
					"sandbox": sess.Env.Sandbox.Status(),
				},
			},
		},
		"instructions": builtin.InstructionsFor(initOpts.ToolNamePrefix),
	}, nil
}

// folderSpecs picks the workspace roots: workspaceFolders, else rootUri,
// else rootPath, else --root, else the working directory. An entry that
// cannot be opened (empty, not a file:// URI, missing, not a directory) is
// skipped and named in skipped; when none of the chosen source's entries is
// usable it is an error naming them, never a fallback to the next source.
func (s *Server) folderSpecs(p initializeParams) (specs []ops.FolderSpec, skipped []string, err error) {
	source := ""
	if len(p.WorkspaceFolders) > 0 {
		source = "workspaceFolders"
		for _, f := range p.WorkspaceFolders {
			path, err := uriToPath(f.URI)
			if err != nil {
				skipped = append(skipped, err.Error())
				continue
			}
			specs = append(specs, ops.FolderSpec{Name: f.Name, Path: path})
		}
	}
	if source == "" && p.RootURI != "" {
		source = "rootUri"
		if path, err := uriToPath(p.RootURI); err != nil {
			skipped = append(skipped, err.Error())
		} else {
			specs = append(specs, ops.FolderSpec{Path: path})
		}
	}
	if source == "" && p.RootPath != "" {
		source = "rootPath"
		specs = append(specs, ops.FolderSpec{Path: p.RootPath})
	}
	if source == "" && len(s.opts.Roots) > 0 {
		source = "--root"
		for _, r := range s.opts.Roots {
			specs = append(specs, ops.FolderSpec{Path: r})
		}
	}
	specs, bad := session.UsableFolders(specs)
	skipped = append(skipped, bad...)
	if source != "" && len(specs) == 0 {
		return nil, nil, fmt.Errorf("no usable workspace folder in %s: %s", source, strings.Join(skipped, "; "))
	}
	return specs, skipped, nil
}

func uriToPath(u string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("bad URI %q: %w", u, err)
	}
	if parsed.Scheme != "file" {
		return "", fmt.Errorf("unsupported URI %q: only file:// workspace folders are supported", u)
	}
	p := parsed.Path
	if runtime.GOOS == "windows" && len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return filepath.FromSlash(p), nil
}

func (s *Server) session() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

type listParams struct {
	Format          string `json:"format"`
	IncludeDeferred bool   `json:"includeDeferred"`
}

func (s *Server) toolsList(raw []byte) (any, error) {
	var p listParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	sess := s.session()
	s.mu.Lock()
	prefix := s.initOpts.ToolNamePrefix
	s.mu.Unlock()
	out, err := tools.DescribeFor(builtin.ListFor(sess.Registry, p.Format, p.IncludeDeferred), p.Format, sess.Registry, prefix)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
	}
	return map[string]any{"tools": out}, nil
}

// CancelGrace is how long a cancelled call has to wind down (its process
// group killed, its temp file removed) before the -32800 reply goes out
// anyway: within it, a client that acts on the reply finds nothing left
// behind; past it, a call stuck in the kernel does not hold the reply.
const CancelGrace = 250 * time.Millisecond

// runOwned runs f on a context derived from the server's base context and
// cancelled when the request context is. On cancellation the handler
// returns -32800 once f has wound down or CancelGrace has passed (f then
// winds down on its own), unless f already committed a change
// (tools.CommitGate): then -32800 would claim the work undone, so the
// handler waits for f's result and returns it.
func (s *Server) runOwned(ctx context.Context, f func(ctx context.Context) any) (any, error) {
	gate := &tools.CommitGate{}
	callCtx, cancel := context.WithCancel(tools.WithCommitGate(s.base, gate))
	done := make(chan any, 1)
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer cancel()
		done <- f(callCtx)
	}()
	select {
	case r := <-done:
		return r, nil
	case <-ctx.Done():
	case <-s.base.Done():
	}
	committed := !gate.Cancel()
	cancel()
	if committed {
		return <-done, nil
	}
	grace := time.NewTimer(CancelGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
	}
	return nil, protocol.ErrRequestCancelled
}

// watcherDegradedMessage tells the user the watcher degraded, at the start
// or later.
const watcherDegradedMessage = "agentls: the file watcher is degraded (watch limit reached or unavailable): external changes are caught by checking files at edit time, and workspace/externalChange is not sent. Raise fs.inotify.max_user_watches to restore it."

func (s *Server) toolsCall(ctx context.Context, raw []byte) (any, error) {
	var req tools.Request
	if err := decodeParams(raw, &req); err != nil {
		return nil, err
	}
	// An empty or missing name is an unknown tool: the executor answers
	// with a result listing the tools, as for any other name.
	sess := s.session()
	if msg := sess.FoldersRefusal(); msg != "" {
		return tools.Errorf("%s", msg), nil
	}
	return s.runOwned(ctx, func(ctx context.Context) any {
		// Upstream MCP servers register their tools in the background: a
		// search or an unknown name waits for them (a cancelled wait ends
		// in the executor's cancelled result).
		sess.AwaitTools(ctx, req.Name)
		return sess.Executor.Call(ctx, req, s.reporter)
	})
}

// toolsPrepare answers tools/prepare: what a call would need (allow, ask
// with the question and a token, deny, or fail), without running it.
func (s *Server) toolsPrepare(ctx context.Context, raw []byte) (any, error) {
	var req tools.Request
	if err := decodeParams(raw, &req); err != nil {
		return nil, err
	}
	sess := s.session()
	if msg := sess.FoldersRefusal(); msg != "" {
		return tools.Preparation{Decision: "fail", Error: msg}, nil
	}
	return s.runOwned(ctx, func(ctx context.Context) any {
		sess.AwaitTools(ctx, req.Name)
		return sess.Executor.Prepare(ctx, req)
	})
}

type batchParams struct {
	Calls []tools.Request `json:"calls"`
}

func (s *Server) toolsCallBatch(ctx context.Context, raw []byte) (any, error) {
	var p batchParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	sess := s.session()
	if msg := sess.FoldersRefusal(); msg != "" {
		results := make([]tools.Result, len(p.Calls))
		for i := range results {
			results[i] = tools.Errorf("%s", msg)
		}
		return map[string]any{"results": results}, nil
	}
	return s.runOwned(ctx, func(ctx context.Context) any {
		names := make([]string, len(p.Calls))
		for i, c := range p.Calls {
			names[i] = c.Name
		}
		sess.AwaitTools(ctx, names...)
		return map[string]any{"results": sess.Executor.Batch(ctx, p.Calls, s.reporter)}
	})
}

type foldersChange struct {
	Event struct {
		Added   []workspaceFolder `json:"added"`
		Removed []workspaceFolder `json:"removed"`
	} `json:"event"`
}

func (s *Server) didChangeFolders(raw []byte) error {
	var p foldersChange
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	sess := s.session()
	removed := map[string]bool{}
	for _, f := range p.Event.Removed {
		if path, err := uriToPath(f.URI); err == nil {
			removed[filepath.Clean(path)] = true
		}
	}
	var specs []ops.FolderSpec
	for _, f := range sess.FS.Folders() {
		if f.ReadOnly || removed[f.Root] {
			continue
		}
		specs = append(specs, ops.FolderSpec{Name: f.Name, Path: f.Root})
	}
	// An added folder that cannot be opened is skipped and named; the
	// folders kept are checked as they are used (a folder follows its path).
	var added []ops.FolderSpec
	var skipped []string
	for _, f := range p.Event.Added {
		path, err := uriToPath(f.URI)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		added = append(added, ops.FolderSpec{Name: f.Name, Path: path})
	}
	added, bad := session.UsableFolders(added)
	skipped = append(skipped, bad...)
	for _, f := range skipped {
		s.showMessage(2, "agentls: workspace folder skipped: "+f)
	}
	specs = append(specs, added...)
	// With none left, calls fail naming why: never the earlier folders.
	refusal := ""
	if len(specs) == 0 {
		refusal = "No workspace folder: the editor's workspace folders left none usable"
		if len(skipped) > 0 {
			refusal += " (skipped: " + strings.Join(skipped, "; ") + ")"
		}
		refusal += ". agentls does not fall back to its working directory or to earlier folders; add a folder in the editor."
	} else if err := sess.SetFolders(specs); err != nil {
		refusal = "No workspace folder: the editor's workspace folders could not be opened: " + err.Error() + ". Add or fix a folder in the editor."
	}
	if refusal != "" {
		sess.NoFolders(refusal)
		s.showMessage(1, "agentls: "+refusal)
	}
	return nil
}

// reporter builds the notifier of one call.
func (s *Server) reporter(callID, tool string) tools.Reporter {
	return &notifier{s: s, callID: callID, tool: tool}
}

type notifier struct {
	s      *Server
	callID string
	tool   string
	mu     sync.Mutex
	last   time.Time
}

// ProgressInterval is the minimum gap between two tools/progress of a call.
const ProgressInterval = 50 * time.Millisecond

func (n *notifier) Progress(p tools.Progress) {
	n.mu.Lock()
	if time.Since(n.last) < ProgressInterval {
		n.mu.Unlock()
		return
	}
	n.last = time.Now()
	n.mu.Unlock()
	params := map[string]any{"callId": n.callID, "tool": n.tool}
	if p.Message != "" {
		params["message"] = p.Message
	}
	if p.Output != "" {
		params["output"] = p.Output
	}
	if p.Percentage != nil {
		params["percentage"] = *p.Percentage
	}
	n.s.conn.Notify(n.s.base, "tools/progress", params)
}

func (n *notifier) Details(d map[string]any) {
	n.s.conn.Notify(n.s.base, "tools/details", map[string]any{"callId": n.callID, "tool": n.tool, "details": d})
}

// jobChanged sends jobs/changed for a background job's start or end.
func (s *Server) jobChanged(ev jobs.Event) {
	if x := s.masker.Load(); x != nil {
		ev.Command, ev.Status = x.MaskText(ev.Command), x.MaskText(ev.Status)
	}
	s.conn.Notify(s.base, "jobs/changed", ev)
}

// jobOutput streams a running job's latest line as tools/progress of the
// call that started it, with the job id.
func (s *Server) jobOutput(job, callID, line string) {
	if x := s.masker.Load(); x != nil {
		line = x.MaskText(line)
	}
	s.conn.Notify(s.base, "tools/progress", map[string]any{"callId": callID, "tool": "bash", "job": job, "output": line})
}

// logMessage sends window/logMessage (type: 1 error, 2 warning, 3 info, 4 log).
func (s *Server) logMessage(typ int, msg string) {
	if x := s.masker.Load(); x != nil {
		msg = x.MaskText(msg)
	}
	if err := s.conn.Notify(s.base, "window/logMessage", map[string]any{"type": typ, "message": msg}); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("logMessage failed", "err", err)
	}
}

// tellProblems tells the user of configuration problems where they look
// (window/showMessage) and keeps them in the log (window/logMessage): an
// error, except a rule kept that never matches, a warning.
func (s *Server) tellProblems(problems []string) {
	for _, p := range problems {
		typ := 1
		if policy.Warning(p) {
			typ = 2
		}
		s.logMessage(typ, "agentls: "+p)
		s.showMessage(typ, "agentls: "+p)
	}
}

// showMessage sends window/showMessage (type: 1 error, 2 warning, 3 info),
// which the editor shows the user.
func (s *Server) showMessage(typ int, msg string) {
	if x := s.masker.Load(); x != nil {
		msg = x.MaskText(msg)
	}
	if err := s.conn.Notify(s.base, "window/showMessage", map[string]any{"type": typ, "message": msg}); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("showMessage failed", "err", err)
	}
}

// confirmer asks the user through the client's tools/confirm request. The
// request is cancelled ($/cancelRequest) with the call that asked.
type confirmer struct{ s *Server }

func (c *confirmer) Confirm(ctx context.Context, req policy.ConfirmRequest) (policy.ConfirmAnswer, error) {
	var raw json.RawMessage
	if err := protocol.Call(ctx, c.s.conn, "tools/confirm", req, &raw); err != nil {
		return policy.ConfirmAnswer{}, err
	}
	var ans policy.ConfirmAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		// The decoder's message names Go types; the model and the user
		// need what was wrong with the answer.
		return policy.ConfirmAnswer{}, fmt.Errorf("its tools/confirm answer %.80s is not an object like {\"decision\": \"allowOnce\"}", raw)
	}
	return ans, nil
}

// diagnoser asks the client what its language servers report
// (tools/diagnostics). The request is cancelled with the call, or when the
// caller stops waiting.
type diagnoser struct{ s *Server }

func (d *diagnoser) Diagnostics(ctx context.Context, callID, tool string, uris []string, wait time.Duration) (map[string][]tools.Diagnostic, error) {
	params := map[string]any{"callId": callID, "tool": tool, "uris": uris, "waitMs": wait.Milliseconds()}
	var ans struct {
		Items []struct {
			URI         string             `json:"uri"`
			Diagnostics []tools.Diagnostic `json:"diagnostics"`
		} `json:"items"`
	}
	if err := protocol.Call(ctx, d.s.conn, "tools/diagnostics", params, &ans); err != nil {
		return nil, err
	}
	// Items answer uris in order; a client may spell a URI its own way
	// (percent-encoding), so the order, not the string, pairs them.
	out := make(map[string][]tools.Diagnostic, len(uris))
	for i, it := range ans.Items {
		if i < len(uris) {
			out[uris[i]] = append(out[uris[i]], it.Diagnostics...)
		}
	}
	return out, nil
}
