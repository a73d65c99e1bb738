package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one incoming newline-delimited JSON message; a longer
// line is answered with an error and skipped, and the session goes on.
const MaxLineBytes = sdk.DefaultMaxLineLength

// After the input ended, the requests read before the end are answered:
// EOFGrace is how long tool calls may still finish on their own before
// they are cancelled (closing stdin cancels every running call), and
// EOFDrain how long their answers are then waited for.
const (
	EOFGrace = 250 * time.Millisecond
	EOFDrain = 500 * time.Millisecond
)

// lineTransport is the MCP stdio transport: newline-delimited JSON-RPC
// messages on a reader and a writer. It replaces the SDK's IOTransport,
// whose reader decodes every message through a streaming JSON decoder that
// allocates a large buffer per message (the garbage collector then ran on
// most small calls) and which closes the session on the first malformed
// line. Here a line is read with one reusable buffer, a malformed line gets
// a JSON-RPC error reply and the session goes on, and a batch array is
// delivered message by message.
type lineTransport struct {
	r io.ReadCloser
	w io.WriteCloser
	// maxLine is MaxLineBytes unless a test lowers it.
	maxLine int
}

// Connect starts the connection's reader goroutine; it ends when the input
// ends or the connection is closed.
func (t *lineTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c := &lineConn{
		r:         t.r,
		w:         t.w,
		closeW:    sync.OnceValue(t.w.Close),
		abandoned: make(chan struct{}),
		incoming:  make(chan jsonrpc.Message),
		closed:    make(chan struct{}),
		pending:   map[jsonrpc.ID]string{},
		drained:   make(chan struct{}),
	}
	maxLine := t.maxLine
	if maxLine <= 0 {
		maxLine = MaxLineBytes
	}
	// When the server is stopped (SIGTERM), answers still being written
	// get EOFDrain, as at the input's end; then the output is closed. The
	// waiting goroutine ends then, or when the connection closes first.
	c.stopAbandon = context.AfterFunc(ctx, func() {
		t := time.NewTimer(EOFDrain)
		defer t.Stop()
		select {
		case <-t.C:
			c.abandonWrites()
		case <-c.closed:
		}
	})
	go c.readLoop(maxLine)
	return c, nil
}

// lineConn is one stdio connection. Reads happen on a goroutine of their
// own (a blocking read of stdin cannot be interrupted by Close otherwise);
// Read takes decoded messages from it.
type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	incoming chan jsonrpc.Message
	// readErr is set before incoming is closed.
	readErr error

	closeOnce sync.Once
	closed    chan struct{}
	// closeW closes w once: at Close, or earlier by abandonWrites.
	closeW func() error
	// abandoned is closed by abandonWrites: from then on a write returns
	// at once, even one blocked on a client that stopped reading.
	abandoned   chan struct{}
	abandonOnce sync.Once
	// stopAbandon unregisters Connect's wait for the server's stop.
	stopAbandon func() bool

	writeMu sync.Mutex
	wbuf    []byte

	// pending are the requests delivered and not yet answered, with their
	// methods; inputEnded is set at the input's end, and drained is closed
	// once pending is empty after it.
	pendMu     sync.Mutex
	pending    map[jsonrpc.ID]string
	inputEnded bool
	drained    chan struct{}
	// eofCancelled are the tool calls the drain cancelled; an error they
	// answer with says why.
	eofCancelled map[jsonrpc.ID]bool

	// cancelled are the requests the client cancelled
	// (notifications/cancelled) whose response has not been written: MCP
	// says none is sent, and the client has stopped waiting for it.
	cancelMu  sync.Mutex
	cancelled map[jsonrpc.ID]struct{}
}

// maxCancelled bounds the cancelled set: a cancel for a request already
// answered leaves an entry nothing removes.
const maxCancelled = 4096

// readLoop reads lines until the input ends or the connection closes, and
// hands each decoded message to Read.
func (c *lineConn) readLoop(maxLine int) {
	defer close(c.incoming)
	br := bufio.NewReaderSize(c.r, 64<<10)
	var long []byte // a line longer than br's buffer, being assembled
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			if len(long) > maxLine {
				// Drop the rest of the line, then answer it.
				long = nil
				if err := c.skipLine(br); err != nil {
					c.readErr = err
					return
				}
				c.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes; it was skipped", maxLine))
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		switch {
		case len(line) > maxLine:
			c.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes; it was skipped", maxLine))
		case len(bytes.TrimSpace(line)) > 0:
			if !c.deliver(line) {
				return
			}
		}
		if err != nil {
			c.readErr = err
			c.drainAtEOF()
			return
		}
	}
}

