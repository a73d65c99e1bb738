package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proxy is the filtering HTTP proxy of one sandboxed command: it listens
// on a unix socket outside the sandbox (the launcher bridges 127.0.0.1 in
// the command's network namespace to it), lets CONNECT and plain HTTP
// requests through to allowed hosts only, and records the hosts it
// refused so the result can name them.
type proxy struct {
	socket  string
	ownDir  string // a directory made for the socket alone, removed with it
	allowed []string
	ln      net.Listener
	wg      sync.WaitGroup

	mu      sync.Mutex
	refused []string
	conns   map[net.Conn]struct{}
	closed  bool
}

func startProxy(dir string, allowed []string) (*proxy, error) {
	// A socket's path must fit sun_path (108 bytes): a short directory
	// of its own when the session's is too deep.
	own := ""
	if len(dir) > 80 {
		d, err := os.MkdirTemp("/tmp", "alsp")
		if err != nil {
			return nil, err
		}
		dir, own = d, d
	}
	path := filepath.Join(dir, "proxy-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	p := &proxy{socket: path, ownDir: own, allowed: allowed, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve() // owned by p: ends when close closes the listener
	return p, nil
}

// Allowed reports whether host (no port) matches a domain: "example.com"
// is that host, "*.example.com" its subdomains.
func Allowed(host string, domains []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSpace(d))
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if host == d {
			return true
		}
	}
	return false
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() { // owned by p: close ends its connections
			defer p.wg.Done()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *proxy) refuse(host string) {
	p.mu.Lock()
	if !slices.Contains(p.refused, host) {
		p.refused = append(p.refused, host)
	}
	p.mu.Unlock()
}

// Refused lists the hosts refused so far.
func (p *proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.refused)
}

func (p *proxy) handle(c net.Conn) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	host := req.URL.Hostname()
	if req.Method == http.MethodConnect {
		host, _, _ = net.SplitHostPort(req.Host)
	}
	if host == "" || !Allowed(host, p.allowed) {
		p.refuse(host)
		msg := fmt.Sprintf("agentls sandbox: %s is not in sandbox.network.allowedDomains (%s)\n", host, strings.Join(p.allowed, ", "))
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if req.Method == http.MethodConnect {
		up, err := (&net.Dialer{}).DialContext(ctx, "tcp", req.Host)
		if err != nil {
			fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		defer up.Close()
		fmt.Fprintf(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
		splice(c, br, up)
		return
	}
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	defer up.Close()
	req.Header.Del("Proxy-Connection")
	req.Header.Set("Connection", "close")
	if err := req.Write(up); err != nil { // origin form: Write sends the path only
		return
	}
	_, _ = io.Copy(c, up)
}

// splice copies both ways until either side ends.
func splice(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); done <- struct{}{} }() // ends when c or up closes
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}

func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
	_ = os.Remove(p.socket) // the session's temp dir goes at Close anyway
	if p.ownDir != "" {
		_ = os.Remove(p.ownDir)
	}
}
