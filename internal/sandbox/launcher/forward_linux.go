package launcher

import (
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// runForwarder relays every connection accepted on fd 3 (127.0.0.1 in the
// command's network namespace) to the proxy's unix socket outside (args:
// the socket, the shell's pid) until the shell ends.
func runForwarder(args []string) int {
	if len(args) != 2 {
		return 2
	}
	shell, err := strconv.Atoi(args[1])
	if err != nil {
		return 2
	}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return 1
	}
	go func() { // the process's only exit besides a failed listener
		awaitExit(shell)
		os.Exit(0)
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0
		}
		go func() { // ends when either side closes, or with the process
			defer c.Close()
			up, err := net.Dial("unix", args[0])
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
			<-done
		}()
	}
}

// awaitExit returns when the shell, this process's parent, has ended. The
// parent-death signal the launcher asks for is not enough: under
// Landlock's signal scoping the kernel sends it on behalf of the dying
// shell, which is inside the domain, to this process, which is not, and
// drops it. A pidfd sees the exit without a signal. A shell that ended
// before this process looked (a quick command) is already gone or no
// longer the parent; that is an exit too. Where there is no pidfd at all
// (before Linux 5.3) the parent is checked every 100 ms.
func awaitExit(shell int) {
	fd, err := unix.PidfdOpen(shell, 0)
	if os.Getppid() != shell {
		return // ended before the pidfd was open (the pid may be reused)
	}
	if err != nil {
		for os.Getppid() == shell {
			time.Sleep(100 * time.Millisecond)
		}
		return
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}
