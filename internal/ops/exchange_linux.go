package ops

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b (both in one directory of r) in one
// step (renameat2 RENAME_EXCHANGE). ok is false when the file system cannot
// (EINVAL, ENOSYS, EXDEV…); err reports a name that is gone.
func exchange(r *os.Root, a, b string) (ok bool, err error) {
	d, err := r.Open(filepath.Dir(b))
	if err != nil {
		return false, err
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		return false, nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.Renameat2(int(fd), filepath.Base(a), int(fd), filepath.Base(b), unix.RENAME_EXCHANGE)
	}); err != nil {
		return false, nil
	}
	switch {
	case serr == nil:
		return true, nil
	case errors.Is(serr, unix.ENOENT):
		return false, serr
	}
	return false, nil
}
