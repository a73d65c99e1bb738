package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

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
