package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/session"
	"github.com/agentls/agentls/internal/tools"
)

const (
	// ServerName is the serverInfo name sent at initialize.
	ServerName = "agentls"
	// ProgressInterval is the least time between two progress notifications
	// of one call; output in between is dropped (the result carries it all).
	ProgressInterval = 50 * time.Millisecond
	// RootsWait bounds how long a call waits for the client's roots after
	// initialize (or after roots/list_changed). A client that declared
	// roots and has not listed them by then gets every call refused.
	RootsWait = 5 * time.Second
)

// Options configure the MCP server. Set Session or Open.
type Options struct {
	// Session runs the calls; its registry gives the tool list.
	Session *session.Session
	// Open builds the session in the background once the client is
	// initialized (initialize, ping and discovery never wait for it;
	// tools/* requests do), for the host the client named (HostOf). The
	// server closes a session it opened when Run returns.
	Open func(Host) (*session.Session, error)
	// Version is the serverInfo version.
	Version string
	// Instructions is the short system-prompt text sent at initialize.
	Instructions string
	// Log receives the server's own log lines; nil discards them.
	Log *slog.Logger
	// RootsWait replaces the package's RootsWait when > 0 (tests).
	RootsWait time.Duration
}

// Server is an MCP server over one session. Make it with New and run it
// on a transport with Run (or use Serve for stdio-like streams).
type Server struct {
	srv  *sdk.Server
	log  *slog.Logger
	open func(Host) (*session.Session, error)

	// opened is closed once sess (or openErr) is set; neither changes after.
	opened  chan struct{}
	sess    *session.Session
	openErr error
	// openOnce starts open, or (at the end of Run) rules it out.
	openOnce sync.Once

	mu     sync.Mutex
	listed map[string]*tools.Tool // the tools added to srv, by name
	// toolsGen counts changes of the tool list; initialGen is toolsGen
	// once the session's first tools are offered (no client can have seen
	// an older list); listedGen is toolsGen as of the last tools/list
	// answered (-1: none yet). A list_changed notification is sent only
	// for a change after the initial tools that the client has not listed.
	toolsGen, initialGen, listedGen int
	// rootsPending is closed when the latest roots sync has finished; nil
	// when none is under way.
	rootsPending chan struct{}
	// rootsClaimed says a sync goroutine owns (will close) rootsPending.
	rootsClaimed bool
	// rootsRunning says a sync is under way; a roots/list_changed meanwhile
	// sets rootsAgain, and the sync asks once more when done, so requests
	// never overlap and the last answer applied is the newest.
	rootsRunning, rootsAgain bool
	// rootsDeclared says the client has named at least one root: from then
	// on its roots are the workspace, never --root or the working directory.
	rootsDeclared bool
	// rootsNotice names the roots the last sync skipped; the next tool
	// result carries it once.
	rootsNotice string
	// base is the Run context: roots syncs run on it, not on a request's.
	base context.Context
	wg   sync.WaitGroup
	// rootsWait is Options.RootsWait, else RootsWait.
	rootsWait time.Duration
	// problems tells the client of configuration problems (problems.go).
	problems problemTeller
}

// Serve runs an MCP server over newline-delimited JSON on in/out until the
// client closes in or ctx is cancelled.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	return New(opts).Run(ctx, &stdioTransport{in: readCloser(in), out: writeCloser(out)})
}

// New builds a server whose tool list follows the session's registry.
func New(opts Options) *Server {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{log: log, open: opts.Open, opened: make(chan struct{}), listed: map[string]*tools.Tool{}, listedGen: -1, rootsWait: RootsWait}
	if opts.RootsWait > 0 {
		s.rootsWait = opts.RootsWait
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: ServerName, Version: opts.Version}, &sdk.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       slog.New(quietCancel{log.Handler()}),
		InitializedHandler: func(ctx context.Context, r *sdk.InitializedRequest) {
			s.startOpen(r.Session)
			s.syncRoots(r.Session, false)
			s.tellStartProblems(r.Session)
		},
		RootsListChangedHandler: func(ctx context.Context, r *sdk.RootsListChangedRequest) { s.syncRoots(r.Session, true) },
		Capabilities:            &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}, Logging: &sdk.LoggingCapabilities{}},
	})
	s.srv.AddReceivingMiddleware(s.middleware)
	s.srv.AddReceivingMiddleware(s.rootsGate) // outermost: before the session is awaited
	s.srv.AddSendingMiddleware(s.sending)
	if opts.Session != nil {
		s.setSession(opts.Session, nil)
	}
	return s
}

