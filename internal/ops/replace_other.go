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
