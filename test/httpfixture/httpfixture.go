// Package httpfixture serves an HTTP handler on one address across stops
// and starts, as a remote server that goes away and comes back does; for
// tests of clients that must reconnect.
package httpfixture

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one address; the zero value is not usable, see New.
type Server struct {
	t    testing.TB
	mu   sync.Mutex
	addr string // fixed by the first Start
	srv  *http.Server
}

// New returns a server that is not started yet; it is stopped at cleanup.
func New(t testing.TB) *Server {
	s := &Server{t: t}
	t.Cleanup(s.Stop)
	return s
}

// Start serves h on the server's address (a free one the first time).
func (s *Server) Start(h http.Handler) {
	s.t.Helper()
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var l net.Listener
	var err error
	for range 50 { // the old socket may linger a moment after a stop
		if l, err = net.Listen("tcp", addr); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	s.mu.Lock()
	s.addr, s.srv = l.Addr().String(), hs
	s.mu.Unlock()
	go hs.Serve(l) // returns at Stop
}

// Addr is host:port, fixed by the first Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Stop closes the listener and every connection, event streams included.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}