// setSession makes sess the server's session and offers its tools.
func (s *Server) setSession(sess *session.Session, err error) {
	s.sess, s.openErr = sess, err
	if sess != nil {
		s.syncTools()
		s.mu.Lock()
		s.initialGen = s.toolsGen
		s.mu.Unlock()
		sess.Registry.OnChange(s.syncTools)
		sess.OnProblems(s.tellProblems)
	}
	close(s.opened)
}

// session waits until the session is open.
func (s *Server) session(ctx context.Context) (*session.Session, error) {
	select {
	case <-s.opened:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.openErr != nil {
		return nil, fmt.Errorf("agentls could not open the workspace: %w", s.openErr)
	}
	return s.sess, nil
}

// Run serves one client on t until it disconnects or ctx is cancelled, and
// waits for the goroutines it started.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	err := s.srv.Run(ctx, t)
	cancel()
	// No session is opened from now on; wait for one being opened.
	s.openOnce.Do(func() {
		if s.open != nil {
			s.setSession(nil, errors.New("the server stopped"))
		}
	})
	s.wg.Wait()
	<-s.opened
	if s.sess != nil {
		s.sess.Registry.OnChange(nil)
		s.sess.OnProblems(nil)
		if s.open != nil {
			s.sess.Close()
		}
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp server: %w", err)
	}
	return nil
}

// clientName is the clientInfo.name ss's client sent at initialize: the
// host, whose output cap sizes the results (HostOf).
func clientName(ss *sdk.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		return p.ClientInfo.Name
	}
	return ""
}

// startOpen builds the session in the background, once. It starts when
// the client has its initialize answer (notifications/initialized) or asks
// for tools, whichever comes first, so that building it does not compete
// with the handshake for the CPU.
func (s *Server) startOpen(ss *sdk.ServerSession) {
	s.openOnce.Do(func() {
		if s.open != nil {
			host := HostOf(clientName(ss))
			s.log.Info("results sized for the MCP host", "client", host.Name, "bytes", host.Cap.Bytes, "lines", host.Cap.Lines)
			s.wg.Go(func() { s.setSession(s.open(host)) })
		}
	})
}

// validLogLevel reports whether l is one of MCP's logging levels (RFC
// 5424's severities).
func validLogLevel(l sdk.LoggingLevel) bool {
	switch l {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
		return true
	}
	return false
}

