package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// eofReader calls onEOF once when the peer closes its end (or the read
// fails): jsonrpc2 does not cancel running handlers at EOF, and a bash call
// must not outlive the editor that asked for it.
type eofReader struct {
	r     io.Reader
	once  sync.Once
	onEOF func()
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(e.onEOF)
	}
	return n, err
}

// stdio joins a reader and a writer into the ReadWriteCloser a Stream wants.
type stdio struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (s *stdio) Close() error {
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// frameStream is what jsonrpc2's connection uses of its built-in framers
// (raw frames, so it can read batches); the header stream implements it.
type frameStream interface {
	jsonrpc2.Stream
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

// tolerantStream answers a malformed message with a JSON-RPC error and reads
// on, where jsonrpc2's header stream ends the connection without a word:
// invalid JSON gets -32700, JSON that is not a JSON-RPC 2.0 message -32600
// (with its id when it has one), a broken header -32700, after which the
// reader skips to the next "Content-Length:". Writes go through jsonrpc2's
// own framer.
type tolerantStream struct {
	frameStream // writes (and Close)
	in          frameReader
	log         func(msg string)
}

func newTolerantStream(rwc io.ReadWriteCloser, log func(string)) *tolerantStream {
	return &tolerantStream{
		frameStream: jsonrpc2.NewHeaderStream(rwc).(frameStream),
		in:          frameReader{r: rwc},
		log:         log,
	}
}

func (s *tolerantStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		frame, n, problem, err := s.in.next()
		if err != nil {
			return nil, n, err
		}
		if problem == "" {
			if errs := invalidBatch(frame); errs != nil {
				s.log("invalid batch: no member is a JSON-RPC 2.0 message")
				s.WriteFrame(ctx, errs)
				continue
			}
		}
		var id json.RawMessage
		code := jsonrpc2.ParseError
		if problem == "" {
			if id, code, problem = checkMessage(frame); problem == "" {
				return frame, n, nil
			}
		}
		s.log(problem)
		s.reply(ctx, id, code, problem)
	}
}

// Read is the single-message path (jsonrpc2 uses ReadFrame); it gets the
// same treatment.
func (s *tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	frame, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, n, err
	}
	msg, err := jsonrpc2.DecodeMessage(frame)
	return msg, n, err
}

func (s *tolerantStream) reply(ctx context.Context, id json.RawMessage, code jsonrpc2.Code, msg string) {
	body, _ := json.Marshal(newErrorResponse(id, code, msg))
	s.WriteFrame(ctx, body)
}

// errorResponse is a JSON-RPC error reply the stream writes itself, for a
// message jsonrpc2 never sees.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    jsonrpc2.Code `json:"code"`
		Message string        `json:"message"`
	} `json:"error"`
}

// newErrorResponse answers id (null when there is none) with code and msg.
func newErrorResponse(id json.RawMessage, code jsonrpc2.Code, msg string) errorResponse {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	r := errorResponse{JSONRPC: "2.0", ID: id}
	r.Error.Code, r.Error.Message = code, msg
	return r
}

// invalidBatch answers a batch none of whose members is a JSON-RPC 2.0
// message ([1, 2], as in the specification's examples) with one -32600
// error per member, where jsonrpc2 would send parse errors; nil for
// anything else. A batch with some valid members is left to jsonrpc2.
func invalidBatch(frame []byte) []byte {
	t := bytes.TrimLeft(frame, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return nil
	}
	var members []json.RawMessage
	if json.Unmarshal(frame, &members) != nil || len(members) == 0 {
		return nil
	}
	out := make([]errorResponse, 0, len(members))
	for _, m := range members {
		if _, err := jsonrpc2.DecodeMessage(m); err == nil {
			return nil
		}
		out = append(out, newErrorResponse(usableID(m), jsonrpc2.InvalidRequest, "invalid request: not a JSON-RPC 2.0 message"))
	}
	body, _ := json.Marshal(out)
	return body
}

// checkMessage vets one (non-batch) frame before jsonrpc2 decodes it: a
// problem it would end the connection over is returned with the error code
// and the id to answer with. Batches ('[') are left to jsonrpc2, which
// answers their malformed members itself.
func checkMessage(frame []byte) (id json.RawMessage, code jsonrpc2.Code, problem string) {
	t := bytes.TrimLeft(frame, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		return nil, 0, ""
	}
	if !json.Valid(frame) {
		return nil, jsonrpc2.ParseError, "parse error: the message body is not valid JSON"
	}
	_, err := jsonrpc2.DecodeMessage(frame)
	if err == nil {
		return nil, 0, ""
	}
	return usableID(frame), jsonrpc2.InvalidRequest, "invalid request: not a JSON-RPC 2.0 message (" + err.Error() + "); send {\"jsonrpc\": \"2.0\", \"id\", \"method\", \"params\"}"
}

// usableID is the id of a message that is an object with a number or
// string id, to answer it with; nil otherwise.
func usableID(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) == nil && len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || m.ID[0] >= '0' && m.ID[0] <= '9') {
		return m.ID
	}
	return nil
}
