package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

var bigDigits = regexp.MustCompile(`[0-9]{8}`)

// memRWC is a peer that sends in and collects what the server writes.
type memRWC struct {
	io.Reader
	out bytes.Buffer
}

func (m *memRWC) Write(p []byte) (int, error) { return m.out.Write(p) }
func (m *memRWC) Close() error                { return nil }

func auditFrame(body []byte) []byte {
	return append([]byte("Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
}

// streamOutcome is what the tolerant stream did with one input.
type streamOutcome struct {
	frames   [][]byte // frames passed on to jsonrpc2
	problems int      // problems logged (each must be answered)
	replies  [][]byte // frames written back
}

// runStream reads in through a tolerantStream until the input ends and
// fails t when it does not end in time.
func runStream(t *testing.T, in []byte) streamOutcome {
	t.Helper()
	rwc := &memRWC{Reader: bytes.NewReader(in)}
	var o streamOutcome
	s := newTolerantStream(rwc, func(string) { o.problems++ })
	done := make(chan error, 1)
	go func() {
		for range len(in) + 2 { // every frame or problem consumes at least one byte
			frame, n, err := s.ReadFrame(context.Background())
			if err != nil {
				done <- nil
				return
			}
			if n < int64(len(frame)) {
				done <- errors.New("byte count " + strconv.FormatInt(n, 10) + " below the frame's length")
				return
			}
			o.frames = append(o.frames, bytes.Clone(frame))
		}
		done <- errors.New("more frames than input bytes: the reader does not advance")
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("input %q: %v", in, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("input %q: ReadFrame hangs", in)
	}
	r := frameReader{r: bytes.NewReader(rwc.out.Bytes())}
	for {
		body, _, problem, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil || problem != "" {
			t.Fatalf("input %q: reply stream broken (%v, %s): %q", in, err, problem, rwc.out.Bytes())
		}
		o.replies = append(o.replies, bytes.Clone(body))
	}
	return o
}

// checkReply: a reply is a JSON-RPC error response (or a batch of them).
func checkReply(t *testing.T, in, reply []byte) {
	t.Helper()
	type resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var list []resp
	if bytes.HasPrefix(reply, []byte("[")) {
		if err := json.Unmarshal(reply, &list); err != nil || len(list) == 0 {
			t.Fatalf("input %q: batch reply %q: %v", in, reply, err)
		}
	} else {
		var one resp
		if err := json.Unmarshal(reply, &one); err != nil {
			t.Fatalf("input %q: reply %q is not JSON: %v", in, reply, err)
		}
		list = []resp{one}
	}
	for _, r := range list {
		if r.JSONRPC != "2.0" || len(r.ID) == 0 || r.Error == nil || r.Error.Message == "" || r.Error.Code >= 0 {
			t.Fatalf("input %q: reply %q is not a JSON-RPC 2.0 error response", in, reply)
		}
	}
}

// FuzzTolerantStream feeds arbitrary bytes to the tolerant stream (frame
// reader, checkMessage, invalidBatch): it must end, answer every problem
// with one well-formed error response, pass on only frames jsonrpc2 can
// decode (or batches), and find a good frame after garbage that ends a
// header block, and after any framed body.
func FuzzTolerantStream(f *testing.F) {
	good := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	for _, s := range []struct{ data, body string }{
		{"Content-Length: 2\r\n\r\n{}", `{"jsonrpc":"2.0","id":1}`},
		{"garbage\r\n", `[1,2]`},
		{"Content-Length: ten\r\n\r\n{}", `{"jsonrpc":"2.0","method":"x","id":"a"}`},
		{"X: y\r\n\r\nnoiseCONTENT-LENGTH: 2\r\n\r\n{}", `{"id":-1}`},
		{"Content-Length: 9999999\r\n", `[{"jsonrpc":"2.0","method":"a"},3]`},
		{"content-length:  5\n\n[{}]", "{"},
		{"", ""},
	} {
		f.Add([]byte(s.data), []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, data, body []byte) {
		// A declared length of 10^7 or more allocates that much before a
		// byte of body arrives (a known issue, reported): skip them so the
		// fuzzer does not spend its time zeroing gigabytes.
		if bigDigits.Match(data) {
			t.Skip()
		}
		// A. Any input.
		o := runStream(t, data)
		checkOutcome(t, data, o)

		// B. Garbage up to a blank line, without a Content-Length of its
		// own, then a good frame: the good frame is found.
		if !bytes.Contains(bytes.ToLower(data), []byte("content-length")) {
			in := append(append(bytes.Clone(data), "\r\n\r\n"...), auditFrame(good)...)
			o := runStream(t, in)
			checkOutcome(t, in, o)
			// Blank lines and spaces between frames are not a problem.
			noise := len(bytes.Trim(data, " \t\r\n")) > 0
			if noise && o.problems == 0 || len(o.frames) == 0 || !bytes.Equal(o.frames[len(o.frames)-1], good) {
				t.Fatalf("input %q: no resync: frames %q, %d problems", in, o.frames, o.problems)
			}
		}

		// C. Any framed body, then a good frame: the body is passed on or
		// answered, and the good frame follows.
		in := append(auditFrame(body), auditFrame(good)...)
		o = runStream(t, in)
		checkOutcome(t, in, o)
		if len(o.frames) == 0 || !bytes.Equal(o.frames[len(o.frames)-1], good) {
			t.Fatalf("input %q: the good frame after it was lost: frames %q, %d problems", in, o.frames, o.problems)
		}
		if len(o.frames)+o.problems != 2 {
			t.Fatalf("input %q: %d frames and %d problems for two frames", in, len(o.frames), o.problems)
		}
	})
}

func checkOutcome(t *testing.T, in []byte, o streamOutcome) {
	t.Helper()
	if len(o.replies) != o.problems {
		t.Fatalf("input %q: %d problems but %d replies %q", in, o.problems, len(o.replies), o.replies)
	}
	for _, r := range o.replies {
		checkReply(t, in, r)
	}
	for _, fr := range o.frames {
		tr := bytes.TrimLeft(fr, " \t\r\n")
		if len(tr) > 0 && tr[0] == '[' {
			continue // batches with a valid member are jsonrpc2's to answer
		}
		if _, err := jsonrpc2.DecodeMessage(fr); err != nil {
			t.Fatalf("input %q: passed on frame %q that jsonrpc2 rejects: %v", in, fr, err)
		}
	}
}

// FuzzBrokenHeaderResync: a frame whose header has a broken line but a
// valid Content-Length is answered as a problem, and the good frame after
// it still arrives, whatever its body says. (Today the reader scans the
// skipped body for "Content-Length:", so a body that mentions the header
// swallows the next frame: see testdata/fuzz/FuzzBrokenHeaderResync.)
func FuzzBrokenHeaderResync(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) == 0 {
			return
		}
		good := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		in := append([]byte("X-Broken\r\n"), auditFrame(body)...)
		in = append(in, auditFrame(good)...)
		o := runStream(t, in)
		checkOutcome(t, in, o)
		if len(o.frames) == 0 || !bytes.Equal(o.frames[len(o.frames)-1], good) {
			t.Fatalf("input %q: the good frame after a broken header was lost: frames %q, replies %q", in, o.frames, o.replies)
		}
	})
}
