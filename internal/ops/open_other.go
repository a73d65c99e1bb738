//go:build !unix

package ops

import (
	"io/fs"
	"os"
	"time"
)

// readOpenFlags open a file for OpenRead (see open_unix.go).
const readOpenFlags = os.O_RDONLY

// lexicalRealRoot: see open_unix.go.
const lexicalRealRoot = false

// lockExclusive does nothing here: the replace keeps its stat check only
// (see open_unix.go).
func lockExclusive(*os.File, time.Duration) error { return nil }

// MayWrite reports whether the owner may write the file fi describes (see
// open_unix.go; ownership is not checked here).
func MayWrite(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o200 != 0 }
