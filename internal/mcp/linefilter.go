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

// stdioTransport is the SDK's IOTransport with a filter on each side.
//
// The SDK's reader ends the session on the first line it cannot decode,
// and its jsonrpc2 layer drops a request whose id is in flight without a
// reply and refuses every write once the input has ended. So lineFilter,
// in front of its reader, passes it only messages it will take, one line
// each (a batch is split), answers the others itself, and holds the end
// of the input back until what was read before it is answered. outWriter,
// behind its writer, lets a write blocked on a client that stopped reading
// be abandoned. stdioConn, around the connection, drops the answer to a
// request the client cancelled and gives the SDK's code-0 errors a code.
type stdioTransport struct {
	in  io.ReadCloser
	out io.WriteCloser
	// maxLine is MaxLineBytes unless a test lowers it.
	maxLine int
}

// Connect starts the SDK's connection over the filters.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	maxLine := t.maxLine
	if maxLine <= 0 {
		maxLine = MaxLineBytes
	}
	st := &stdioState{pending: map[jsonrpc.ID]string{}, drained: make(chan struct{}), closed: make(chan struct{})}
	out := &outWriter{w: t.out, abandoned: make(chan struct{})}
	out.closeW = sync.OnceValue(t.out.Close)
	in := &lineFilter{r: bufio.NewReaderSize(t.in, 64<<10), rc: t.in, maxLine: maxLine, st: st, out: out}
	// The filter passes lines of at most maxLine bytes and their newline,
	// so the SDK's own cap never ends the session.
	conn, err := (&sdk.IOTransport{Reader: in, Writer: out, MaxLineLength: maxLine + 1}).Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp stdio: %w", err)
	}
	// When the server is stopped (SIGTERM), answers still being written
	// get EOFDrain, as at the input's end; then the output is closed. The
	// waiting goroutine ends then, or when the connection closes first.
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(EOFDrain)
		defer t.Stop()
		select {
		case <-t.C:
			out.abandon()
		case <-st.closed:
		}
	})
	return &stdioConn{Connection: conn, st: st, stop: stop}, nil
}

// stdioState is what the input filter and the connection share: the
// requests passed to the SDK and not yet answered, and the cancelled ones.
type stdioState struct {
	// pending are the requests delivered and not yet answered, with their
	// methods; unwritten counts the requests delivered whose answer is not
	// written yet (pending, or being written). inputEnded is set at the
	// input's end, and drained is closed once unwritten is 0 after it.
	pendMu     sync.Mutex
	pending    map[jsonrpc.ID]string
	unwritten  int
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

	closeOnce sync.Once
	closed    chan struct{}
}

// maxCancelled bounds the cancelled set: a cancel for a request already
// answered leaves an entry nothing removes.
const maxCancelled = 4096

// deliver records a request passed to the SDK, until it is answered; it
// reports false, recording nothing, for a request whose id is that of one
// not yet answered (the SDK would drop it without a reply).
func (s *stdioState) deliver(r *jsonrpc.Request) bool {
	if !r.ID.IsValid() {
		return true
	}
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	if _, dup := s.pending[r.ID]; dup {
		return false
	}
	s.pending[r.ID] = r.Method
	s.unwritten++
	return true
}

// answered forgets the request id, whose answer is about to be written,
// and reports whether it was pending; then written is to be called.
func (s *stdioState) answered(id jsonrpc.ID) bool {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	if _, ok := s.pending[id]; !ok {
		return false
	}
	delete(s.pending, id)
	return true
}

// written counts an answer out; the last one after the input ended ends
// the drain.
func (s *stdioState) written() {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	s.unwritten--
	if s.inputEnded && s.unwritten == 0 {
		close(s.drained)
	}
}

// endInput marks the input's end.
func (s *stdioState) endInput() {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	s.inputEnded = true
	if s.unwritten == 0 {
		close(s.drained)
	}
}

// waitDrained waits up to d for every pending request to be answered, and
// reports whether they were (or the connection closed).
func (s *stdioState) waitDrained(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.drained:
		return true
	case <-s.closed:
		return true
	case <-t.C:
		return false
	}
}

