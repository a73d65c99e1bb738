package upstream

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/tools"
)

// Timing of starts and restarts.
const (
	// ConnectTimeout bounds one start: spawn, initialize and tools/list.
	ConnectTimeout = 30 * time.Second
	// SearchWait bounds how long tool_search waits for first starts; then
	// it answers with the tools listed so far and names the servers still
	// starting (SearchNotes). One hung server must not stall every search.
	SearchWait = 10 * time.Second
	// FirstRestartDelay is the wait before the first restart after a crash.
	FirstRestartDelay = 100 * time.Millisecond
	// MaxRestartDelay caps the backoff (1 s, 2 s, 4 s, … after the first).
	MaxRestartDelay = 30 * time.Second
	// StableAfter is how long a connection must live for its crash to count
	// as a first failure again (the backoff resets).
	StableAfter = 30 * time.Second
	// TerminateGrace is how long Close waits after closing a server's stdin
	// before SIGTERM.
	TerminateGrace = 2 * time.Second
	// ToolNameSep joins server and tool names: <server>__<tool>.
	ToolNameSep = "__"
	// MaxToolName is the longest tool name offered to models.
	MaxToolName = 64
)

// restartDelay is the backoff before restart number n (1-based).
func restartDelay(n int) time.Duration {
	if n <= 1 {
		return FirstRestartDelay
	}
	d := time.Second << (n - 2)
	if d > MaxRestartDelay || d <= 0 {
		return MaxRestartDelay
	}
	return d
}

// Manager owns the upstream servers of a session.
type Manager struct {
	reg    *tools.Registry
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // guards servers (Update replaces them), pending and ready
	servers []*server
	pending int           // first starts still running
	ready   chan struct{} // closed while pending is 0; a new one when starts begin

	// onProblem gets what the user should hear of (a tool that could not
	// be registered); problems found before it is set wait in problems.
	onProblem func(string)
	problems  []string
}

// OnProblem sets where problems the user should hear of go (the editor's
// window/logMessage), and hands it those found so far.
func (m *Manager) OnProblem(f func(msg string)) {
	m.mu.Lock()
	m.onProblem = f
	early := m.problems
	m.problems = nil
	m.mu.Unlock()
	for _, p := range early {
		f(p)
	}
}

// report passes msgs to OnProblem's function, or keeps them for it.
func (m *Manager) report(msgs []string) {
	m.mu.Lock()
	f := m.onProblem
	if f == nil {
		m.problems = append(m.problems, msgs...)
	}
	m.mu.Unlock()
	for _, p := range msgs {
		if f != nil {
			f(p)
		}
	}
}

// Register starts every configured server in the background and registers
// its tools as deferred tools named <server>__<tool> (Source "mcp:<server>")
// as soon as they are listed. It does not wait for the servers: see Wait.
// The servers stop when ctx ends or Close is called.
func Register(ctx context.Context, reg *tools.Registry, cfgs []ServerConfig, log *slog.Logger) (*Manager, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &Manager{reg: reg, log: log, ctx: ctx, cancel: cancel, ready: make(chan struct{})}
	close(m.ready) // nothing is starting yet
	seen := map[string]bool{}
	var errs []error
	for _, c := range cfgs {
		if seen[c.Name] {
			errs = append(errs, fmt.Errorf("upstream server %q is configured twice", c.Name))
			continue
		}
		seen[c.Name] = true
		m.servers = append(m.servers, m.newServer(c))
	}
	m.startAll(m.servers)
	return m, errors.Join(errs...)
}

// startAll starts servers in the background; Wait waits for these first
// starts (and any others running).
func (m *Manager) startAll(servers []*server) {
	if len(servers) == 0 {
		return
	}
	m.mu.Lock()
	if m.pending == 0 {
		m.ready = make(chan struct{})
	}
	m.pending += len(servers)
	m.mu.Unlock()
	for _, s := range servers {
		m.wg.Go(func() {
			if _, err := s.connect(); err != nil {
				s.log.Warn("upstream MCP server did not start", "err", err)
			}
			m.mu.Lock()
			if m.pending--; m.pending == 0 {
				close(m.ready)
			}
			m.mu.Unlock()
		})
	}
}

