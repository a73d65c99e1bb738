//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func nonblock(t *testing.T, fd int) bool {
	t.Helper()
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

func TestPollablePipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A second descriptor for the same pipe end, as a wrapper process
	// sharing agentls's stdin would hold.
	shared, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(shared)

	p := pollable(r)
	if _, ok := p.(nonblocking); !ok || !nonblock(t, shared) {
		t.Fatalf("a pipe was not switched to non-blocking mode (%T)", p)
	}
	go w.WriteString("hello\n")
	buf := make([]byte, 16)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	// A pending read ends when the file is closed, and the shared
	// descriptor is blocking again.
	done := make(chan error, 1)
	go func() { _, err := p.Read(buf); done <- err }()
	time.Sleep(20 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("pending read ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock the pending read")
	}
	if nonblock(t, shared) {
		t.Error("the descriptor was left non-blocking")
	}
}

func TestPollableLeavesFilesAlone(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := pollable(f); p != io.ReadWriteCloser(f) || nonblock(t, int(f.Fd())) {
		t.Fatalf("a regular file was changed: %T", p)
	}
}
