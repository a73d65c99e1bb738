package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport runs a local server and speaks newline-delimited JSON with
// it, as the SDK's CommandTransport does, but a stdout line that is not a
// JSON object or array (a debug print left in a server, a banner) is logged
// and skipped instead of ending the session: the TypeScript SDK's client
// reads past such a line too, and servers are written against it.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // how long Close waits before each signal
	log       *slog.Logger
}

// maxCheckedLine is the longest stdout line checked for JSON; a longer one
// (a large result) is passed on unchecked and the SDK's decoder judges it.
const maxCheckedLine = 256 << 10

// maxSkippedLog caps how much of a skipped line is logged.
const maxSkippedLog = 200

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := &jsonLines{r: bufio.NewReaderSize(stdout, maxCheckedLine), log: t.log}
	w := &childStdin{cmd: t.cmd, stdin: stdin, terminate: t.terminate}
	return (&sdk.IOTransport{Reader: r, Writer: w}).Connect(ctx)
}

// jsonLines passes on the lines of r that are JSON objects or arrays
// (JSON-RPC messages and batches) and blank lines, and logs the others.
type jsonLines struct {
	r       *bufio.Reader
	log     *slog.Logger
	pending []byte // what is left of the current line to pass on
	long    bool   // inside a line longer than maxCheckedLine: pass it all on
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.pending) == 0 {
		line, err := j.next()
		j.pending = line
		if len(line) == 0 && err != nil {
			return 0, err
		}
	}
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	return n, nil
}

// next returns the next piece to pass on, or an error once r has none.
// The piece is r's buffer, valid until r is read again: Read copies it out
// before it calls next again.
func (j *jsonLines) next() ([]byte, error) {
	for {
		line, err := j.r.ReadSlice('\n')
		if j.long || errors.Is(err, bufio.ErrBufferFull) {
			j.long = errors.Is(err, bufio.ErrBufferFull)
			if j.long {
				err = nil
			}
			return line, err
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return line, err
		}
		j.log.Warn("upstream stdout line is not JSON-RPC; skipped", "line", string(trimmed[:min(len(trimmed), maxSkippedLog)]))
		if err != nil {
			return nil, err
		}
	}
}

// Close does nothing: the session ends by closing the child's stdin.
func (j *jsonLines) Close() error { return nil }

// childStdin is the child's stdin; closing it ends the child as the MCP
// spec asks of a stdio client: close its input, wait, SIGTERM, wait,
// SIGKILL.
type childStdin struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	terminate time.Duration
}

func (c *childStdin) Write(p []byte) (int, error) { return c.stdin.Write(p) }

func (c *childStdin) Close() error {
	if err := c.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(c.terminate)
		defer t.Stop()
		select {
		case err := <-done:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the MCP server did not exit after SIGKILL")
}

// logWriter sends a server's stderr to the log, a line at a time, and keeps
// its last lines for the message when the server fails to start or exits.
type logWriter struct {
	log  *slog.Logger
	mu   sync.Mutex
	buf  []byte
	last []string // at most stderrTailLines, newest last
}

const (
	// maxStderrLine caps a buffered stderr line.
	maxStderrLine = 4096
	// stderrTailLines and stderrTailLine bound what a failure message quotes.
	stderrTailLines = 5
	stderrTailLine  = 300
)

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > maxStderrLine {
				w.line(string(w.buf))
				w.buf = w.buf[:0]
			}
			return len(p), nil
		}
		if line := strings.TrimRight(string(w.buf[:i]), "\r"); line != "" {
			w.line(line)
		}
		w.buf = w.buf[i+1:]
	}
}

// line logs one line and keeps it in the tail; w.mu is held.
func (w *logWriter) line(s string) {
	w.log.Info("upstream stderr", "line", s)
	if len(s) > stderrTailLine {
		s = s[:stderrTailLine] + "…"
	}
	if len(w.last) == stderrTailLines {
		w.last = append(w.last[:0], w.last[1:]...)
	}
	w.last = append(w.last, s)
}

// tail is the last stderr lines (and a partial one), joined with " | ", or
// "" when there were none.
func (w *logWriter) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := w.last
	if rest := strings.TrimSpace(string(w.buf)); rest != "" {
		lines = append(lines[:len(lines):len(lines)], rest[:min(len(rest), stderrTailLine)])
	}
	return strings.Join(lines, " | ")
}

// stderrSaid quotes the end of a server's stderr for a message saying it
// failed: "; its stderr ended with: …", or "" when it wrote nothing.
func stderrSaid(w *logWriter) string {
	if w == nil {
		return ""
	}
	if t := w.tail(); t != "" {
		return "; its stderr ended with: " + t
	}
	return ""
}