// newServer is the not yet started server for c; its context ends with the
// manager's or when Update drops it.
func (m *Manager) newServer(c ServerConfig) *server {
	ctx, cancel := context.WithCancel(m.ctx)
	s := &server{m: m, cfg: c, ctx: ctx, cancel: cancel, log: m.log.With("mcpServer", c.Name), progress: map[string]tools.Reporter{}}
	if s.remote() {
		// Errors carry the URL (net/url and the SDK spell it out): every
		// log line of the server goes through redact.
		s.log = slog.New(redacting{s.log.Handler(), s.redact})
		s.http = newHTTPClient(c, s.log)
	}
	return s
}

// Update makes the running servers match cfgs (the configuration read again
// after mcp.json changed): a server no longer configured, or configured
// differently, is stopped and its tools leave the registry; a new or changed
// one starts in the background and registers its tools as Register does.
func (m *Manager) Update(cfgs []ServerConfig) error {
	want := map[string]ServerConfig{}
	var errs []error
	for _, c := range cfgs {
		if _, dup := want[c.Name]; dup {
			errs = append(errs, fmt.Errorf("upstream server %q is configured twice", c.Name))
			continue
		}
		want[c.Name] = c
	}
	m.mu.Lock()
	var keep, stop, start []*server
	have := map[string]bool{}
	for _, s := range m.servers {
		c, ok := want[s.cfg.Name]
		if ok && reflect.DeepEqual(c, s.cfg) {
			keep = append(keep, s)
			have[s.cfg.Name] = true
			continue
		}
		stop = append(stop, s)
	}
	for _, c := range cfgs {
		if !have[c.Name] && want[c.Name].Name != "" {
			have[c.Name] = true
			start = append(start, m.newServer(want[c.Name]))
		}
	}
	m.servers = append(keep, start...)
	m.mu.Unlock()
	for _, s := range stop {
		s.stop()
		m.log.Info("upstream MCP server stopped: its configuration changed or was removed", "mcpServer", s.cfg.Name)
	}
	m.startAll(start)
	return errors.Join(errs...)
}

// list returns the current servers.
func (m *Manager) list() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*server(nil), m.servers...)
}

// Wait blocks until every server's first start has ended (listed its tools
// or failed) — those of Register and of the latest Update — or ctx ends.
// tool_search should wait for it, so a search right after startup or a
// configuration change sees the upstream tools.
func (m *Manager) Wait(ctx context.Context) error {
	m.mu.Lock()
	ready := m.ready
	m.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SearchNotes says which servers' tools a search may be missing: those
// still on their first start, and those down after a failed start or a
// crash. Nil when every server is connected.
func (m *Manager) SearchNotes() []string {
	var notes []string
	for _, s := range m.list() {
		s.mu.Lock()
		switch {
		case s.cs != nil:
		case s.lastErr == nil:
			notes = append(notes, fmt.Sprintf("MCP server %q is still starting, so its tools are not listed yet: search again in a few seconds.", s.cfg.Name))
		default:
			notes = append(notes, fmt.Sprintf("MCP server %q is not running (restarting in %s); calling one of its tools says why.", s.cfg.Name, max(0, time.Until(s.nextTry)).Round(time.Millisecond)))
		}
		s.mu.Unlock()
	}
	return notes
}

// Explain answers a call of a tool name that is not registered but names
// a configured server (<server>__<tool>) whose tools are not listed: the
// server could not be started or reached, or it is still starting. ok is
// false for any other name. names name the tools in the text as the
// client's model sees them.
func (m *Manager) Explain(names mention.Prefix, name string) (msg string, ok bool) {
	prefix, _, found := strings.Cut(name, ToolNameSep)
	if !found {
		return "", false
	}
	for _, s := range m.list() {
		if s.cfg.Name != prefix {
			continue
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case s.cs == nil && s.lastErr != nil:
			return s.redact(unavailable(name, s.cfg.Name, s.lastErr, s.downLocked())), true
		case s.cs == nil:
			return fmt.Sprintf("%s is not available yet: the MCP server %q is still starting. Call it again shortly.", name, prefix), true
		}
		return names.Sprintf("the MCP server %q has no tool %q; use {{tool_search}} to find its tools.", prefix, strings.TrimPrefix(name, prefix+ToolNameSep)), true
	}
	return "", false
}

// Close stops every server and waits for the goroutines.
func (m *Manager) Close() error {
	m.cancel()
	for _, s := range m.list() {
		s.close()
	}
	m.wg.Wait()
	return nil
}

// PIDs maps each running stdio server's name to its process id (tests,
// status); http and sse servers have no process and are not listed.
func (m *Manager) PIDs() map[string]int {
	out := map[string]int{}
	for _, s := range m.list() {
		s.mu.Lock()
		if s.cmd != nil && s.cmd.Process != nil && s.cs != nil {
			out[s.cfg.Name] = s.cmd.Process.Pid
		}
		s.mu.Unlock()
	}
	return out
}

// server is one upstream: its connection and restart state.
type server struct {
	m   *Manager
	cfg ServerConfig
	log *slog.Logger
	// ctx ends with the manager's, or when Update stops this server.
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	cs         *sdk.ClientSession
	cmd        *exec.Cmd     // nil for http and sse servers
	http       *http.Client  // http and sse servers only
	since      time.Time     // when cs connected
	connecting chan struct{} // closed when the running start attempt ends
	failures   int           // crashes/failed starts since the last stable run
	lastErr    error
	nextTry    time.Time
	registered map[string]bool // upstream tool names registered
	progress   map[string]tools.Reporter
	tokenSeq   atomic.Int64
}

// session returns a live connection, starting the server when it never ran
// or its restart is due. A crashed server whose restart is not due yet is
// an error the model can read.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	for {
		s.mu.Lock()
		if s.cs != nil {
			cs := s.cs
			s.mu.Unlock()
			return cs, nil
		}
		if ch := s.connecting; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if s.lastErr != nil && time.Until(s.nextTry) > 0 {
			err := s.downLocked()
			s.mu.Unlock()
			return nil, err
		}
		s.mu.Unlock()
		return s.connect()
	}
}

