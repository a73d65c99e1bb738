package rpc

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// A body larger than the read buffer, arriving in pieces, is one frame
// (a tools/call carrying a 200 KB argument).
func TestBodyLargerThanTheBufferArrivingInPiecesIsOneFrame(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"v":"` + strings.Repeat("a", 200_000) + `"}}`
	in := "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	f := frameReader{r: iotest.HalfReader(bytes.NewReader([]byte(in)))}
	got, _, problem, err := f.next()
	if err != nil || problem != "" || string(got) != body {
		t.Fatalf("frame of %d bytes (want %d), problem %q, err %v", len(got), len(body), problem, err)
	}
}
