package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeBuffered returns how many bytes wait unread in the pipe f (0 when it
// cannot tell). It goes through SyscallConn: Fd would make f blocking.
func pipeBuffered(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
	})
	return n
}
