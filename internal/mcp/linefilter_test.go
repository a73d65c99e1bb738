package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeConn connects the stdio transport to in-memory pipes: the test
// writes lines to in, reads what the SDK is given from the connection,
// and reads what goes out (the filter's own error replies, and what the
// test writes) from out.
func pipeConn(t *testing.T, maxLine int) (sdk.Connection, *io.PipeWriter, *bufio.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := &stdioTransport{in: inR, out: outW, maxLine: maxLine}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); inW.Close(); outR.Close() })
	return c, inW, bufio.NewReader(outR)
}

func readMsg(t *testing.T, c sdk.Connection) jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return m
}

type wireError struct {
	ID    json.RawMessage `json:"id"`
	Error struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readReply(t *testing.T, out *bufio.Reader) wireError {
	t.Helper()
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading reply: %v", err)
	}
	var w wireError
	if err := json.Unmarshal([]byte(line), &w); err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	return w
}

func write(t *testing.T, w io.Writer, s string) {
	t.Helper()
	go func() { io.WriteString(w, s) }()
}

func TestStdioDeliversRequestsAndSkipsBlankLines(t *testing.T) {
	c, in, _ := pipeConn(t, 0)
	write(t, in, "\n  \r\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}}`+"\r\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	req, ok := readMsg(t, c).(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || req.ID.Raw() != int64(1) || string(req.Params) != `{"name":"read"}` {
		t.Fatalf("first message = %#v", req)
	}
	note, ok := readMsg(t, c).(*jsonrpc.Request)
	if !ok || note.Method != "notifications/initialized" || note.ID.IsValid() {
		t.Fatalf("second message = %#v", note)
	}
}

func TestStdioParamsSurviveBufferReuse(t *testing.T) {
	c, in, _ := pipeConn(t, 0)
	write(t, in, `{"jsonrpc":"2.0","id":1,"method":"a","params":{"k":"first"}}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"b","params":{"k":"second"}}`+"\n")
	first := readMsg(t, c).(*jsonrpc.Request)
	second := readMsg(t, c).(*jsonrpc.Request)
	if string(first.Params) != `{"k":"first"}` || string(second.Params) != `{"k":"second"}` {
		t.Fatalf("params = %s, %s", first.Params, second.Params)
	}
}

func TestStdioAnswersBadLinesAndGoesOn(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		code    int64
		id      string
		message string
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":3,"method":`, jsonrpc.CodeParseError, "null", "not valid JSON"},
		{"wrong version keeps the id", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "7", "not a valid JSON-RPC 2.0 message"},
		{"string id kept", `{"id":"x-1","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"x-1"`, "not a valid JSON-RPC 2.0 message"},
		{"empty batch", `[]`, jsonrpc.CodeInvalidRequest, "null", "empty JSON-RPC batch"},
		{"null request id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null", "must not be null"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null", "neither a string nor an integer"},
		{"id above 2^53 is echoed, not rounded", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "9007199254740993", "use a string id"},
		{"id beyond int64 is echoed", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "123456789012345678901234567890", "use a string id"},
		{"too long", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`, jsonrpc.CodeInvalidRequest, "null", "longer than 200 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, in, out := pipeConn(t, 200)
			write(t, in, tc.line+"\n"+`{"jsonrpc":"2.0","id":42,"method":"ping"}`+"\n")
			w := readReply(t, out)
			if w.Error.Code != tc.code || string(w.ID) != tc.id || !strings.Contains(w.Error.Message, tc.message) {
				t.Fatalf("reply = %+v, want code %d id %s message containing %q", w, tc.code, tc.id, tc.message)
			}
			// The session goes on with the next line.
			if req := readMsg(t, c).(*jsonrpc.Request); req.ID.Raw() != int64(42) {
				t.Fatalf("next message = %#v", req)
			}
		})
	}
}

func TestStdioLongLineAcrossBuffers(t *testing.T) {
	c, in, out := pipeConn(t, 100<<10)
	pad := strings.Repeat("y", 80<<10) // longer than the 64 KiB read buffer, within the limit
	write(t, in, `{"jsonrpc":"2.0","id":1,"method":"a","params":{"p":"`+pad+`"}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"b","params":{"p":"`+pad+pad+`"}}`+"\n"+
		`{"jsonrpc":"2.0","id":3,"method":"c"}`+"\n")
	if req := readMsg(t, c).(*jsonrpc.Request); req.Method != "a" || len(req.Params) != len(pad)+8 {
		t.Fatalf("first message: method %q, %d bytes of params", req.Method, len(req.Params))
	}
	if w := readReply(t, out); w.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("over-long line answered with %+v", w)
	}
	if req := readMsg(t, c).(*jsonrpc.Request); req.Method != "c" {
		t.Fatalf("after the skipped line got %q", req.Method)
	}
}

func TestStdioBatchDeliveredOneByOne(t *testing.T) {
	c, in, _ := pipeConn(t, 0)
	write(t, in, `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]`+"\n")
	if m := readMsg(t, c).(*jsonrpc.Request); m.Method != "a" {
		t.Fatalf("first = %q", m.Method)
	}
	if m := readMsg(t, c).(*jsonrpc.Request); m.Method != "n" {
		t.Fatalf("second = %q", m.Method)
	}
}

func TestStdioEndsOnEOFAndClose(t *testing.T) {
	t.Run("EOF", func(t *testing.T) {
		c, in, _ := pipeConn(t, 0)
		go func() {
			io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"a"}`) // the last line may lack its newline
			in.Close()
		}()
		if m := readMsg(t, c).(*jsonrpc.Request); m.Method != "a" {
			t.Fatalf("got %q", m.Method)
		}
		if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
			t.Fatalf("Read after EOF: %v", err)
		}
	})
	t.Run("Close unblocks Read", func(t *testing.T) {
		c, _, _ := pipeConn(t, 0)
		done := make(chan error, 1)
		go func() { _, err := c.Read(context.Background()); done <- err }()
		time.Sleep(10 * time.Millisecond)
		c.Close()
		select {
		case err := <-done:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Read after Close: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Read still blocked after Close")
		}
	})
}

