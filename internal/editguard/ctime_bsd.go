//go:build darwin || freebsd || netbsd

package editguard

import (
	"io/fs"
	"syscall"
)

// ctimeNs is fi's status change time (see ctime_linux.go).
func ctimeNs(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
