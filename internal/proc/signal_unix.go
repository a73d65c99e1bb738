//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// groupSignalable reports whether signals can reach group pgid (EPERM: it exists).
func groupSignalable(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
