package rpc

import (
	"sync"

	"github.com/agentls/agentls/internal/watch"
)

// watcherStarting is the initialize capability "watcher": the watchers are
// armed after initialize returns (a walk of every folder, most of a second
// on a large tree), and agentls/watcherReady tells the mode.
const watcherStarting = "starting"

// watcherReadyMethod is the notification that the file watchers are armed:
// workspace/externalChange is sent from then on (degraded: never).
const watcherReadyMethod = "agentls/watcherReady"

// watcherNotice holds the watch modes armed before the client sent
// initialized: LSP lets a server send only log and show messages before
// the initialize result reaches the client.
type watcherNotice struct {
	mu      sync.Mutex
	open    bool     // initialized came
	pending []string // modes armed before it, in arming order
}

// watcherReady is session.Options.OnWatcherReady: the degraded warning goes
// out at once (a log message may precede the initialize result), the
// notification once the client is initialized. It never waits for the
// client, as session Close waits for it.
func (s *Server) watcherReady(mode string) {
	switch mode {
	case watch.ModeDegraded:
		s.logMessage(2, watcherDegradedMessage)
	case "":
		// No writable folder: nothing to watch (and nothing to warn of),
		// and no external change will be announced.
		mode = watch.ModeDegraded
	}
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	if !s.ready.open {
		s.ready.pending = append(s.ready.pending, mode)
		return
	}
	s.notifyWatcherReady(mode)
}

// clientInitialized sends the held notifications. Armings run one at a
// time, and each sends under the lock, so they arrive in arming order.
func (s *Server) clientInitialized() {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	if s.ready.open {
		return
	}
	s.ready.open = true
	for _, m := range s.ready.pending {
		s.notifyWatcherReady(m)
	}
	s.ready.pending = nil
}

func (s *Server) notifyWatcherReady(mode string) {
	s.conn.Notify(s.base, watcherReadyMethod, map[string]any{"watcher": mode})
}
