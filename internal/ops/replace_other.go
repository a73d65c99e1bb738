//go:build !unix

package ops

import (
	"io/fs"
	"os"
)

// renameIfSame renames tmp over rel when rel is still the version read,
// else removes tmp and returns changed (see replace_unix.go).
func renameIfSame(r *os.Root, tmp, rel string, read fs.FileInfo, changed error) error {
	if now, err := r.Stat(rel); err != nil || !sameVersion(read, now) {
		r.Remove(tmp)
		return changed
	}
	return atomicRename(r, tmp, rel)
}

// sameVersion reports whether a and b describe the same version of a
// file: the same inode, size and modification time.
func sameVersion(a, b fs.FileInfo) bool {
	if a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	return os.SameFile(a, b)
}
