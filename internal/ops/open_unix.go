//go:build unix

package ops

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"
)

// readOpenFlags open a file for OpenRead. O_NONBLOCK keeps the open of
// a FIFO from waiting for a writer (the fstat that follows refuses it), and
// it spares os.File the two fcntl calls it makes to switch a descriptor to
// non-blocking and back; regular files ignore the flag. O_NOCTTY keeps a
// terminal device from becoming the controlling terminal.
const readOpenFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// lexicalRealRoot is true where a symlink-free path is its own real path,
// which lets Resolve skip filepath.EvalSymlinks when no component below the
// root is a symlink. (On Windows EvalSymlinks also rewrites case and short
// names, so every path takes the full walk there.)
const lexicalRealRoot = true

// lockExclusive takes an advisory lock (flock) on f, waiting at most
// wait; other agentls processes replacing the same file take it too. A
// file system without flock (some network and FUSE mounts) gives no lock
// and no error: the replace keeps its stat check, as before there was one.
func lockExclusive(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return nil // not supported here
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// MayWrite reports whether this process may write the file fi describes,
// by its owner, group and mode bits as the kernel decides a write in
// place. Root may write anything, so for root it says what the owner's
// bit says (chmod a-w means "leave it"). Edit and write ask first: their
// rename over the file needs only the directory's permission.
func MayWrite(fi fs.FileInfo) bool {
	mode := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	euid := os.Geteuid()
	switch {
	case !ok || euid == 0:
		return mode&0o200 != 0
	case int(st.Uid) == euid:
		return mode&0o200 != 0
	case inGroup(int(st.Gid)):
		return mode&0o020 != 0
	}
	return mode&0o002 != 0
}

func inGroup(gid int) bool {
	if gid == os.Getegid() {
		return true
	}
	groups, _ := os.Getgroups()
	return slices.Contains(groups, gid)
}
