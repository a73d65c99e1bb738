package editguard

import (
	"io/fs"
	"syscall"
)

// ctimeNs is fi's status change time: any write or metadata change moves
// it, and the kernel sets it (a tool restoring the mtime cannot).
func ctimeNs(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
