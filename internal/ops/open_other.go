//go:build !unix

package ops

import (
	"os"
	"time"
)

// readOpenFlags open a file for ReadFileInfo (see open_unix.go).
const readOpenFlags = os.O_RDONLY

// lexicalRealRoot: see open_unix.go.
const lexicalRealRoot = false

// processAlive reports whether a process with this id exists (see
// open_unix.go); FindProcess opens it where processes have handles.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// lockExclusive does nothing here: the replace keeps its stat check only
// (see open_unix.go).
func lockExclusive(*os.File, time.Duration) error { return nil }
