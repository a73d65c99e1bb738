//go:build unix

package main

import (
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// spinWindow is how long a read of a pollable stdin keeps asking the pipe
// for more after the last data arrived, before it waits in the poller. A
// client answered a call is likely to send the next within this (an agent
// running a batch of calls, bench/mcp's reads); waiting in the poller puts
// the thread, and on a VM the vCPU, to sleep, and waking it made such a
// call take half as long again (bench/mcp: read p50 0.20 → 0.13 ms on the
// CI machine). It costs at most this much CPU per message received, as
// the guest kernel's haltpoll (200 µs by default) does for the same reason.
const spinWindow = 300 * time.Microsecond

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
//
// Reads spin for spinWindow after data (see there), unless there is one
// CPU only (the spin would hold it from the client about to write) or
// AGENTLS_SPIN=off.
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
	nrc, err := nf.SyscallConn()
	if err != nil {
		nf.Close()
		return f
	}
	nb := &nonblocking{File: nf, rc: nrc}
	if runtime.NumCPU() > 1 && os.Getenv("AGENTLS_SPIN") != "off" {
		nb.spin = spinWindow
	}
	return nb
}

// nonblocking is a file pollable switched to non-blocking mode.
type nonblocking struct {
	*os.File
	rc syscall.RawConn
	// spin is how long Read keeps trying after the last data (0: not at
	// all); lastData is when Read last returned some. Only the one
	// goroutine reading uses them.
	spin     time.Duration
	lastData time.Time
	// closing stops Read from asking the descriptor, and readMu is held
	// while it does: Close makes the descriptor blocking again, and a
	// read system call after that would block where the poller's
	// wake-up on Close cannot reach it.
	closing atomic.Bool
	readMu  sync.Mutex
}

// Read reads what the pipe holds; within spin of the last data it asks
// again (yielding to the other goroutines in between) instead of waiting
// in the poller.
func (f *nonblocking) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := f.rc.Read(func(fd uintptr) bool {
		f.readMu.Lock()
		defer f.readMu.Unlock()
		for !f.closing.Load() {
			n, rerr = unix.Read(int(fd), p)
			switch {
			case rerr == unix.EINTR:
				continue
			case rerr != unix.EAGAIN:
				return true
			case time.Since(f.lastData) >= f.spin:
				return false // wait in the poller
			}
			runtime.Gosched()
		}
		return false // the poller reports the close
	})
	switch {
	case err != nil && f.closing.Load():
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: os.ErrClosed} // as os.File says it
	case err != nil:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	f.lastData = time.Now()
	return n, nil
}

// Close gives the descriptor its blocking mode back first: a process that
// shares it (a wrapper script reading on after agentls) expects that.
func (f *nonblocking) Close() error {
	f.closing.Store(true)
	f.readMu.Lock() // a Read asking the descriptor has stopped
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
	}
	f.readMu.Unlock()
	return f.File.Close()
}
