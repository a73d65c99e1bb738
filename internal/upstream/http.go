package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/internal/tools"
)

// Limits of the HTTP client of an http or sse server. There is no overall
// request timeout: a session's event stream stays open as long as the
// session, and a tool call may run for minutes. ConnectTimeout still bounds
// a start.
const (
	// HTTPDialTimeout bounds opening a TCP connection.
	HTTPDialTimeout = 10 * time.Second
	// HTTPTLSHandshakeTimeout bounds the TLS handshake.
	HTTPTLSHandshakeTimeout = 10 * time.Second
	// HTTPIdleConnTimeout closes a kept-alive connection nobody used.
	HTTPIdleConnTimeout = 90 * time.Second
)

// newHTTPClient is the client of the http or sse server c: c.Headers on
// every request to c's origin, HTTP failures logged (never header values).
func newHTTPClient(c ServerConfig, log *slog.Logger) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone() // proxies from the environment, HTTP/2
	base.DialContext = (&net.Dialer{Timeout: HTTPDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	base.TLSHandshakeTimeout = HTTPTLSHandshakeTimeout
	base.IdleConnTimeout = HTTPIdleConnTimeout
	ht := &headerTransport{base: base, headers: c.Headers, log: log}
	if u, err := url.Parse(c.URL); err == nil {
		ht.scheme, ht.host = u.Scheme, u.Host
	}
	return &http.Client{Transport: ht}
}

// headerTransport adds the configured headers to requests for the
// configured origin only: a redirect to another host must not carry the
// token. Headers the MCP client set itself (session id, protocol version,
// content type) are left alone.
type headerTransport struct {
	base         http.RoundTripper
	scheme, host string
	headers      map[string]string
	log          *slog.Logger
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 && req.URL.Scheme == h.scheme && req.URL.Host == h.host {
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		for k, v := range h.headers {
			if req.Header.Get(k) == "" {
				req.Header.Set(k, v)
			}
		}
	}
	resp, err := h.base.RoundTrip(req)
	switch {
	case err != nil && req.Context().Err() == nil:
		// The DELETE that ends a session is best effort: after the server
		// went away it is expected to fail.
		level := slog.LevelWarn
		if req.Method == http.MethodDelete {
			level = slog.LevelDebug
		}
		h.log.Log(req.Context(), level, "upstream HTTP request failed", "method", req.Method, "endpoint", logEndpoint(req.URL.String()), "err", err)
	case err == nil && resp.StatusCode >= 400:
		// 405 to the GET of the optional event stream is a normal answer.
		level := slog.LevelWarn
		if resp.StatusCode == http.StatusMethodNotAllowed {
			level = slog.LevelDebug
		}
		h.log.Log(req.Context(), level, "upstream HTTP error", "method", req.Method, "endpoint", logEndpoint(req.URL.String()), "status", resp.Status)
	}
	return resp, err
}

// logEndpoint is raw without user info, query and fragment, which may hold
// credentials: the form of a URL that logs and messages show.
func logEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// longLivedTransport connects t with a context that outlives the connect
// timeout: the SSE client ties its event stream to the context Connect
// gets, and the stream must live as long as the session. The timeout still
// bounds connecting; the connection's context ends when it is closed or the
// server stops.
type longLivedTransport struct {
	t   sdk.Transport
	ctx context.Context // the server's
}

func (l *longLivedTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	connCtx, cancel := context.WithCancel(l.ctx)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := l.t.Connect(connCtx)
	if !stop() && err == nil { // ctx ended while connecting
		conn.Close()
		err = context.Cause(ctx)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

// cancelOnClose ends a connection's context when it is closed.
type cancelOnClose struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// remoteCallFailed answers a call to an http or sse server that failed.
// When the server could not be reached or the session is gone, the session
// counts as crashed: the answer is the one a call gets while the server is
// down, and the backoff reconnects.
func (s *server) remoteCallFailed(c *tools.Call, cs *sdk.ClientSession, err error) tools.Result {
	msg := s.redact(err.Error())
	if !connectionLost(err) {
		return s.answeredError(c, msg)
	}
	s.lost(cs, "a request failed: "+msg)
	s.mu.Lock()
	var down error
	if s.cs == nil && s.lastErr != nil {
		down = s.downLocked()
	}
	s.mu.Unlock()
	if down == nil { // another call reconnected meanwhile
		return tools.Errorf("%s failed: the connection to the MCP server %q broke (%s) and is back. Call it again.", c.Tool, s.cfg.Name, msg)
	}
	return tools.Errorf("%s is unavailable: %v. Call it again shortly, or do without it.", c.Tool, down)
}

// answeredError is the result of a call the server answered with an error
// (msg): it is up and the call reached it, so the model is told to look at
// its arguments before trying again.
func (s *server) answeredError(c *tools.Call, msg string) tools.Result {
	return tools.Errorf("%s failed: the MCP server %q answered with an error: %s. If the arguments are wrong, fix them (tool_search %q shows the tool's schema) and call again; otherwise call it again shortly, or do without it.", c.Tool, s.cfg.Name, msg, c.Tool)
}

// connectionLost reports whether err means the server was not reached or
// the session broke, as opposed to an error the server answered with (a
// JSON-RPC error, or a transient 5xx status the client reports as one).
// A broken session's own failure is untyped text, so whatever is not an
// answer counts as lost.
func connectionLost(err error) bool {
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var answer *jsonrpc.Error
	return !errors.As(err, &answer)
}

// redacting passes log records on with every string and error value
// redacted (a remote server's URL may carry credentials in its query or
// user info).
type redacting struct {
	inner  slog.Handler
	redact func(string) string
}

func (h redacting) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h redacting) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h redacting) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.redact(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.redact(err.Error()))
		}
	}
	return a
}

func (h redacting) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return redacting{h.inner.WithAttrs(out), h.redact}
}

func (h redacting) WithGroup(name string) slog.Handler {
	return redacting{h.inner.WithGroup(name), h.redact}
}
