//go:build !linux

package ignore

import (
	"errors"
	"io/fs"
	"time"
)

// Without the Linux descriptor path every directory is read through the
// matcher's fs.FS.

func dirFD(fs.File) int { return -1 }

func openDirAt(int, string) (int, error) { return -1, errors.ErrUnsupported }

func closeFD(int) {}

func tooManyFiles(error) bool { return false }

func (w *walker) readFD(int) ([]entry, error) { return nil, errors.ErrUnsupported }

func statAt(int, string) (int64, time.Time, error) {
	return 0, time.Time{}, errors.ErrUnsupported
}
