package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/tools"
	"github.com/cespare/xxhash/v2"
)

// A file read in one pass (streamLines, for files over ReadStreamBytes)
// is shown exactly as the same content read whole, and stamped with the
// same hash.
func TestStreamLinesMatchesWholeRead(t *testing.T) {
	l := tools.DefaultLimits()
	l.ReadBytes, l.ReadLineChars = 4096, 100 // so the windows and cuts are small
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(f(i))
			b.WriteByte('\n')
		}
		return b.String()
	}
	short := lines(300, func(i int) string { return fmt.Sprintf("line %d", i) })
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\nQWERTYUIOPASDFGH\n-----END RSA PRIVATE KEY-----\n"
	long := strings.Repeat("é", 30000)   // 60000 bytes: over the kept start, over ReadBytes
	wide := strings.Repeat("ab€", 5000)  // 25000 bytes, a line cut at ReadLineChars
	huge := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	cases := []struct {
		name    string
		content string
		in      readInput
	}{
		{"first page", short, readInput{}},
		{"offset and limit", short, readInput{Offset: 120, Limit: 7}},
		{"the byte limit", lines(2000, func(i int) string { return strings.Repeat("w", 40) }), readInput{Offset: 3}},
		{"last line without newline", short + "tail", readInput{Offset: 295}},
		{"offset past the end", short, readInput{Offset: 400}},
		{"CRLF", strings.ReplaceAll(short, "\n", "\r\n"), readInput{Offset: 10, Limit: 5}},
		{"BOM", "\xEF\xBB\xBF" + short, readInput{Limit: 3}},
		{"a key block in the window", short + key + short, readInput{Offset: 299, Limit: 8}},
		{"a key block begun before the window", short + key + short, readInput{Offset: 302, Limit: 4}},
		{"an unterminated key block", short + "-----BEGIN PRIVATE KEY-----\nAAAA\nBBBB\n", readInput{Offset: 300}},
		{"a long line cut in the window", "a\n" + wide + "\nb\n", readInput{}},
		{"a long line of 2-byte characters", "a\n" + long + "\nb\n", readInput{}},
		{"the first line over the byte limit", long + "\nnext\n", readInput{}},
		{"a line longer than the reader's buffer", "a\n" + huge + "\nb\n", readInput{Offset: 2}},
		{"a line longer than the buffer, CRLF", "a\r\n" + huge + "\r\nb\r\n", readInput{Offset: 3}},
		{"invalid UTF-8 shown", "ok\nbad \xff\xfe here\nok\n", readInput{}},
		{"binary", "abc\x00def\n" + short, readInput{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.content)
			want := readWhole("f.txt", data, tc.in, l, nil, "")
			got, hash, err := streamLines(context.Background(), "f.txt", bytes.NewReader(data), int64(len(data)), tc.in, l, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.IsError != want.IsError || got.TextOf() != want.TextOf() {
				t.Fatalf("streamed:\n%s\n(isError %v)\nwhole:\n%s\n(isError %v)", got.TextOf(), got.IsError, want.TextOf(), want.IsError)
			}
			if !reflect.DeepEqual(got.Details, want.Details) {
				t.Errorf("details: streamed %v, whole %v", got.Details, want.Details)
			}
			if !want.IsError && hash != xxhash.Sum64(data) {
				t.Errorf("hash %x, want the content's %x", hash, xxhash.Sum64(data))
			}
		})
	}
}

// Reading a file much larger than what is shown allocates about what is
// shown, not the file: the total allocated, garbage included, stays small.
func TestStreamLinesMemory(t *testing.T) {
	const size = 64 << 20
	gen := &repeatReader{line: []byte("some log line that repeats itself\n"), left: size}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, _, err := streamLines(context.Background(), "big.log", gen, size, readInput{Offset: 1000000, Limit: 5}, tools.DefaultLimits(), nil)
	runtime.ReadMemStats(&after)
	if err != nil || res.IsError || !strings.Contains(res.TextOf(), "1000000→some log line") {
		t.Fatalf("read of the big file: %v %s", err, res.TextOf())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a %d MiB file allocated %d MiB", size>>20, alloc>>20)
	}
}

// repeatReader yields line over and over, left bytes in all.
type repeatReader struct {
	line []byte
	left int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:min(len(p), n+r.left)], r.line[r.off:])
		r.off = (r.off + c) % len(r.line)
		n += c
		r.left -= c
	}
	return n, nil
}

// ReadStreamBytes is where read switches to the one-pass read: seen in the
// one documented difference, the invalid UTF-8 note for bytes outside the
// lines shown (given by a whole read, not by a streamed one).
func TestReadStreamBytesIsTheSwitch(t *testing.T) {
	file := func(size int) []byte {
		last := []byte("bad \xff byte\n")
		line := []byte(strings.Repeat("x", 63) + "\n")
		b := bytes.Repeat(line, (size-len(last))/len(line))
		b = append(b, bytes.Repeat([]byte("y"), size-len(last)-len(b))...)
		return append(b, last...)
	}
	x, _ := newTestExecutor(t, map[string][]byte{
		"at.txt":   file(ReadStreamBytes),
		"over.txt": file(ReadStreamBytes + 1),
	})
	for name, whole := range map[string]bool{"at.txt": true, "over.txt": false} { // at and over ReadStreamBytes
		r := call(t, x, "read", `{"path":"`+name+`","limit":3}`)
		if r.IsError || !strings.Contains(r.TextOf(), "lines 1-3 of") {
			t.Fatalf("read %s: %s", name, r.TextOf())
		}
		if got := strings.Contains(r.TextOf(), "not valid UTF-8"); got != whole {
			t.Errorf("read of %s: invalid UTF-8 note %v, want %v (read whole up to %d bytes)", name, got, whole, ReadStreamBytes)
		}
	}
}
