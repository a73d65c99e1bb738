//go:build !unix

package ops

import "os"

// readOpenFlags open a file for ReadFileInfo (see open_unix.go).
const readOpenFlags = os.O_RDONLY

// lexicalRealRoot: see open_unix.go.
const lexicalRealRoot = false
