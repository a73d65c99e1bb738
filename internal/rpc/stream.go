package rpc

import (
	"io"
	"sync"
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