// middleware marks roots as pending from initialize on (so the first call
// waits for them), holds requests until the session is open, records which
// tool list the client has seen, and activates a deferred tool a client
// calls by name, as the editor protocol does.
func (s *Server) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		// Only the tool methods need the session; initialize, ping and
		// discovery are answered while it is being built.
		var sess *session.Session
		if strings.HasPrefix(method, "tools/") {
			ss, _ := req.GetSession().(*sdk.ServerSession)
			s.startOpen(ss)
			var err error
			if sess, err = s.session(ctx); err != nil {
				return nil, err
			}
		}
		switch method {
		case "logging/setLevel":
			// The SDK keeps any string as the level; MCP names eight.
			if p, ok := req.GetParams().(*sdk.SetLoggingLevelParams); ok && !validLogLevel(p.Level) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("logging/setLevel: unknown level %q; use debug, info, notice, warning, error, critical, alert or emergency", p.Level)}
			}
			s.problems.levelChosen()
		case "tools/list":
			// The client's roots decide the folders, and with them the
			// extension tools and the limits the descriptions state.
			s.waitRoots(ctx)
			s.mu.Lock()
			gen := s.toolsGen
			s.mu.Unlock()
			res, err := next(ctx, method, req)
			if err == nil {
				s.mu.Lock()
				s.listedGen = max(s.listedGen, gen)
				s.mu.Unlock()
			}
			return res, err
		case "initialize":
			// Only a client that declares roots is asked for them, and
			// then calls wait for its answer.
			if p, ok := req.GetParams().(*sdk.InitializeParams); ok && declaresRoots(p) {
				s.mu.Lock()
				if s.rootsPending == nil {
					s.rootsPending, s.rootsClaimed = make(chan struct{}), false
				}
				s.mu.Unlock()
			}
		case "tools/call":
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p != nil {
				// The client's roots decide the folders, and so the
				// .agentls/mcp.json whose servers a search must see.
				s.waitRoots(ctx)
				// Upstream MCP servers register their tools in the
				// background: a search or an unknown name waits for them.
				if err := sess.AwaitTools(ctx, p.Name); err != nil {
					return nil, err
				}
				t, ok := sess.Registry.Lookup(p.Name)
				if !ok {
					// Errors are results (docs/tools.md): the executor's answer
					// names the tools there are and the closest one, where
					// the SDK would send a protocol error.
					return sdkResult(sess.Executor.Call(ctx, tools.Request{Name: p.Name, Arguments: p.Arguments}, nil)), nil
				}
				if !sess.Registry.IsActive(t.Name) {
					sess.Registry.Activate(t.Name)
				}
				// A case variant (Read, BASH) is the tool it uniquely
				// names; the SDK knows tools by their exact name only.
				p.Name = t.Name
			}
		}
		return next(ctx, method, req)
	}
}

// rootsGate applies the client's roots to tool calls: with roots declared
// and none usable a call fails naming them (never running on the working
// directory or an earlier root set), and the first result after a sync that
// skipped roots names them.
func (s *Server) rootsGate(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		listed := s.waitRoots(ctx)
		// A refusal comes from a roots sync, which runs once the session
		// is open; this gate does not open it.
		refusal := ""
		select {
		case <-s.opened:
			if s.sess != nil {
				refusal = s.sess.FoldersRefusal()
			}
		default:
		}
		if !listed && ctx.Err() == nil {
			refusal = s.unlisted(fmt.Sprintf("no answer within %v", s.rootsWait))
		}
		if refusal != "" {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: refusal}}}, nil
		}
		// The roots the last sync skipped are named once, in the result
		// (within its budget, so inside the host's cap); a result the
		// notice did not reach (an approval round, a result cut before it)
		// leaves it for the next.
		s.mu.Lock()
		notice := s.rootsNotice
		s.mu.Unlock()
		if notice != "" {
			ctx = tools.WithNotice(ctx, notice)
		}
		res, err := next(ctx, method, req)
		if r, ok := res.(*sdk.CallToolResult); ok && err == nil && notice != "" && carries(r, notice) {
			s.mu.Lock()
			if s.rootsNotice == notice {
				s.rootsNotice = ""
			}
			s.mu.Unlock()
		}
		return res, err
	}
}

// carries reports whether a text part of r holds note.
func carries(r *sdk.CallToolResult, note string) bool {
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok && strings.Contains(t.Text, note) {
			return true
		}
	}
	return false
}