// startError is a server's failed start, its text redacted; cannotRun
// says its command cannot be run at all (missing, not executable).
type startError struct {
	msg       string
	cannotRun bool
}

func (e *startError) Error() string { return e.msg }

// unavailable is the result of a call to tool of server, which is down:
// cause is why, down what the restart loop says. A command that cannot be
// run at all (missing, not executable) will not start by waiting, so the
// model is told to do without it and tell the user.
func unavailable(tool, server string, cause, down error) string {
	if se, ok := errors.AsType[*startError](cause); ok && se.cannotRun {
		return fmt.Sprintf("%s is unavailable: the MCP server %q cannot start (%v). Calling again will not help: do without it, and tell the user that the server's command in mcp.json does not run.", tool, server, down)
	}
	return fmt.Sprintf("%s is unavailable: %v. Call it again shortly, or do without it.", tool, down)
}

// downLocked is the error a call gets while the server is down and its
// restart is not due.
func (s *server) downLocked() error {
	return fmt.Errorf("%w; restarting in %s (restart %d)", s.lastErr, max(0, time.Until(s.nextTry)).Round(time.Millisecond), s.failures)
}

// remote reports whether the server is reached over HTTP (no process).
func (s *server) remote() bool {
	return s.cfg.Type == TransportHTTP || s.cfg.Type == TransportSSE
}

// redact removes the credentials a remote server's URL may hold (user
// info, query) from msg, an error text that quotes the URL.
func (s *server) redact(msg string) string {
	if !s.remote() {
		return msg
	}
	return redactURL(msg, s.cfg.URL)
}

// redactURL removes from msg what raw (a configured URL) may hold of
// credentials: the URL as written, net/url's redacted spelling of it
// (user:***@), its query and its user info wherever they appear.
func redactURL(msg, raw string) string {
	safe := logEndpoint(raw)
	msg = strings.ReplaceAll(msg, raw, safe)
	u, err := url.Parse(raw)
	if err != nil {
		return msg
	}
	msg = strings.ReplaceAll(msg, u.Redacted(), safe)
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, "?"+u.RawQuery, "")
	}
	if u.User != nil {
		msg = strings.ReplaceAll(msg, u.User.String()+"@", "")
		msg = strings.ReplaceAll(msg, u.User.Username()+":***@", "")
	}
	return msg
}

