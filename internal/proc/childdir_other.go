//go:build !linux

package proc

import "os"

// ChildDir returns "" (keep the path): without /proc the child's working
// directory is set by name, so a swap between the caller's check and the
// start is not closed here.
func ChildDir(d *os.File) string { return "" }
