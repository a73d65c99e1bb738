//go:build unix

package owner

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this id exists (signal 0 checks
// without sending; EPERM means it exists under another user).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
