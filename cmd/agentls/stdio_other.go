//go:build !unix

package main

import (
	"io"
	"os"
)

// pollable returns f unchanged: only Unix pipes and sockets are switched to
// non-blocking mode (see stdio_unix.go).
func pollable(f *os.File) io.ReadWriteCloser { return f }
