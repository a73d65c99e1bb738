package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Through the real binary: after each malformed frame, the two well-formed
// requests written right behind it (in the same write, as a pipelining
// client does) are both answered, and the bad frame is answered too.
// A notification that cannot be decoded is logged as a warning.
func TestMalformedFrameDoesNotSwallowTheNextRequests(t *testing.T) {
	t.Parallel()
	r := framingStart(t, framingWS(t, map[string]string{"a.txt": "x\n"}))
	r.initialize(nil)
	bad := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919 + i/13)
	}
	cases := []struct{ name, bad string }{
		{"Content-Length smaller than the body", "Content-Length: 10\r\n\r\n" + bad},
		{"Content-Length larger than the body", "Content-Length: " + strconv.Itoa(len(bad)+30) + "\r\n\r\n" + bad},
		{"a header without the blank line", "Content-Length: " + strconv.Itoa(len(bad)) + "\r\n" + bad},
		{"4 KB of binary garbage", string(garbage)},
		{"NUL bytes", "\x00\x00Content-Length\x00: 5\r\n\r\n\x00\x00\x00\x00\x00"},
		{"CR-only line ends", "Content-Length: " + strconv.Itoa(len(bad)) + "\r\r" + bad},
	}
	for i, tc := range cases {
		before := len(r.all())
		p1, p2 := 5000+2*i, 5001+2*i
		probe := func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)
		}
		in := append([]byte(tc.bad), framingFrameOf(probe(p1))...)
		r.writeBytes(append(in, framingFrameOf(probe(p2))...))
		for _, id := range []int{p1, p2} {
			if _, ok := r.wait(framingWait, framingIDIs(id)); !ok {
				t.Fatalf("%s: probe %d got no reply; frames:\n%s", tc.name, id, r.dump())
			}
		}
		answered := false
		for _, f := range r.all()[before:] {
			if code, _ := framingErr(f.M); f.M != nil && code != 0 {
				answered = true
			}
		}
		if !answered {
			t.Errorf("%s: the bad frame got no error reply", tc.name)
		}
	}
	// A notification that cannot be decoded gets no reply but a warning.
	r.notify("$/cancelRequest", map[string]any{"id": map[string]any{"x": 1}})
	if _, ok := r.wait(framingWait, func(m map[string]any) bool {
		return m["method"] == "window/logMessage" && strings.Contains(compactJSON(m["params"]), "$/cancelRequest")
	}); !ok {
		t.Errorf("no window/logMessage for a $/cancelRequest whose id is an object; frames:\n%s", r.dump())
	}
	r.alive("an undecodable notification")
}
