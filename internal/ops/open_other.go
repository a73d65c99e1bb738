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

// lockExclusive does nothing here: the replace keeps its stat check only
// (see open_unix.go).
func lockExclusive(*os.File, time.Duration) error { return nil }
