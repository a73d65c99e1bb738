package rpc

import (
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// The frame reader returns good frames, names what was wrong with a bad
// one, and finds the next frame after it.
func TestFrameReader(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	frame := func(body string) string { return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body }
	cases := []struct {
		name string
		in   string
		want []string // body, or "problem: <substring>"
	}{
		{"two frames, other headers ignored", frame(good) + "Content-Type: application/vscode-jsonrpc\r\ncontent-length: 2\r\n\r\n{}", []string{good, "{}"}},
		{"bare LF line ends", "Content-Length: 2\n\n{}", []string{"{}"}},
		{"no Content-Length, then a good frame", "Content-Type: x\r\n\r\n" + good + frame(good), []string{"problem: no Content-Length", good}},
		{"a count that is not a number", "Content-Length: ten\r\n\r\n{}" + frame(good), []string{"problem: is not a byte count", good}},
		{"a negative count", "Content-Length: -5\r\n\r\n" + frame(good), []string{"problem: is not a byte count", good}},
		{"a header line without a colon", "garbage\r\n\r\n" + frame(good), []string{"problem: has no colon", good}},
		{"the next header found in any case", "X: y\r\n\r\nnoiseCONTENT-LENGTH: 2\r\n\r\n{}", []string{"problem: no Content-Length", "{}"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := frameReader{r: strings.NewReader(tc.in)}
			for i, want := range tc.want {
				body, _, problem, err := f.next()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if p, ok := strings.CutPrefix(want, "problem: "); ok {
					if !strings.Contains(problem, p) {
						t.Fatalf("frame %d: problem %q, want %q", i, problem, p)
					}
					continue
				}
				if problem != "" || string(body) != want {
					t.Fatalf("frame %d: body %q problem %q, want %q", i, body, problem, want)
				}
			}
			if _, _, _, err := f.next(); err != io.EOF {
				t.Fatalf("after the frames: %v, want io.EOF", err)
			}
		})
	}
	f := frameReader{r: strings.NewReader("Content-Length: 10\r\n\r\n{}")}
	if _, _, _, err := f.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a short body: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestCheckMessage(t *testing.T) {
	cases := []struct {
		name, frame string
		code        jsonrpc2.Code // 0 = passes
		id          string
	}{
		{"a request", `{"jsonrpc":"2.0","id":3,"method":"x","params":{}}`, 0, ""},
		{"a notification", `{"jsonrpc":"2.0","method":"x"}`, 0, ""},
		{"a response", `{"jsonrpc":"2.0","id":"a","result":null}`, 0, ""},
		{"a batch is left to jsonrpc2", ` [1, 2]`, 0, ""},
		{"not JSON", `{"jsonrp"`, jsonrpc2.ParseError, ""},
		{"not JSON-RPC", `{"foo":1}`, jsonrpc2.InvalidRequest, ""},
		{"wrong version, id kept", `{"jsonrpc":"1.0","id":7,"method":"x"}`, jsonrpc2.InvalidRequest, "7"},
		{"an object id is not echoed", `{"jsonrpc":"1.0","id":{"a":1},"method":"x"}`, jsonrpc2.InvalidRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, code, problem := checkMessage([]byte(tc.frame))
			if code != tc.code || (code == 0) != (problem == "") || string(id) != tc.id {
				t.Fatalf("checkMessage = (%s, %d, %q), want (%s, %d)", id, code, problem, tc.id, tc.code)
			}
		})
	}
}

// A header that claims a huge body allocates as bytes arrive, not up front
// (found by fuzzing: 32 bytes of input allocated 1 GiB).
func TestFrameReaderAllocatesAsTheBodyArrives(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f := frameReader{r: strings.NewReader("Content-Length: 1073741824\r\n\r\n{}")}
	if _, _, _, err := f.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("reading a 2-byte body of a 1 GiB frame allocated %d bytes", grew)
	}
}

// A header line longer than maxHeaderLine is a problem, not a growing
// buffer, and the next frame is still found.
func TestFrameReaderRefusesHugeHeaderLines(t *testing.T) {
	in := "X-Junk: " + strings.Repeat("a", 3*maxHeaderLine) + "\r\n\r\nContent-Length: 2\r\n\r\n{}"
	f := frameReader{r: strings.NewReader(in)}
	_, _, problem, err := f.next()
	if err != nil || !strings.Contains(problem, "longer than") {
		t.Fatalf("problem %q, err %v; want a too-long header line", problem, err)
	}
	body, _, problem, err := f.next()
	if err != nil || problem != "" || string(body) != "{}" {
		t.Fatalf("next frame = %q, %q, %v; want {}", body, problem, err)
	}
}
