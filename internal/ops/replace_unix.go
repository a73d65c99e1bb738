//go:build unix

package ops

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// renameIfSame renames tmp over rel when rel is still the version read,
// else removes tmp and returns changed. The stat and the rename are made
// in rel's open directory, one system call after the other: a save by
// another program can land only in that gap (ReplaceFile), where a stat
// and a rename through the root would each walk the path again.
func renameIfSame(r *os.Root, tmp, rel string, read fs.FileInfo, changed error) error {
	dir, err := r.Open(filepath.Dir(rel))
	if err != nil {
		r.Remove(tmp)
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	defer dir.Close()
	rc, err := dir.SyscallConn()
	if err != nil {
		r.Remove(tmp)
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	name, tmpName := filepath.Base(rel), filepath.Base(tmp)
	var result error
	if err := rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if err := unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || !sameStat(read, &st) {
			result = changed
			return
		}
		if err := unix.Renameat(int(fd), tmpName, int(fd), name); err != nil {
			result = fmt.Errorf("replace %s: %w", rel, err)
		}
	}); err != nil {
		result = fmt.Errorf("replace %s: %w", rel, err)
	}
	if result != nil {
		r.Remove(tmp)
		return result
	}
	dir.Sync() // the rename made durable; some file systems refuse, which is fine
	return nil
}

// sameStat is sameVersion for a stat taken by fstatat.
func sameStat(a fs.FileInfo, st *unix.Stat_t) bool {
	sys, ok := a.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	sec, nsec := st.Mtim.Unix()
	return uint64(sys.Dev) == uint64(st.Dev) && uint64(sys.Ino) == uint64(st.Ino) &&
		a.Size() == st.Size && a.ModTime().UnixNano() == sec*1e9+nsec
}
