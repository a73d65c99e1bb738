package rpc

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// After any malformed frame, the well-formed requests behind it are all
// read: the reader resynchronises on the next "Content-Length:" wherever it
// starts and never drops a line holding one.
func TestMalformedFrameDoesNotSwallowTheNextRequest(t *testing.T) {
	probe := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`
	}
	frame := func(body string) string { return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body }
	bad := probe(0)
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919 + i/13) // binary: NULs, CRs, LFs, high bytes
	}
	cases := []struct{ name, bad string }{
		{"Content-Length smaller than the body", "Content-Length: 10\r\n\r\n" + bad},
		{"Content-Length larger than the body", "Content-Length: " + strconv.Itoa(len(bad)+30) + "\r\n\r\n" + bad},
		{"Content-Length far larger than the body", "Content-Length: 5000\r\n\r\n" + bad},
		{"a header without the blank line", "Content-Length: " + strconv.Itoa(len(bad)) + "\r\n" + bad},
		{"4 KB of binary garbage", string(garbage)},
		{"NUL bytes", "\x00\x00\x00Content-\x00Length: 3\x00\r\n\r\n{}\x00"},
		{"CR-only line ends", "Content-Length: " + strconv.Itoa(len(bad)) + "\r\r" + bad},
		{"a body that is not JSON", frame("not json")},
		{"a count that is not a number", "Content-Length: x\r\n\r\n" + bad},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.bad + frame(probe(1)) + frame(probe(2))
			f := frameReader{r: strings.NewReader(in)}
			var got []string
			problems := 0
			for {
				body, _, problem, err := f.next()
				if err != nil {
					break
				}
				if problem != "" {
					problems++
					continue
				}
				got = append(got, string(body))
			}
			if n := len(got); n < 2 || got[n-2] != probe(1) || got[n-1] != probe(2) {
				t.Fatalf("frames %q: the probes behind the bad frame were lost", got)
			}
			bodiesBad := 0
			for _, b := range got[:len(got)-2] {
				if _, _, p := checkMessage([]byte(b)); p != "" {
					bodiesBad++
				}
			}
			if problems+bodiesBad == 0 {
				t.Fatalf("frames %q: the bad frame was not answered", got)
			}
		})
	}
}

// A body shorter than its Content-Length, whose next frame has arrived
// whole, is cut at the next header at once: a client that waits for the
// answer before sending more is not left waiting.
func TestShortBodyIsCutAtTheNextHeader(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	in := "Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1}" + "Content-Length: " + strconv.Itoa(len(good)) + "\r\n\r\n" + good
	f := frameReader{r: &stallingReader{t: t, data: []byte(in)}}
	_, _, problem, err := f.next()
	if err != nil || !strings.Contains(problem, "not after the 500") {
		t.Fatalf("first frame: problem %q, err %v; want the short body cut", problem, err)
	}
	body, _, problem, err := f.next()
	if err != nil || problem != "" || string(body) != good {
		t.Fatalf("second frame %q, problem %q, err %v; want %q", body, problem, err, good)
	}
}

// stallingReader gives its data, then fails the test on a further read
// (a client waiting for its answers).
type stallingReader struct {
	t    *testing.T
	data []byte
}

func (s *stallingReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		s.t.Fatal("the reader waited for input the client never sends")
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// A correctly framed body that mentions a header is one frame.
func TestFramedBodyMentioningAHeaderIsOneFrame(t *testing.T) {
	body := "Content-Length: 2\r\n\r\n{}"
	good := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	in := "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body + "Content-Length: " + strconv.Itoa(len(good)) + "\r\n\r\n" + good
	f := frameReader{r: bytes.NewReader([]byte(in))}
	first, _, problem, err := f.next()
	if err != nil || problem != "" || string(first) != body {
		t.Fatalf("first frame %q, problem %q, err %v", first, problem, err)
	}
	second, _, _, err := f.next()
	if err != nil || string(second) != good {
		t.Fatalf("second frame %q, err %v", second, err)
	}
}