// sending drops a tools/list_changed notification the client does not need:
// for the tools the session started with (registered while the client
// connected, before any tools/list could be answered), or for a change the
// client has listed since.
func (s *Server) sending(next sdk.MethodHandler) sdk.MethodHandler {
	s.problems.send = next
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "notifications/tools/list_changed" {
			s.mu.Lock()
			stale := s.toolsGen > s.initialGen && s.listedGen < s.toolsGen
			s.mu.Unlock()
			if !stale {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// syncTools makes the server's tool list equal the registry's active set.
// The SDK schedules notifications/tools/list_changed for every change
// (sending decides whether it goes out).
func (s *Server) syncTools() {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	defer func() {
		if changed {
			s.toolsGen++
		}
	}()
	want := map[string]bool{}
	for _, t := range s.sess.Registry.List(false) {
		want[t.Name] = true
		if s.listed[t.Name] == t {
			continue // listed, and not redefined since (a reloaded extension tool is a new *Tool)
		}
		st, err := sdkTool(t)
		if err != nil {
			s.log.Warn("tool not offered over MCP", "tool", t.Name, "err", err)
			continue
		}
		s.srv.AddTool(st, s.handle)
		s.listed[t.Name] = t
		changed = true
	}
	var gone []string
	for n := range s.listed {
		if !want[n] {
			gone = append(gone, n)
			delete(s.listed, n)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
		changed = true
	}
}

// sdkTool maps a registry tool to its MCP definition.
func sdkTool(t *tools.Tool) (*sdk.Tool, error) {
	schema := t.Schema
	if schema == nil {
		schema = map[string]any{}
	}
	switch typ := schema["type"]; typ {
	case "object":
	case nil:
		// MCP requires an object schema; an upstream tool may omit the type.
		schema = maps.Clone(schema)
		schema["type"] = "object"
	default:
		return nil, fmt.Errorf("input schema type is %v, MCP needs \"object\"", typ)
	}
	a := t.Annotations()
	flag := func(k string) bool { b, _ := a[k].(bool); return b }
	destructive, openWorld := flag("destructiveHint"), flag("openWorldHint")
	return &sdk.Tool{
		Name:        t.Name,
		Title:       t.DisplayTitle(),
		Description: t.Description,
		InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{
			ReadOnlyHint:    flag("readOnlyHint"),
			DestructiveHint: &destructive,
			IdempotentHint:  flag("idempotentHint"),
			OpenWorldHint:   &openWorld,
		},
		Meta: sdk.Meta{"source": t.Source},
	}, nil
}

// handle runs one tools/call through the session's executor.
func (s *Server) handle(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	// The SDK keeps a call running when the server is stopped, and waits
	// for it: a stopped server (SIGTERM) would wait for a bash command to
	// end by itself. The call ends with Run's context too.
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	if base != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(base, cancel)()
	}
	s.waitRoots(ctx)
	var rf tools.ReporterFactory
	if tok := req.Params.GetProgressToken(); tok != nil {
		rf = func(callID, tool string) tools.Reporter {
			return &progressReporter{ctx: ctx, ss: req.Session, token: tok}
		}
	}
	ctx = context.WithValue(ctx, sessionKey{}, req.Session)
	var rt *roundTrip
	if multiRoundTrip(req.Session) {
		rt = &roundTrip{responses: req.Params.InputResponses}
		ctx = context.WithValue(ctx, roundTripKey{}, rt)
	}
	res := s.sess.Executor.Call(ctx, tools.Request{Name: req.Params.Name, Arguments: req.Params.Arguments}, rf)
	if rt != nil && rt.need != nil {
		// The approval is asked in a new round: the client answers the
		// question and calls again with the answer; nothing ran.
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{approvalInput: rt.need}}, nil
	}
	return sdkResult(res), nil
}

// sdkResult maps a result: text and image parts to MCP content, the call id
// and (for a result that is no error) details to _meta.
func sdkResult(r tools.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: r.IsError, Content: []sdk.Content{}}
	for _, c := range r.Content {
		switch c.Type {
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &sdk.TextContent{Text: fmt.Sprintf("[image of type %s could not be decoded: %v]", c.MimeType, err)})
				continue
			}
			out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MimeType})
		default:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		}
	}
	meta := sdk.Meta{"callId": r.CallID}
	// An error's details (the permission rule, normalization, timings)
	// are agentls's own; a host may print the whole result to the model
	// on an error (Gemini CLI does), so they stay in the log.
	if len(r.Details) > 0 && !r.IsError {
		meta["details"] = r.Details
	}
	out.Meta = meta
	return out
}