// drainAtEOF lets the requests read before the input ended be answered
// before the SDK hears of the end, since from then on it refuses every
// write: a client that wrote its requests and closed its input (a pipe, a
// script) still reads the answers. Tool calls still running after EOFGrace
// are cancelled, as closing stdin cancels every running call, and what
// they answer within EOFDrain is written.
func (c *lineConn) drainAtEOF() {
	c.pendMu.Lock()
	c.inputEnded = true
	if len(c.pending) == 0 {
		close(c.drained)
	}
	c.pendMu.Unlock()
	if c.waitDrained(EOFGrace) {
		return
	}
	c.pendMu.Lock()
	var calls []jsonrpc.ID
	for id, method := range c.pending {
		if method == "tools/call" {
			calls = append(calls, id)
			if c.eofCancelled == nil {
				c.eofCancelled = map[jsonrpc.ID]bool{}
			}
			c.eofCancelled[id] = true
		}
	}
	c.pendMu.Unlock()
	for _, id := range calls {
		params, err := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the client closed its input"})
		if err != nil {
			continue
		}
		select {
		case c.incoming <- &jsonrpc.Request{Method: "notifications/cancelled", Params: params}:
		case <-c.closed:
			return
		}
	}
	if !c.waitDrained(EOFDrain) {
		// What is still unanswered may be an answer blocked on a full
		// pipe: the session ends now, as the input's end promises.
		c.abandonWrites()
	}
}

// waitDrained waits up to d for every pending request to be answered, and
// reports whether they were (or the connection closed).
func (c *lineConn) waitDrained(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.drained:
		return true
	case <-c.closed:
		return true
	case <-t.C:
		return false
	}
}

// codeRequestCancelled is LSP's RequestCancelled, which JSON-RPC reserves
// for this use; MCP sends no reply to a cancel the client asked for.
const codeRequestCancelled = -32800

// cancelledAtEOF reports whether the drain cancelled the call id.
func (c *lineConn) cancelledAtEOF(id jsonrpc.ID) bool {
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	return c.eofCancelled[id]
}

// delivered records a request the SDK is given, until it is answered; it
// reports false, recording nothing, for a request whose id is that of one
// not yet answered (the SDK would drop it without a reply).
func (c *lineConn) delivered(m jsonrpc.Message) bool {
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
		c.pendMu.Lock()
		defer c.pendMu.Unlock()
		if _, dup := c.pending[r.ID]; dup {
			return false
		}
		c.pending[r.ID] = r.Method
	}
	return true
}

// answered forgets the request r answers; the last answer after the input
// ended ends the drain.
func (c *lineConn) answered(r *jsonrpc.Response) {
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	if _, ok := c.pending[r.ID]; !ok {
		return
	}
	delete(c.pending, r.ID)
	if c.inputEnded && len(c.pending) == 0 {
		close(c.drained)
	}
}

// skipLine discards input up to and including the next newline.
func (c *lineConn) skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// deliver decodes one line and passes its messages on; false means the
// connection was closed meanwhile.
func (c *lineConn) deliver(line []byte) bool {
	line = bytes.TrimSpace(line)
	var msgs []jsonrpc.Message
	if line[0] == '[' {
		// A JSON-RPC batch (MCP 2025-03-26): each message is handled and
		// answered on its own.
		var raws []json.RawMessage
		if err := json.Unmarshal(line, &raws); err != nil {
			c.replyError(nil, jsonrpc.CodeParseError, "invalid JSON-RPC batch: send one JSON object per line")
			return true
		}
		if len(raws) == 0 {
			// JSON-RPC 2.0 §6: an empty array is an Invalid Request.
			c.replyError(nil, jsonrpc.CodeInvalidRequest, "empty JSON-RPC batch: send one JSON object per line")
			return true
		}
		for _, raw := range raws {
			if m := c.decode(raw); m != nil {
				msgs = append(msgs, m)
			}
		}
	} else if m := c.decode(line); m != nil {
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		c.noteCancel(m)
		if !c.delivered(m) {
			id, _ := json.Marshal(m.(*jsonrpc.Request).ID.Raw())
			c.replyError(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s is that of a request still in flight; give each request its own id", id))
			continue
		}
		select {
		case c.incoming <- m:
		case <-c.closed:
			return false
		}
	}
	return true
}

// decode turns one message into a jsonrpc.Message, or answers it with an
// error and returns nil.
func (c *lineConn) decode(data []byte) jsonrpc.Message {
	m, err := decodeMessage(data)
	if err == nil {
		return m
	}
	if errors.Is(err, errBadID) {
		c.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("not a valid JSON-RPC 2.0 message: %v", err))
		return nil
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &probe) != nil {
		c.replyError(nil, jsonrpc.CodeParseError, fmt.Sprintf("not valid JSON (%v): send one JSON-RPC 2.0 object per line", err))
		return nil
	}
	c.replyError(probe.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("not a valid JSON-RPC 2.0 message: %v", err))
	return nil
}

