package upstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/tools"
)

// One upstream server: its connection (a process over stdio, or a URL),
// failures and restarts, and the redaction of what it reports.

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
	gone       chan struct{} // closed when cs is recorded lost (lost)
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
	s.cs, s.cmd, s.since, s.lastErr, s.gone = cs, cmd, time.Now(), nil, make(chan struct{})
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
	close(s.gone)
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
	if cs != nil {
		s.cs = nil
		close(s.gone)
	}
	s.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	if s.http != nil {
		s.http.CloseIdleConnections()
	}
}
