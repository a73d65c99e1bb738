package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the terminal side is what a user
// typing `agentls` gives it as stdin.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// Typed on a terminal, bare agentls says on stderr, in one line, what it
// serves and how to try a tool; an editor's pipe gets no such line (stderr
// is the editor's log).
func TestBareOnATerminalSaysWhatItServesInOneLine(t *testing.T) {
	master, tty := openPTY(t)
	if !onTerminal(tty) {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"--root", t.TempDir()}, tty, &bytes.Buffer{}, &stderr) }()
	// Hanging up the terminal ends stdin (EIO), as closing the window does.
	time.Sleep(200 * time.Millisecond)
	master.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("agentls did not end when its terminal hung up")
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	for _, want := range []string{"JSON-RPC", "stdin/stdout", "agentls call read"} {
		if !strings.Contains(first, want) {
			t.Errorf("first stderr line lacks %q: %q", want, first)
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	if onTerminal(r) || onTerminal(strings.NewReader("")) {
		t.Error("a pipe or an in-memory reader is taken for a terminal")
	}
}
