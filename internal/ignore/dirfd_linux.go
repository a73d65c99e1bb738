//go:build linux

package ignore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The descriptor path: on Linux, when the matcher's fs.FS hands out
// *os.File directories (os.DirFS, os.Root.FS), the walk opens each
// directory once, relative to its parent's descriptor, and lists it with
// getdents, taking entry types from d_type. Reading through os.Root.FS
// instead re-resolves every path component per directory and lstats every
// entry. Staying inside the root holds as it does for os.Root: the start
// is opened through fsys, and each step is one name from the listing
// opened with O_NOFOLLOW|O_DIRECTORY, so no symlink is ever followed.

// direntBufSize is the getdents buffer of one walk (os uses 8 KiB).
const direntBufSize = 32 << 10

const openDirFlags = syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// dirFD returns a new descriptor of the directory f when f is an
// *os.File, or -1.
func dirFD(f fs.File) int {
	of, ok := f.(*os.File)
	if !ok {
		return -1
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	cerr := rc.Control(func(s uintptr) {
		fd, err = openDirAt(int(s), ".")
	})
	if cerr != nil || err != nil {
		return -1
	}
	return fd
}

// openDirAt opens directory name (one component) of the directory fd.
func openDirAt(fd int, name string) (int, error) {
	for {
		nfd, err := syscall.Openat(fd, name, openDirFlags, 0)
		if err != syscall.EINTR {
			return nfd, err
		}
	}
}

func closeFD(fd int) { syscall.Close(fd) }

// tooManyFiles reports a descriptor shortage (the walk then reads by path).
func tooManyFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// readFD lists the directory fd, without "." and "..".
func (w *walker) readFD(fd int) ([]entry, error) {
	if w.buf == nil {
		w.buf = make([]byte, direntBufSize)
	}
	var entries []entry
	for {
		n, err := syscall.ReadDirent(fd, w.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: ".", Err: err}
		}
		if n <= 0 {
			return entries, nil
		}
		entries = parseDirents(fd, w.buf[:n], entries)
	}
}

// parseDirents appends the linux_dirent64 records of b to entries.
func parseDirents(fd int, b []byte, entries []entry) []entry {
	const nameOff = 19 // d_ino u64, d_off s64, d_reclen u16, d_type u8
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		if binary.NativeEndian.Uint64(rec[0:8]) == 0 {
			continue // deleted entry, as os skips it
		}
		name := rec[nameOff:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		typ, ok := direntType(rec[18])
		if !ok { // DT_UNKNOWN: the file system does not say; ask it
			var st unix.Stat_t
			if err := fstatat(fd, string(name), &st); err != nil {
				continue // vanished since the listing
			}
			typ = statType(st.Mode)
		}
		entries = append(entries, entry{name: string(name), typ: typ})
	}
	return entries
}

func direntType(t uint8) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

func statType(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

func fstatat(fd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != syscall.EINTR {
			return err
		}
	}
}

// statAt returns the size and mtime of name in the directory fd.
func statAt(fd int, name string) (int64, time.Time, error) {
	var st unix.Stat_t
	if err := fstatat(fd, name, &st); err != nil {
		return 0, time.Time{}, err
	}
	return st.Size, time.Unix(st.Mtim.Unix()), nil
}