// MCP: a receiver of notifications/cancelled sends no response for the
// request; the next request is answered as usual.
func TestStdioDropsTheResponseOfACancelledRequest(t *testing.T) {
	for _, id := range []string{`5`, `"req-5"`} {
		c, in, out := pipeConn(t, 0)
		write(t, in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"user"}}`+"\n")
		readMsg(t, c)
		var rid jsonrpc.ID
		if id == `5` {
			rid, _ = jsonrpc.MakeID(float64(5))
		} else {
			rid, _ = jsonrpc.MakeID("req-5")
		}
		ctx := context.Background()
		if err := c.Write(ctx, &jsonrpc.Response{ID: rid, Result: json.RawMessage(`{"content":[]}`)}); err != nil {
			t.Fatal(err)
		}
		other, _ := jsonrpc.MakeID(float64(6))
		go c.Write(ctx, &jsonrpc.Response{ID: other, Result: json.RawMessage(`{}`)})
		line, err := out.ReadString('\n')
		if err != nil || !strings.Contains(line, `"id":6`) {
			t.Fatalf("id %s: first line written = %q (%v), want the response to 6 only", id, line, err)
		}
	}
}

// The SDK refuses a request that is wrong in the session's state with a
// plain error (code 0); it goes out as Invalid Request.
func TestStdioGivesCodelessErrorsACode(t *testing.T) {
	c, _, out := pipeConn(t, 0)
	id, _ := jsonrpc.MakeID(float64(3))
	go c.Write(context.Background(), &jsonrpc.Response{ID: id, Error: errors.New(`method "tools/list" is invalid during session initialization`)})
	w := readReply(t, out)
	if w.Error.Code != jsonrpc.CodeInvalidRequest || string(w.ID) != "3" || !strings.Contains(w.Error.Message, "invalid during session initialization") {
		t.Fatalf("reply = %+v", w)
	}
}

// At the end of the input the SDK refuses every write, so the transport
// holds the end back until the requests read before it are answered; a
// tool call still running after EOFGrace is cancelled and its error says
// why.
func TestStdioAnswersWhatWasReadBeforeEOF(t *testing.T) {
	t.Run("answered request", func(t *testing.T) {
		c, in, out := pipeConn(t, 0)
		go func() {
			io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`+"\n")
			in.Close()
		}()
		req := readMsg(t, c).(*jsonrpc.Request)
		eof := make(chan error, 1)
		go func() { _, err := c.Read(context.Background()); eof <- err }()
		select {
		case err := <-eof:
			t.Fatalf("Read returned %v before the request read ahead of the end was answered", err)
		case <-time.After(EOFGrace / 2):
		}
		go out.ReadString('\n')
		if err := c.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("Write after the input ended: %v", err)
		}
		select {
		case err := <-eof:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Read after the answer: %v", err)
			}
		case <-time.After(EOFDrain / 2): // unanswered, it would be held EOFGrace+EOFDrain
			t.Fatal("the end was held back after every request was answered")
		}
	})
	t.Run("tool call cancelled", func(t *testing.T) {
		c, in, out := pipeConn(t, 0)
		go func() {
			io.WriteString(in, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash"}}`+"\n")
			in.Close()
		}()
		call := readMsg(t, c).(*jsonrpc.Request)
		start := time.Now()
		cancel := readMsg(t, c).(*jsonrpc.Request)
		if cancel.Method != "notifications/cancelled" || !strings.Contains(string(cancel.Params), `"requestId":7`) {
			t.Fatalf("after the end: %s %s, want notifications/cancelled for 7", cancel.Method, cancel.Params)
		}
		if d := time.Since(start); d < EOFGrace/2 {
			t.Errorf("cancelled after %v, want the call given EOFGrace (%v) first", d, EOFGrace)
		}
		go c.Write(context.Background(), &jsonrpc.Response{ID: call.ID, Error: errors.New("context canceled")})
		if r := readReply(t, out); r.Error.Code != codeRequestCancelled || !strings.Contains(r.Error.Message, "closed its input") {
			t.Errorf("reply %+v, want -32800 saying the client closed its input", r)
		}
		if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
			t.Fatalf("Read after the drain: %v", err)
		}
	})
}