// connect starts the server, initializes, lists and registers its tools.
func (s *server) connect() (*sdk.ClientSession, error) {
	s.mu.Lock()
	if s.cs != nil {
		cs := s.cs
		s.mu.Unlock()
		return cs, nil
	}
	if s.connecting != nil {
		ch := s.connecting
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
		cs, err := s.cs, s.lastErr
		s.mu.Unlock()
		if cs == nil {
			return nil, err
		}
		return cs, nil
	}
	done := make(chan struct{})
	s.connecting = done
	s.mu.Unlock()

	cs, cmd, listed, err := s.start()

	s.mu.Lock()
	defer func() { s.connecting = nil; close(done); s.mu.Unlock() }()
	if err != nil {
		s.failLocked(err)
		return nil, s.lastErr
	}
	if s.ctx.Err() != nil {
		cs.Close()
		return nil, errors.New("the MCP server was stopped (agentls is shutting down or its configuration changed)")
	}
	s.cs, s.cmd, s.since, s.lastErr = cs, cmd, time.Now(), nil
	s.registerLocked(listed)
	s.m.wg.Go(func() { s.watch(cs, cmd) })
	if cmd != nil {
		s.log.Info("upstream MCP server started", "pid", cmd.Process.Pid, "tools", len(listed))
	} else {
		s.log.Info("upstream MCP server connected", "transport", s.cfg.Type, "endpoint", logEndpoint(s.cfg.URL), "tools", len(listed))
	}
	return cs, nil
}

// start spawns the process (stdio) or opens the HTTP session, initializes
// and lists the tools.
func (s *server) start() (*sdk.ClientSession, *exec.Cmd, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(s.ctx, ConnectTimeout)
	defer cancel()
	var transport sdk.Transport
	var cmd *exec.Cmd
	var stderr *logWriter
	what := s.cfg.Command
	switch s.cfg.Type {
	case TransportHTTP:
		// MaxRetries -1: a broken stream fails the session at once and the
		// manager's backoff restarts it, as for a crashed process.
		transport = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.http, MaxRetries: -1}
		what = logEndpoint(s.cfg.URL)
	case TransportSSE:
		transport = &longLivedTransport{t: &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.http}, ctx: s.ctx}
		what = logEndpoint(s.cfg.URL)
	default:
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir // a relative command (./bin/srv) resolves here too
		cmd.Env = os.Environ()
		for k, v := range s.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		stderr = &logWriter{log: s.log}
		cmd.Stderr = stderr
		transport = &stdioTransport{cmd: cmd, terminate: TerminateGrace, log: s.log.With("stream", "stdout")}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "agentls", Version: "upstream"}, &sdk.ClientOptions{
		Capabilities:                &sdk.ClientCapabilities{},
		ProgressNotificationHandler: s.onProgress,
		ToolListChangedHandler: func(ctx context.Context, r *sdk.ToolListChangedRequest) {
			s.m.wg.Go(func() { s.relist(r.Session) })
		},
	})
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Kill()
		}
		return nil, nil, nil, &startError{
			msg:       fmt.Sprintf("MCP server %q (%s) did not start: %s%s", s.cfg.Name, what, s.redact(err.Error()), stderrSaid(stderr)),
			cannotRun: errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission),
		}
	}
	var listed []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, nil, nil, fmt.Errorf("MCP server %q: tools/list: %s", s.cfg.Name, s.redact(err.Error()))
		}
		listed = append(listed, t)
	}
	return cs, cmd, listed, nil
}

// relist registers tools an upstream added (notifications/tools/list_changed).
func (s *server) relist(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.ctx, ConnectTimeout)
	defer cancel()
	var listed []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.log.Warn("tools/list after list_changed failed", "err", err)
			return
		}
		listed = append(listed, t)
	}
	s.mu.Lock()
	s.registerLocked(listed)
	s.mu.Unlock()
}

// failLocked records a failed start or a crash and schedules the restart.
func (s *server) failLocked(err error) {
	s.failures++
	s.lastErr = err
	d := restartDelay(s.failures)
	s.nextTry = time.Now().Add(d)
	s.log.Warn("upstream MCP server unavailable", "err", err, "restartIn", d)
	s.m.wg.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-s.ctx.Done():
		case <-t.C:
			if _, err := s.connect(); err != nil {
				s.log.Debug("restart failed", "err", err)
			}
		}
	})
}

