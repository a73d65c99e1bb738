//go:build unix

package search

import (
	"io/fs"
	"syscall"
)

// removed reports whether fi (of an open file) names one no longer linked
// anywhere: a directory or file deleted while it was held open.
func removed(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