// wireMessage is a JSON-RPC 2.0 message as it is on the wire.
type wireMessage struct {
	Version string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  *string        `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   *jsonrpc.Error `json:"error"`
}

// decodeMessage is jsonrpc.DecodeMessage without its cost: the SDK's
// decoder allocates a 32 KiB buffer per call, which on a small message is
// most of the garbage (and of the page faults) the server makes. Field
// names match exactly, as in the SDK; duplicate names and invalid UTF-8
// are tolerated (invalid bytes become U+FFFD), as JSON from models and
// tools needs.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := jsonv2.Unmarshal(data, &w, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected \"2.0\"", w.Version)
	}
	// A notification that carries "id": null is lenient input, not a
	// request with a null id.
	request := w.Method != nil && !strings.HasPrefix(*w.Method, "notifications/")
	id, err := parseID(w.ID, request)
	if err != nil {
		return nil, err
	}
	// Params and Result must not alias data: the read buffer is reused.
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: json.RawMessage(bytes.Clone(w.Params))}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("a message with neither method nor id")
	}
	resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(bytes.Clone(w.Result))}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// maxExactID is the largest integer id served: the SDK's IDs pass through
// float64 (jsonrpc.MakeID), so a larger one would be answered under
// another id.
const maxExactID = 1 << 53

// errBadID is a message whose id JSON-RPC or MCP does not allow; it is
// answered with id null, as JSON-RPC 2.0 §5 says for an id that cannot be
// read. errUnservedID is a number id that is valid JSON-RPC but cannot be
// answered exactly; its error reply echoes it.
var (
	errBadID      = errors.New("bad id")
	errUnservedID = errors.New("unserved id")
)

// parseID reads a message's id exactly: a string, or an integer of at most
// maxExactID in magnitude. MCP forbids a null request id. An absent id is a
// notification's.
func parseID(raw jsontext.Value, request bool) (jsonrpc.ID, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return jsonrpc.ID{}, nil
	case raw[0] == '"':
		var s string
		if err := jsonv2.Unmarshal(raw, &s, jsontext.AllowInvalidUTF8(true)); err != nil {
			return jsonrpc.ID{}, fmt.Errorf("%w: %v", errBadID, err)
		}
		return jsonrpc.MakeID(s)
	case string(raw) == "null":
		if request {
			return jsonrpc.ID{}, fmt.Errorf("%w: a request id must not be null (MCP): use a string or an integer", errBadID)
		}
		return jsonrpc.ID{}, nil // an error response about a message we could not read
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > maxExactID || n < -maxExactID {
			return jsonrpc.ID{}, fmt.Errorf("%w: the id %s is not an integer within ±2^53, which is what this server can answer exactly: use a string id or a smaller integer", errUnservedID, raw)
		}
		return jsonrpc.MakeID(float64(n))
	}
	return jsonrpc.ID{}, fmt.Errorf("%w: the id %s is neither a string nor an integer", errBadID, raw)
}

// replyError writes an error response; id is the raw request id, or nil
// when it is unknown (written as null).
func (c *lineConn) replyError(id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		return
	}
	_ = c.writeLine(data)
}

// noteCancel records the request a notifications/cancelled names, before
// the SDK sees the notification and ends the call.
func (c *lineConn) noteCancel(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.Method != "notifications/cancelled" || r.ID.IsValid() {
		return
	}
	var p struct {
		RequestID jsontext.Value `json:"requestId"`
	}
	if jsonv2.Unmarshal(r.Params, &p) != nil {
		return
	}
	id, err := parseID(p.RequestID, true)
	if err != nil || !id.IsValid() {
		return
	}
	c.cancelMu.Lock()
	defer c.cancelMu.Unlock()
	if c.cancelled == nil || len(c.cancelled) >= maxCancelled {
		c.cancelled = map[jsonrpc.ID]struct{}{}
	}
	c.cancelled[id] = struct{}{}
}

// dropCancelled reports whether r answers a cancelled request, and forgets
// that request.
func (c *lineConn) dropCancelled(r *jsonrpc.Response) bool {
	c.cancelMu.Lock()
	defer c.cancelMu.Unlock()
	if _, ok := c.cancelled[r.ID]; ok {
		delete(c.cancelled, r.ID)
		return true
	}
	return false
}

// Read returns the next message, io.EOF when the input ended.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case m, ok := <-c.incoming:
		if !ok {
			if c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
				return nil, fmt.Errorf("mcp stdio: read: %w", c.readErr)
			}
			return nil, io.EOF
		}
		return m, nil
	}
}

// Write sends one message as one line, in one write.
func (c *lineConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := m.(*jsonrpc.Response); ok {
		defer c.answered(r)
		if c.dropCancelled(r) {
			return nil
		}
		if r.Error != nil && c.cancelledAtEOF(r.ID) {
			r = &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: codeRequestCancelled, Message: "cancelled: the client closed its input while the call was running"}}
			m = r
		}
		if r.Error == nil && len(r.Result) > 0 {
			// The common case, a result: the SDK marshalled it already, so
			// it is not compacted and checked a second time.
			if id, ok := r.ID.Raw().(int64); ok {
				return c.writeResult(id, r.Result)
			}
		}
		var we *jsonrpc.Error
		if errors.As(r.Error, &we) && we.Code == 0 || r.Error != nil && we == nil {
			// The SDK answers a request that is wrong in this state (a
			// call before initialize, a second initialize) with a plain
			// error, which goes out with code 0.
			msg := r.Error.Error()
			if we != nil {
				msg = we.Message
			}
			r = &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}}
			m = r
		}
	}
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return fmt.Errorf("mcp stdio: encode: %w", err)
	}
	return c.writeLine(data)
}

// writeResult writes {"jsonrpc":"2.0","id":ID,"result":RESULT} for a
// numeric id, byte for byte what jsonrpc.EncodeMessage writes.
func (c *lineConn) writeResult(id int64, result json.RawMessage) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	b := append(c.wbuf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return c.flush(append(b, "}\n"...))
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.flush(append(append(c.wbuf[:0], data...), '\n'))
}

// errAbandoned is a write's error once the session has stopped waiting
// for a client that does not read.
var errAbandoned = errors.New("mcp stdio: write: the client stopped reading its input")

// flush writes b, built in c.wbuf's array; writeMu is held. The write runs
// on a goroutine of its own so that abandonWrites can end the wait: a
// write to a blocking pipe cannot be interrupted, and closing the
// descriptor does not wake it. That goroutine ends when its write does
// (at the latest with the process).
func (c *lineConn) flush(b []byte) error {
	select {
	case <-c.abandoned:
		return errAbandoned
	default:
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.w.Write(b)
		done <- err
	}()
	select {
	case err := <-done:
		c.wbuf = b
		if cap(c.wbuf) > 1<<20 {
			c.wbuf = nil // do not keep one huge result's buffer for the session
		}
		if err != nil {
			return fmt.Errorf("mcp stdio: write: %w", err)
		}
		return nil
	case <-c.abandoned:
		c.wbuf = nil // b is still being written
		return errAbandoned
	}
}

// Close ends the connection; a read blocked on an input that cannot be
// interrupted (a terminal, a blocking pipe) ends with the process.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		if c.stopAbandon != nil {
			c.stopAbandon()
		}
		close(c.closed)
		err = errors.Join(c.r.Close(), c.closeW())
	})
	return err
}

// abandonWrites ends every write, pending or future, and closes the
// output, so that a client that stopped reading does not hold the server,
// and with it the end of the session, until it reads again.
func (c *lineConn) abandonWrites() {
	c.abandonOnce.Do(func() { close(c.abandoned) })
	_ = c.closeW()
}

// SessionID is empty: stdio carries one session.
func (c *lineConn) SessionID() string { return "" }