// cancelCalls marks the tool calls still running as cancelled by the
// input's end and returns their ids.
func (s *stdioState) cancelCalls() []jsonrpc.ID {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	var calls []jsonrpc.ID
	for id, method := range s.pending {
		if method == "tools/call" {
			calls = append(calls, id)
			if s.eofCancelled == nil {
				s.eofCancelled = map[jsonrpc.ID]bool{}
			}
			s.eofCancelled[id] = true
		}
	}
	return calls
}

// cancelledAtEOF reports whether the drain cancelled the call id.
func (s *stdioState) cancelledAtEOF(id jsonrpc.ID) bool {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	return s.eofCancelled[id]
}

// noteCancel records the request a client's notifications/cancelled
// names, before the SDK sees the notification and ends the call.
func (s *stdioState) noteCancel(r *jsonrpc.Request) {
	if r.Method != "notifications/cancelled" || r.ID.IsValid() {
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
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	if s.cancelled == nil || len(s.cancelled) >= maxCancelled {
		s.cancelled = map[jsonrpc.ID]struct{}{}
	}
	s.cancelled[id] = struct{}{}
}

// dropCancelled reports whether id is that of a cancelled request, and
// forgets that request.
func (s *stdioState) dropCancelled(id jsonrpc.ID) bool {
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	if _, ok := s.cancelled[id]; ok {
		delete(s.cancelled, id)
		return true
	}
	return false
}

// lineFilter is the SDK's reader: the lines of the input the SDK will
// take, one message per line. It is read by the SDK's reader goroutine
// only, one Read at a time.
type lineFilter struct {
	r       *bufio.Reader
	rc      io.Closer
	maxLine int
	st      *stdioState
	out     *outWriter

	cur   []byte   // what is left of the line being passed on
	queue [][]byte // lines to pass on after it (a batch's messages)
	buf   []byte   // cur's array, reused line after line
	long  []byte   // a line longer than r's buffer, being assembled

	readErr error // the input's end (or read error), once reached
	// finalWait is set once the drain after the end has been waited for;
	// graceDrained once it was not needed.
	finalWait, graceDrained bool
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		switch {
		case len(f.queue) > 0:
			f.cur, f.queue = f.queue[0], f.queue[1:]
		case f.readErr == nil:
			f.next()
		case !f.finalWait:
			// The cancels are with the SDK: wait for their answers.
			f.finalWait = true
			if !f.graceDrained && !f.st.waitDrained(EOFDrain) {
				// What is still unanswered may be an answer blocked on a
				// full pipe: the session ends now, as the input's end
				// promises.
				f.out.abandon()
			}
		default:
			select {
			case <-f.st.closed:
				// The read failed because Close closed the input.
				return 0, io.EOF
			default:
				return 0, f.readErr
			}
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// Close closes the input; a read blocked on an input that cannot be
// interrupted (a terminal, a blocking pipe) ends with the process.
func (f *lineFilter) Close() error {
	f.st.closeOnce.Do(func() { close(f.st.closed) })
	return f.rc.Close()
}

// next reads one line and queues what it carries for the SDK, or answers
// it; at the input's end it starts the drain.
func (f *lineFilter) next() {
	chunk, err := f.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		f.long = append(f.long, chunk...)
		if len(f.long) > f.maxLine {
			// Drop the rest of the line, then answer it.
			f.long = nil
			if err := f.skipLine(); err != nil {
				f.atEnd(err)
				return
			}
			f.tooLong()
		}
		return
	}
	line := chunk
	if f.long != nil {
		line = append(f.long, chunk...)
		f.long = nil
	}
	switch {
	case len(line) > f.maxLine:
		f.tooLong()
	case len(bytes.TrimSpace(line)) > 0:
		f.line(bytes.TrimSpace(line))
	}
	if err != nil {
		f.atEnd(err)
	}
}

func (f *lineFilter) tooLong() {
	f.out.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes; it was skipped", f.maxLine))
}

// skipLine discards input up to and including the next newline.
func (f *lineFilter) skipLine() error {
	for {
		_, err := f.r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// line queues the messages of one trimmed line that the SDK will take.
func (f *lineFilter) line(line []byte) {
	if line[0] != '[' {
		if f.admit(line) {
			f.buf = append(append(f.buf[:0], line...), '\n')
			f.cur = f.buf
			if cap(f.buf) > 1<<20 {
				f.buf = nil // do not keep one huge line's buffer for the session
			}
		}
		return
	}
	// A JSON-RPC batch (MCP 2025-03-26): each message is handled and
	// answered on its own.
	var raws []jsontext.Value
	if err := jsonv2.Unmarshal(line, &raws, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		f.out.replyError(nil, jsonrpc.CodeParseError, "invalid JSON-RPC batch: send one JSON object per line")
		return
	}
	if len(raws) == 0 {
		// JSON-RPC 2.0 §6: an empty array is an Invalid Request.
		f.out.replyError(nil, jsonrpc.CodeInvalidRequest, "empty JSON-RPC batch: send one JSON object per line")
		return
	}
	for _, raw := range raws {
		if f.admit(raw) {
			f.queue = append(f.queue, append(bytes.Clone(raw), '\n'))
		}
	}
}

// admit reports whether the SDK is to be given msg; a message it would
// refuse or misread is answered here.
func (f *lineFilter) admit(msg []byte) bool {
	req, err := checkMessage(msg)
	if err != nil {
		if !json.Valid(msg) {
			f.out.replyError(nil, jsonrpc.CodeParseError, fmt.Sprintf("not valid JSON (%v): send one JSON-RPC 2.0 object per line", err))
			return false
		}
		var id json.RawMessage
		if !errors.Is(err, errBadID) {
			id, _ = probeID(msg)
		}
		f.out.replyError(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("not a valid JSON-RPC 2.0 message: %v", err))
		return false
	}
	if req == nil {
		return true // an answer to one of the server's requests
	}
	f.st.noteCancel(req)
	if !f.st.deliver(req) {
		id, _ := json.Marshal(req.ID.Raw())
		f.out.replyError(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s is that of a request still in flight; give each request its own id", id))
		return false
	}
	return true
}

// wireMessage is a JSON-RPC 2.0 message as it is on the wire.
type wireMessage struct {
	Version string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  jsontext.Value `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   *struct {
		Code    jsontext.Value `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

// maxDepth is the deepest nesting the SDK's decoder takes.
const maxDepth = 1000

// checkMessage reports whether the SDK's decoder takes msg and reads it as
// it is: it returns the request msg is (params aliasing msg), nil for a
// response, or why it is refused. What it passes the SDK takes (a fuzz
// test holds it to that); it refuses more: a null request id (MCP), an id
// that is no string or integer within ±2^53 (the SDK's ids pass through
// float64), an error code that is no integer. The SDK's own decoder is not
// used here: it allocates tens of KiB per message, and the SDK runs it on
// every message already.
func checkMessage(msg []byte) (*jsonrpc.Request, error) {
	if tooDeep(msg, maxDepth) {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	var w wireMessage
	if err := jsonv2.Unmarshal(msg, &w, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected \"2.0\"", w.Version)
	}
	var method string
	if len(w.Method) > 0 {
		if w.Method.Kind() != '"' {
			return nil, fmt.Errorf("the method %s is not a string", w.Method)
		}
		if err := jsonv2.Unmarshal(w.Method, &method, jsontext.AllowInvalidUTF8(true)); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	// A notification that carries "id": null is lenient input, not a
	// request with a null id.
	request := len(w.Method) > 0 && !strings.HasPrefix(method, "notifications/")
	id, err := parseID(w.ID, request)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		return &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(w.Params)}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("a message with neither method nor id")
	}
	if w.Error != nil {
		if _, err := strconv.ParseInt(string(bytes.TrimSpace(w.Error.Code)), 10, 64); err != nil {
			return nil, fmt.Errorf("the error code %s is not an integer", w.Error.Code)
		}
	}
	return nil, nil
}

// tooDeep reports whether the JSON text nests objects and arrays deeper
// than max.
func tooDeep(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// probeID returns msg's id as it is to echo in an error reply: the raw
// id when it is one a reply can carry, or nil (null).
func probeID(msg []byte) (json.RawMessage, error) {
	var p struct {
		ID jsontext.Value `json:"id"`
	}
	if err := jsonv2.Unmarshal(msg, &p, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return nil, err
	}
	if _, err := parseID(p.ID, false); errors.Is(err, errBadID) {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(p.ID)), nil
}

// atEnd starts the drain at the input's end: the requests read before it
// are answered before the SDK hears of the end, since from then on it
// refuses every write. A client that wrote its requests and closed its
// input (a pipe, a script) still reads the answers. Tool calls still
// running after EOFGrace are cancelled, as closing stdin cancels every
// running call; Read then waits EOFDrain for what they answer.
func (f *lineFilter) atEnd(err error) {
	if !errors.Is(err, io.EOF) {
		err = fmt.Errorf("mcp stdio: read: %w", err)
	}
	f.readErr = err
	f.st.endInput()
	if f.st.waitDrained(EOFGrace) {
		f.graceDrained = true
		return
	}
	for _, id := range f.st.cancelCalls() {
		params, err := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the client closed its input"})
		if err != nil {
			continue
		}
		f.queue = append(f.queue, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":%s}`+"\n", params))
	}
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

// outWriter is the SDK's writer: each Write is one whole line (the SDK's
// and replyError's). A write can be abandoned while it waits on a client
// that stopped reading.
type outWriter struct {
	w  io.Writer
	mu sync.Mutex
	// closeW closes w once: at Close, or earlier by abandon.
	closeW func() error
	// abandoned is closed by abandon: from then on a write returns at
	// once, even one blocked on a full pipe.
	abandoned   chan struct{}
	abandonOnce sync.Once
}

// errAbandoned is a write's error once the session has stopped waiting
// for a client that does not read.
var errAbandoned = errors.New("mcp stdio: write: the client stopped reading its input")

// Write writes b, which the caller does not reuse. The write runs on a
// goroutine of its own so that abandon can end the wait: a write to a
// blocking pipe cannot be interrupted, and closing the descriptor does not
// wake it. That goroutine ends when its write does (at the latest with the
// process).
func (o *outWriter) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case <-o.abandoned:
		return 0, errAbandoned
	default:
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := o.w.Write(b)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return r.n, fmt.Errorf("mcp stdio: write: %w", r.err)
		}
		return r.n, nil
	case <-o.abandoned:
		return 0, errAbandoned
	}
}

// replyError writes an error response; id is the raw request id, or nil
// when it is unknown (written as null).
func (o *outWriter) replyError(id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: wireError{code, msg}})
	if err != nil {
		return
	}
	_, _ = o.Write(append(data, '\n'))
}

// Close closes the output.
func (o *outWriter) Close() error { return o.closeW() }

// abandon ends every write, pending or future, and closes the output, so
// that a client that stopped reading does not hold the server, and with
// it the end of the session, until it reads again.
func (o *outWriter) abandon() {
	o.abandonOnce.Do(func() { close(o.abandoned) })
	_ = o.closeW()
}

// codeRequestCancelled is LSP's RequestCancelled, which JSON-RPC reserves
// for this use; MCP sends no reply to a cancel the client asked for.
const codeRequestCancelled = -32800

// stdioConn is the SDK's connection with the answers filtered.
type stdioConn struct {
	sdk.Connection
	st *stdioState
	// stop unregisters Connect's wait for the server's stop.
	stop func() bool
}

// Write sends m, unless it answers a request the client cancelled. An
// error the drain caused, or one the SDK left without a code, gets one.
func (c *stdioConn) Write(ctx context.Context, m jsonrpc.Message) error {
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, m)
	}
	// Forgotten before the write (the client may reuse the id as soon as
	// it reads the answer), counted out after it (the drain at the
	// input's end waits for the answer to be out).
	if c.st.answered(r.ID) {
		defer c.st.written()
	}
	if c.st.dropCancelled(r.ID) {
		return nil
	}
	var we *jsonrpc.Error
	switch {
	case r.Error != nil && c.st.cancelledAtEOF(r.ID):
		m = &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: codeRequestCancelled, Message: "cancelled: the client closed its input while the call was running"}}
	case errors.As(r.Error, &we) && we.Code == 0 || r.Error != nil && we == nil:
		// The SDK answers a request that is wrong in this state (a call
		// before initialize, a second initialize) with a plain error,
		// which would go out with code 0.
		msg := r.Error.Error()
		if we != nil {
			msg = we.Message
		}
		m = &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}}
	}
	return c.Connection.Write(ctx, m)
}

// Close ends the connection.
func (c *stdioConn) Close() error {
	c.stop()
	return c.Connection.Close()
}