// watch waits for the connection to end; an end nobody asked for is a
// crash: the tools answer "unavailable" until the restart.
func (s *server) watch(cs *sdk.ClientSession, cmd *exec.Cmd) {
	werr := cs.Wait()
	if s.ctx.Err() != nil {
		return
	}
	status := "its connection closed"
	if cmd != nil && cmd.ProcessState != nil {
		status = "it exited (" + cmd.ProcessState.String() + ")"
	} else if werr != nil {
		status = "its connection failed: " + s.redact(werr.Error())
	}
	if cmd != nil {
		w, _ := cmd.Stderr.(*logWriter)
		status += stderrSaid(w)
	}
	s.lost(cs, status)
}

// lost records that cs broke (why says how) unless it was replaced
// already: the tools answer "unavailable" until the restart the backoff
// schedules.
func (s *server) lost(cs *sdk.ClientSession, why string) {
	s.mu.Lock()
	if s.cs != cs {
		s.mu.Unlock()
		return
	}
	s.cs, s.cmd = nil, nil
	if time.Since(s.since) >= StableAfter {
		s.failures = 0
	}
	s.failLocked(fmt.Errorf("MCP server %q stopped: %s", s.cfg.Name, why))
	s.mu.Unlock()
	// Not under the lock nor in the caller's way: closing an HTTP session
	// sends a DELETE that may take a while.
	s.m.wg.Go(func() { cs.Close() })
}

// stop ends the server for good (Update dropped it): no restart, and its
// tools leave the registry.
func (s *server) stop() {
	s.cancel()
	s.close()
	s.m.reg.Replace(s.source(), nil)
}

// source is the registry Source of this server's tools.
func (s *server) source() string { return "mcp:" + s.cfg.Name }

func (s *server) close() {
	s.mu.Lock()
	cs := s.cs
	s.cs = nil
	s.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	if s.http != nil {
		s.http.CloseIdleConnections()
	}
}

// ToolName is the agentls name of an upstream tool: every character of tool
// outside [a-zA-Z0-9_-] becomes "_" (one per rune; one per byte of invalid
// UTF-8), and the whole is cut to MaxToolName bytes.
func ToolName(server, tool string) string {
	n := server + ToolNameSep + strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && nameByte(byte(r)) {
			return r
		}
		return '_'
	}, tool)
	if len(n) > MaxToolName {
		n = n[:MaxToolName]
	}
	return n
}

// registerLocked adds the listed tools the registry does not have yet; the
// ones it cannot add are reported (Manager.OnProblem), off the lock.
func (s *server) registerLocked(listed []*sdk.Tool) {
	if s.registered == nil {
		s.registered = map[string]bool{}
	}
	var problems []string
	for _, ut := range listed {
		if ut == nil || s.registered[ut.Name] {
			continue
		}
		t, err := s.proxyTool(ut)
		if err == nil {
			err = s.m.reg.Register(t)
		}
		if err != nil {
			s.log.Warn("upstream tool not registered", "tool", ut.Name, "err", err)
			problems = append(problems, fmt.Sprintf("MCP server %q: its tool %q is not offered: %v", s.cfg.Name, ut.Name, err))
			continue
		}
		s.registered[ut.Name] = true
	}
	if len(problems) > 0 {
		s.m.wg.Go(func() { s.m.report(problems) })
	}
}

// proxyTool builds the deferred agentls tool that forwards to ut.
func (s *server) proxyTool(ut *sdk.Tool) (*tools.Tool, error) {
	name := ToolName(s.cfg.Name, ut.Name)
	schema, _ := ut.InputSchema.(map[string]any)
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	delete(schema, "$schema") // drafts the validator does not know
	t, err := tools.NewTool(name, ut.Description, schema)
	if err != nil {
		// The upstream validates its own input: keep its schema for the
		// model and validate only that the arguments are an object.
		s.log.Info("upstream schema not usable for validation; the server validates", "tool", ut.Name, "err", err)
		if t, err = tools.NewTool(name, ut.Description, map[string]any{"type": "object"}); err != nil {
			return nil, err
		}
		t.Schema = schema
	}
	t.Deferred, t.Source = true, s.source()
	t.Title = ut.Title
	if t.Title == "" && ut.Annotations != nil {
		t.Title = ut.Annotations.Title
	}
	var labels tools.Labels
	t.OpenWorld = true
	if a := ut.Annotations; a != nil {
		labels.ReadOnly = a.ReadOnlyHint
		labels.Destructive = !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
		t.Idempotent = a.IdempotentHint
		if a.OpenWorldHint != nil {
			t.OpenWorld = *a.OpenWorldHint
		}
	} else {
		labels.Destructive = true
	}
	labels.ConcurrencySafe = labels.ReadOnly
	upstreamName := ut.Name
	t.SetHandler(func(map[string]any) tools.Labels { return labels },
		func(ctx context.Context, c *tools.Call, args map[string]any) (tools.Result, error) {
			return s.call(ctx, c, upstreamName, args), nil
		})
	return t, nil
}