// progressReporter turns tools/progress into notifications/progress for a
// request that carried a progress token.
type progressReporter struct {
	ctx   context.Context
	ss    *sdk.ServerSession
	token any

	mu    sync.Mutex
	count float64
	last  time.Time
}

func (p *progressReporter) Progress(pr tools.Progress) {
	p.mu.Lock()
	now := time.Now()
	if !p.last.IsZero() && now.Sub(p.last) < ProgressInterval {
		p.mu.Unlock()
		return
	}
	p.last = now
	p.count++
	params := &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: p.count, Message: pr.Message}
	if pr.Output != "" {
		params.Message = pr.Output
	}
	if pr.Percentage != nil && *pr.Percentage >= p.count {
		params.Progress, params.Total = *pr.Percentage, 100
		p.count = *pr.Percentage
	}
	p.mu.Unlock()
	// A failed notification (client gone, call cancelled) changes nothing.
	_ = p.ss.NotifyProgress(p.ctx, params)
}

// Details are sent with the result in _meta.
func (p *progressReporter) Details(map[string]any) {}

// syncRoots asks the client for its roots in the background and makes them
// the workspace folders; calls wait for it (at most RootsWait). Only a
// client that declared roots (or announced a change) is asked; one without
// keeps the session's folders (--root, else cwd). applyRoots says what a
// stale root does.
func (s *Server) syncRoots(ss *sdk.ServerSession, changed bool) {
	s.mu.Lock()
	if s.rootsRunning {
		if changed && declaresRoots(ss.InitializeParams()) {
			s.rootsAgain = true
		}
		s.mu.Unlock()
		return
	}
	done := s.rootsPending
	switch {
	case done != nil && !s.rootsClaimed:
		// The gate set at initialize: this sync releases it.
	case changed && declaresRoots(ss.InitializeParams()) || done != nil:
		done = make(chan struct{})
		s.rootsPending = done
	default:
		// A client that did not declare roots is not asked (the
		// spec's rule); it keeps --root, else the working directory.
		s.mu.Unlock()
		return
	}
	s.rootsClaimed = s.rootsPending != nil
	s.rootsRunning = true
	base := s.base
	s.mu.Unlock()
	if base == nil {
		base = context.Background()
	}
	s.wg.Go(func() {
		defer close(done)
		for {
			s.syncRootsOnce(base, ss)
			s.mu.Lock()
			again := s.rootsAgain
			s.rootsAgain, s.rootsRunning = false, again
			s.mu.Unlock()
			if !again {
				return
			}
		}
	})
}

// syncRootsOnce asks the client for its roots and makes them the folders.
func (s *Server) syncRootsOnce(base context.Context, ss *sdk.ServerSession) {
	// The wait for the answer starts once the session is open: a big
	// workspace may take longer to open than the client has to answer.
	sess, err := s.session(base)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(base, s.rootsWait)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		if base.Err() != nil {
			return
		}
		// The client said its roots are the workspace and did not name
		// them: no folder is known to be its, so none is used.
		why := err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			why = fmt.Sprintf("no answer within %v", s.rootsWait)
		}
		sess.NoFolders(s.unlisted(why))
		s.mu.Lock()
		s.rootsNotice = ""
		s.mu.Unlock()
		s.log.Warn("client declared roots but did not list them; tool calls fail until it does", "err", err)
		return
	}
	s.applyRoots(sess, res.Roots)
}