// The SDK drops a request whose id is that of one still in flight without
// a reply; the transport answers it, and the id is free again once the
// first is answered.
func TestStdioRefusesAnIDStillInFlight(t *testing.T) {
	c, in, out := pipeConn(t, 0)
	write(t, in, `{"jsonrpc":"2.0","id":1,"method":"a"}`+"\n"+`{"jsonrpc":"2.0","id":1,"method":"b"}`+"\n")
	first := readMsg(t, c).(*jsonrpc.Request)
	if first.Method != "a" {
		t.Fatalf("first = %q", first.Method)
	}
	if w := readReply(t, out); w.Error.Code != jsonrpc.CodeInvalidRequest || string(w.ID) != "1" || !strings.Contains(w.Error.Message, "still in flight") {
		t.Fatalf("reply to the second = %+v", w)
	}
	go out.ReadString('\n')
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: first.ID, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	write(t, in, `{"jsonrpc":"2.0","id":1,"method":"c"}`+"\n")
	if m := readMsg(t, c).(*jsonrpc.Request); m.Method != "c" || m.ID != first.ID {
		t.Fatalf("after the answer got %q %v, want c with id 1", m.Method, m.ID.Raw())
	}
}

// A batch member the SDK would refuse is answered on its own; the others
// reach it, and so does the next line.
func TestStdioBatchWithABadMember(t *testing.T) {
	c, in, out := pipeConn(t, 0)
	write(t, in, `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"1.0","id":2,"method":"b"},{"jsonrpc":"2.0","id":3,"method":"c"}]`+"\n"+`{"jsonrpc":"2.0","id":4,"method":"d"}`+"\n")
	if w := readReply(t, out); w.Error.Code != jsonrpc.CodeInvalidRequest || string(w.ID) != "2" {
		t.Fatalf("reply to the bad member = %+v", w)
	}
	for _, want := range []string{"a", "c", "d"} {
		if m := readMsg(t, c).(*jsonrpc.Request); m.Method != want {
			t.Fatalf("got %q, want %q", m.Method, want)
		}
	}
}

// checkMessage must pass only what the SDK's decoder takes, read as the
// SDK reads it: a message it passes and the SDK refuses would end the
// session.
func FuzzCheckMessageAgreesWithSDK(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-4,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"path":"a"}}}`,
		`{"jsonrpc":"2.0","id":"abc","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"method":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///w"}]}}`,
		`{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"Method not found","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":"r1","error":{"code":1.5,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":"r1","error":{"code":1,"message":5}}`,
		`{"jsonrpc":"2.0","id":"r1","error":null}`,
		`{"params":{},"extra":1,"method":"ping","id":2,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800\xff","method":"p\u00e9"}`,
		`{"id":1,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":2,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","Method":"ping"}`,
		`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`"ping"`,
		`{"jsonrpc":"2.0","id":1,"method":"pi`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		req, err := checkMessage(msg)
		if err != nil {
			return
		}
		if !json.Valid(msg) {
			t.Fatalf("passed %q, which is not valid JSON", msg)
		}
		m, sdkErr := jsonrpc.DecodeMessage(msg)
		if sdkErr != nil {
			t.Fatalf("passed %q, which the SDK refuses: %v", msg, sdkErr)
		}
		sdkReq, isReq := m.(*jsonrpc.Request)
		if (req != nil) != isReq {
			t.Fatalf("%q: request %v here, %v for the SDK", msg, req != nil, isReq)
		}
		if req != nil && (req.ID != sdkReq.ID || req.Method != sdkReq.Method) {
			t.Fatalf("%q: id %v method %q here, id %v method %q for the SDK", msg, req.ID.Raw(), req.Method, sdkReq.ID.Raw(), sdkReq.Method)
		}
	})
}

func BenchmarkCheckMessage(b *testing.B) {
	in := []byte(`{"method":"tools/call","params":{"name":"read","arguments":{"path":"/tmp/w/f1.txt"}},"jsonrpc":"2.0","id":12}`)
	b.Run("filter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := checkMessage(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