// call forwards one call to the upstream.
func (s *server) call(ctx context.Context, c *tools.Call, name string, args map[string]any) tools.Result {
	cs, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Errorf("%s was cancelled", c.Tool)
		}
		return tools.Errorf("%s", unavailable(c.Tool, s.cfg.Name, err, err))
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	token := s.cfg.Name + "-" + strconv.FormatInt(s.tokenSeq.Add(1), 10)
	s.mu.Lock()
	s.progress[token] = c.Reporter
	up := map[string]any{"server": s.cfg.Name, "tool": name}
	if s.remote() {
		up["transport"] = s.cfg.Type
	} else {
		pid := 0
		if s.cmd != nil && s.cmd.Process != nil {
			pid = s.cmd.Process.Pid
		}
		up["pid"] = pid
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); delete(s.progress, token); s.mu.Unlock() }()
	params.SetProgressToken(token)
	res, err := cs.CallTool(ctx, params)
	details := map[string]any{"upstream": up}
	if err != nil {
		if ctx.Err() != nil {
			r := tools.Errorf("%s was cancelled", c.Tool)
			r.Details = details
			return r
		}
		if s.remote() {
			r := s.remoteCallFailed(c, cs, err)
			r.Details = details
			return r
		}
		if !connectionLost(err) {
			r := s.answeredError(c, err.Error())
			r.Details = details
			return r
		}
		// A crash shows here first when the call was in flight; watch
		// records it and restarts the server.
		r := tools.Errorf("%s failed: the MCP server %q did not answer (%v). It is restarted automatically; call again shortly.", c.Tool, s.cfg.Name, err)
		r.Details = details
		return r
	}
	out := convertResult(res)
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	for k, v := range details {
		out.Details[k] = v
	}
	return out
}

// onProgress forwards an upstream progress notification to the call that
// carries its token.
func (s *server) onProgress(ctx context.Context, r *sdk.ProgressNotificationClientRequest) {
	tok := fmt.Sprint(r.Params.ProgressToken)
	s.mu.Lock()
	rep := s.progress[tok]
	s.mu.Unlock()
	if rep == nil {
		return
	}
	p := tools.Progress{Message: r.Params.Message}
	if r.Params.Total > 0 {
		pct := 100 * r.Params.Progress / r.Params.Total
		p.Percentage = &pct
	}
	rep.Progress(p)
}

// convertResult maps an upstream result to an agentls result; structured
// content goes to details.
func convertResult(res *sdk.CallToolResult) tools.Result {
	out := tools.Result{IsError: res.IsError}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, tools.Content{Type: "text", Text: c.Text})
		case *sdk.ImageContent:
			out.Content = append(out.Content, tools.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *sdk.AudioContent:
			out.Content = append(out.Content, tools.Content{Type: "text", Text: fmt.Sprintf("[audio (%s, %d bytes) not shown]", c.MIMEType, len(c.Data))})
		case *sdk.ResourceLink:
			out.Content = append(out.Content, tools.Content{Type: "text", Text: fmt.Sprintf("[resource %s: %s]", c.Name, c.URI)})
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				out.Content = append(out.Content, tools.Content{Type: "text", Text: c.Resource.Text})
			} else if c.Resource != nil {
				out.Content = append(out.Content, tools.Content{Type: "text", Text: fmt.Sprintf("[resource %s (%s) not shown]", c.Resource.URI, c.Resource.MIMEType)})
			}
		}
	}
	if len(out.Content) == 0 {
		out.Content = []tools.Content{{Type: "text", Text: "(no output)"}}
	}
	if res.StructuredContent != nil {
		out.Details = map[string]any{"structuredContent": res.StructuredContent}
	}
	return out
}
