//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
	if _, ok := p.(*nonblocking); !ok || !nonblock(t, shared) {
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

// spinningPipe is a pollable pipe whose reads, once data came, ask the
// pipe again for an hour instead of waiting in the poller: what a read
// within spinWindow does, for as long as a test needs.
func spinningPipe(t *testing.T) (*nonblocking, *os.File, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	shared, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(shared) })
	p, ok := pollable(r).(*nonblocking)
	if !ok {
		t.Fatal("a pipe was not made pollable")
	}
	p.spin = time.Hour
	if _, err := w.WriteString("first\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "first\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	return p, w, shared
}

func TestPollableSpinningReadGetsLaterData(t *testing.T) {
	p, w, _ := spinningPipe(t)
	defer p.Close()
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.WriteString("second\n")
	}()
	buf := make([]byte, 16)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "second\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	w.Close()
	if n, err := p.Read(buf); err != io.EOF {
		t.Fatalf("after the writer closed: %q, %v; want EOF", buf[:n], err)
	}
}

func TestPollableCloseEndsASpinningRead(t *testing.T) {
	p, _, shared := spinningPipe(t)
	done := make(chan error, 1)
	go func() { _, err := p.Read(make([]byte, 16)); done <- err }()
	time.Sleep(20 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("spinning read ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the spinning read")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if nonblock(t, shared) {
		t.Error("the descriptor was left non-blocking")
	}
}

func TestPollableSpinsOnlyWithTwoCPUsAndNotWhenTurnedOff(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	p := pollable(r).(*nonblocking)
	defer p.Close()
	if want := spinWindow * time.Duration(min(runtime.NumCPU()-1, 1)); p.spin != want {
		t.Errorf("spin = %v with %d CPUs, want %v", p.spin, runtime.NumCPU(), want)
	}
	t.Setenv("AGENTLS_SPIN", "off")
	q := pollable(r).(*nonblocking)
	defer q.Close()
	if q.spin != 0 {
		t.Errorf("AGENTLS_SPIN=off: spin = %v", q.spin)
	}
}

// The README and ARCHITECTURE.md state the spin window; they must state
// spinWindow.
func TestSpinWindowIsWhatTheDocsSay(t *testing.T) {
	want := fmt.Sprintf("%d µs", spinWindow.Microseconds())
	for _, doc := range []string{"../../README.md", "../../ARCHITECTURE.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		i := strings.Index(text, "AGENTLS_SPIN=off")
		if i < 0 {
			t.Fatalf("%s does not name AGENTLS_SPIN=off", doc)
		}
		if near := text[max(0, i-400):i]; !strings.Contains(strings.Join(strings.Fields(near), " "), want) {
			t.Errorf("%s states a spin window other than %s before AGENTLS_SPIN=off:\n%s", doc, want, near)
		}
	}
}
