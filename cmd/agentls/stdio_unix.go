//go:build unix

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns f switched to non-blocking mode, so that reads and
// writes wait in the runtime's poller instead of in a blocked system call,
// when f is a pipe or a socket (what an MCP host gives); anything else (a
// terminal, a file) is returned as it is.
//
// A read blocked in a system call holds its thread, and the goroutines it
// hands messages to then wait for another thread to be woken; through the
// poller one thread runs them all, which is most of a small call's latency
// on a 2-core VM (bench/mcp). Closing the result also unblocks a pending
// read, so the server can stop without waiting for its input to end.
func pollable(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	var nf *os.File
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		if mode := st.Mode & unix.S_IFMT; mode != unix.S_IFIFO && mode != unix.S_IFSOCK {
			return
		}
		// A new descriptor for the same pipe: f may be registered with
		// the poller already (then a second registration of the same
		// number would fail), and f's own mode stays untouched.
		dup, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return
		}
		if err := unix.SetNonblock(dup, true); err != nil {
			unix.Close(dup)
			return
		}
		nf = os.NewFile(uintptr(dup), f.Name())
	})
	if nf == nil {
		return f
	}
	return nonblocking{nf}
}

// nonblocking is a file pollable switched to non-blocking mode.
type nonblocking struct{ *os.File }

// Close gives the descriptor its blocking mode back first: a process that
// shares it (a wrapper script reading on after agentls) expects that.
func (f nonblocking) Close() error {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
	}
	return f.File.Close()
}
