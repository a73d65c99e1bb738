package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// maxFrameBytes bounds a frame's declared Content-Length (jsonrpc2's bound),
// so a peer cannot make the reader allocate without limit.
const maxFrameBytes = 1 << 30

// maxHeaderLine bounds one header line and maxHeaderBytes a whole header:
// longer is a problem, and the reader resynchronises.
const (
	maxHeaderLine  = 4096
	maxHeaderBytes = 2 * maxHeaderLine
)

// frameReader reads LSP base-protocol frames ("Content-Length: n", other
// header fields ignored, a blank line, n bytes of body). A broken frame is a
// problem, not an error, and the reader then resynchronises on the next
// "Content-Length:" wherever it starts (also in the middle of a line): it
// never discards bytes that contain one, so the frame after a bad one is
// not lost. A body that is not JSON and holds a header, while the bytes
// after its declared end are not a header, was shorter than its length:
// it is cut at that header.
//
// The unread input is buf[off:]; a header stays there until it is parsed,
// so resynchronising can look inside it.
type frameReader struct {
	r      io.Reader
	buf    []byte
	off    int
	err    error // the read error that ended the input (sticky)
	resync bool  // the last frame was broken: search for the next header first
	// afterBad: the last frame was answered as bad; bytes up to the next
	// header are its tail and are dropped without another answer.
	afterBad bool
	n        int64 // bytes consumed since the last return
}

// next returns the next frame's body (valid until the next call), or a
// problem with a frame that was dropped, or the read error (io.EOF at a
// frame boundary).
func (f *frameReader) next() (body []byte, n int64, problem string, err error) {
	defer func() { n, f.n = f.n, 0 }()
	for {
		if f.resync {
			if err := f.skipToHeader(); err != nil {
				return nil, 0, "", err
			}
			f.resync = false
		}
		// Blank lines and spaces between frames are not a frame.
		for {
			i := f.off
			for i < len(f.buf) && isSpace(f.buf[i]) {
				i++
			}
			f.advance(i - f.off)
			if f.off < len(f.buf) {
				break
			}
			if err := f.fill(); err != nil {
				return nil, 0, "", err
			}
		}
		hdr, length, problem := parseHeader(f.buf[f.off:], f.err != nil)
		if hdr == 0 && problem == "" {
			if err := f.fill(); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return nil, 0, "", err
			}
			continue
		}
		if problem != "" {
			f.resync = true
			f.advance(1) // resynchronise after this frame's first byte
			if f.afterBad {
				continue // the tail of a frame already answered
			}
			f.afterBad = true
			return nil, 0, problem + "; resynchronising on the next \"Content-Length:\" header", nil
		}
		f.afterBad = false
		body, problem, err := f.readBody(hdr, length)
		return body, 0, problem, err
	}
}

// readBody reads the body of the frame whose header is the first hdr bytes
// of the unread input.
func (f *frameReader) readBody(hdr, length int) ([]byte, string, error) {
	start := f.off + hdr
	from := 0 // body bytes before it were searched for a header
	for len(f.buf)-start < length {
		// A header inside a short body, whose whole frame has arrived, is
		// taken at once: a client waiting for its answer would wait forever.
		k, found := f.wholeFrameInside(f.buf[start:], &from)
		if found {
			return f.cut(hdr, length, k)
		}
		if err := f.fill(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, "", err
		}
		start = f.off + hdr
	}
	body := f.buf[start : start+length]
	if json.Valid(body) {
		f.advance(hdr + length)
		return body, "", nil
	}
	f.afterBad = true // checkMessage answers it; what follows may be its tail
	if k, ok := f.headerInside(body); ok {
		// Keep the declared length when a header follows it.
		for {
			after := f.buf[start+length:]
			i := 0
			for i < len(after) && isSpace(after[i]) {
				i++
			}
			if i == len(after) && f.err != nil {
				break // the input ended: nothing to cut for
			}
			h, _, p := parseHeader(after[i:], f.err != nil)
			if p == "" && h > 0 {
				break
			}
			if p != "" || f.err != nil {
				return f.cut(hdr, length, k)
			}
			if f.fill() != nil {
				break
			}
			start = f.off + hdr
			body = f.buf[start : start+length]
		}
	}
	f.advance(hdr + length)
	return body, "", nil
}

// cut ends the current frame's body k bytes in, where a header begins.
func (f *frameReader) cut(hdr, length, k int) ([]byte, string, error) {
	f.advance(hdr + k)
	f.afterBad = true
	return nil, fmt.Sprintf("invalid frame: its body ends after %d bytes, where the next \"Content-Length:\" header begins, not after the %d its Content-Length said; the frame was dropped", k, length), nil
}

// headerInside finds the first complete header in b: the offset where it
// begins.
func (f *frameReader) headerInside(b []byte) (int, bool) {
	for from := 0; ; {
		k := indexFold(b[from:], "content-length:")
		if k < 0 {
			return 0, false
		}
		k += from
		if h, _, p := parseHeader(b[k:], false); p == "" && h > 0 {
			return k, true
		}
		from = k + 1
	}
}

