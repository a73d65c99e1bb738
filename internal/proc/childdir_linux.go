package proc

import (
	"os"
	"strconv"
)

// ChildDir returns what (or "": keep the path) to set as an exec.Cmd's Dir so that the child
// starts in the directory d holds open, not in whatever its path names by
// then (a directory swapped for a symlink between a check and the start).
//
// os/exec has no fchdir, but its child calls chdir(Dir) after fork and
// before it moves descriptors or execs: at that moment the child's
// /proc/self/fd/N is the parent's descriptor N (close-on-exec closes it
// only at exec), and the kernel follows that magic link to the opened
// directory itself, never through a name. Simpler than passing the
// descriptor in ExtraFiles (which is moved only after chdir) or
// re-executing a starter. d must stay open until Start has returned.
func ChildDir(d *os.File) string {
	return "/proc/self/fd/" + strconv.Itoa(int(d.Fd()))
}