// applyRoots makes the client's roots the workspace folders. Each root that
// cannot be opened (not a file:// URI, missing, not a directory) is skipped
// and named, in the log and in the next tool result; the others are kept.
// With none usable, every call fails naming the roots. An empty list from a
// client that never named a root keeps the session's folders (--root, else
// the working directory).
func (s *Server) applyRoots(sess *session.Session, roots []*sdk.Root) {
	s.mu.Lock()
	declared := s.rootsDeclared || len(roots) > 0
	s.rootsDeclared = declared
	s.mu.Unlock()
	if !declared {
		return
	}
	specs, skipped := folderSpecs(roots)
	for i, u := range skipped {
		skipped[i] = u + " (not a file:// URI)"
	}
	specs, bad := session.UsableFolders(specs)
	skipped = append(skipped, bad...)
	var setErr error
	if len(specs) > 0 {
		setErr = sess.SetFolders(specs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(roots) == 0:
		sess.NoFolders("No workspace folder: the MCP client's roots list is empty. agentls does not fall back to its working directory or to earlier roots; add a root in the client.")
		s.rootsNotice = ""
		s.log.Warn("client roots list is empty; tool calls fail until a root is added")
	case len(specs) == 0 || setErr != nil:
		why := "none of the MCP client's roots can be opened: " + strings.Join(skipped, "; ")
		if setErr != nil {
			why = "the MCP client's roots could not be opened: " + setErr.Error()
		}
		sess.NoFolders("No workspace folder: " + why + ". agentls does not fall back to its working directory or to earlier roots; fix the roots in the client.")
		s.rootsNotice = ""
		s.log.Warn("no client root usable; tool calls fail until the roots are fixed", "skipped", skipped, "err", setErr)
	default:
		s.rootsNotice = ""
		if len(skipped) > 0 {
			var kept []string
			for _, f := range specs {
				kept = append(kept, f.Path)
			}
			s.rootsNotice = "[agentls: workspace roots skipped: " + strings.Join(skipped, "; ") + ". The workspace is " + strings.Join(kept, ", ") + ".]"
			s.log.Warn("client roots skipped", "skipped", skipped)
		}
		s.log.Info("workspace folders from client roots", "count", len(specs))
	}
}

// unlisted is the refusal of a call while a client that declared the roots
// capability has not listed its roots; why is what roots/list gave.
func (s *Server) unlisted(why string) string {
	return fmt.Sprintf("No workspace folder: the MCP client declared the roots capability but did not list its roots (roots/list: %s). agentls does not fall back to its working directory or to earlier roots; the client must answer roots/list.", why)
}

// waitRoots blocks until a pending roots sync is done, ctx ends, or the
// roots wait passes after the session opened; it reports whether no sync
// is pending any more.
func (s *Server) waitRoots(ctx context.Context) bool {
	s.mu.Lock()
	ch := s.rootsPending
	s.mu.Unlock()
	if ch == nil {
		return true
	}
	// The roots are asked for once the session is open (syncRootsOnce).
	select {
	case <-ch:
		return true
	case <-s.opened:
	case <-ctx.Done():
		return false
	}
	t := time.NewTimer(s.rootsWait)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// declaresRoots reports whether a client declared the roots capability:
// only such a client is sent roots/list (a stray list_changed from another
// changes nothing).
func declaresRoots(p *sdk.InitializeParams) bool {
	return p != nil && p.Capabilities != nil && (p.Capabilities.Roots.ListChanged || p.Capabilities.RootsV2 != nil)
}

// folderSpecs turns file:// root URIs into folder specs. Other roots (an
// https:// repository, an untitled: buffer) name no folder agentls can
// open: they are skipped, each reported in skipped, and the file roots
// make the workspace.
func folderSpecs(roots []*sdk.Root) (specs []ops.FolderSpec, skipped []string) {
	for _, r := range roots {
		if r == nil {
			continue
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			skipped = append(skipped, r.URI)
			continue
		}
		p := filepath.FromSlash(u.Path)
		name := r.Name
		if name == "" {
			name = filepath.Base(p)
		}
		specs = append(specs, ops.FolderSpec{Name: name, Path: p})
	}
	return specs, skipped
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}

// quietCancel lowers the SDK's "server run cancelled" record from error to
// debug: it is how a SIGTERM, or the end of a test, ends the server.
type quietCancel struct{ slog.Handler }

func (h quietCancel) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && r.Message == "server run cancelled" {
		r.Level = slog.LevelDebug
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietCancel) WithAttrs(as []slog.Attr) slog.Handler {
	return quietCancel{h.Handler.WithAttrs(as)}
}

func (h quietCancel) WithGroup(name string) slog.Handler {
	return quietCancel{h.Handler.WithGroup(name)}
}