// wholeFrameInside finds a header in b, searching from *from on, whose
// whole frame is in b. *from moves past what cannot become one as more
// bytes arrive, so a long body is searched once.
func (f *frameReader) wholeFrameInside(b []byte, from *int) (int, bool) {
	const want = "content-length:"
	for {
		k := indexFold(b[*from:], want)
		if k < 0 {
			*from = max(*from, len(b)-len(want)+1)
			return 0, false
		}
		k += *from
		h, n, p := parseHeader(b[k:], false)
		switch {
		case p != "":
			*from = k + 1
		case h > 0 && k+h+n <= len(b):
			return k, true
		default:
			*from = k // not whole yet: look again when more has arrived
			return 0, false
		}
	}
}

// skipToHeader drops input up to the next "Content-Length:" (any case).
func (f *frameReader) skipToHeader() error {
	const want = "content-length:"
	for {
		if k := indexFold(f.buf[f.off:], want); k >= 0 {
			f.advance(k)
			return nil
		}
		// Keep a tail that may be the start of the header.
		f.advance(max(0, len(f.buf)-f.off-len(want)+1))
		if err := f.fill(); err != nil {
			return err
		}
	}
}

// advance consumes d bytes.
func (f *frameReader) advance(d int) {
	f.off += d
	f.n += int64(d)
}

// fill reads more input onto the buffer, which grows at most to twice what
// has arrived: a header alone, claiming a gigabyte, allocates nothing. It
// returns the sticky read error when no byte came.
func (f *frameReader) fill() error {
	if f.err != nil {
		return f.err
	}
	unread := len(f.buf) - f.off
	switch {
	case cap(f.buf) > 4<<20 && unread < 64<<10:
		// After a big frame, do not keep its buffer.
		f.buf = append(make([]byte, 0, 64<<10), f.buf[f.off:]...)
		f.off = 0
	case f.off > 0:
		f.buf = f.buf[:copy(f.buf, f.buf[f.off:])]
		f.off = 0
	}
	if cap(f.buf)-len(f.buf) < 4096 {
		nb := make([]byte, len(f.buf), max(64<<10, 2*cap(f.buf)))
		copy(nb, f.buf)
		f.buf = nb
	}
	for {
		n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if err != nil {
			f.err = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parseHeader parses the header at the start of b: its length including
// the blank line and its Content-Length; or a problem; or (0, 0, "") when
// more input is needed to tell (ended: no more input comes).
func parseHeader(b []byte, ended bool) (hdr, length int, problem string) {
	have := false
	for pos := 0; ; {
		if pos > maxHeaderBytes {
			return 0, 0, fmt.Sprintf("invalid message header: longer than %d bytes", maxHeaderBytes)
		}
		nl := bytes.IndexByte(b[pos:], '\n')
		line := b[pos:]
		if nl >= 0 {
			line = b[pos : pos+nl]
		}
		if len(line) > maxHeaderLine {
			return 0, 0, fmt.Sprintf("invalid message header: a line longer than %d bytes", maxHeaderLine)
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if nl >= 0 && len(line) == 0 {
			if pos == 0 {
				return 0, 0, "invalid message header: a blank line where a header should begin"
			}
			if !have {
				return 0, 0, "invalid message header: no Content-Length"
			}
			return pos + nl + 1, length, ""
		}
		// A field is a name (an HTTP token), a colon and a value without
		// control bytes; judged as soon as its bytes arrive.
		name, value, colon := bytes.Cut(line, []byte(":"))
		if colon && len(name) == 0 {
			return 0, 0, fmt.Sprintf("invalid message header: the line %.60q has no field name", line)
		}
		for _, c := range name {
			if !isTokenByte(c) {
				return 0, 0, fmt.Sprintf("invalid message header: the line %.60q is not a header field", line)
			}
		}
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f || c == '\r' {
				return 0, 0, fmt.Sprintf("invalid message header: the line %.60q has a control byte", line)
			}
		}
		if nl < 0 {
			if ended {
				return 0, 0, "invalid message header: the input ended inside it"
			}
			return 0, 0, ""
		}
		if !colon {
			return 0, 0, fmt.Sprintf("invalid message header: the line %.60q has no colon", line)
		}
		if bytes.EqualFold(name, []byte("content-length")) {
			v, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || v <= 0 || v > maxFrameBytes {
				return 0, 0, fmt.Sprintf("invalid message header: Content-Length %.30q is not a byte count between 1 and %d", bytes.TrimSpace(value), maxFrameBytes)
			}
			if have && v != length {
				return 0, 0, "invalid message header: two different Content-Length fields"
			}
			length, have = v, true
		}
		pos += nl + 1
	}
}

// isTokenByte: c may be in an HTTP field name (RFC 9110 tchar).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c != 0 && bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// indexFold is bytes.Index for an ASCII-lowercase want, ignoring case.
func indexFold(b []byte, want string) int {
	for i := 0; i+len(want) <= len(b); {
		j := bytes.IndexAny(b[i:], want[:1]+string(want[0]-'a'+'A'))
		if j < 0 || i+j+len(want) > len(b) {
			return -1
		}
		i += j
		if bytes.EqualFold(b[i:i+len(want)], []byte(want)) {
			return i
		}
		i++
	}
	return -1
}
