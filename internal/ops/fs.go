package ops

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/agentls/agentls/internal/ignore"
)

// ErrChanged is ReplaceFile's refusal: the file did not hold the content
// the caller expected, so it was not replaced.
var ErrChanged = errors.New("the file changed meanwhile")

// FolderState is what Refresh found at a folder's path.
type FolderState int

const (
	// FolderOpen: the folder's directory is the one it opened.
	FolderOpen FolderState = iota
	// FolderReopened: the directory had been deleted or replaced, and f now
	// reads the one at its path.
	FolderReopened
	// FolderGone: no directory is at the folder's path (or only one reached
	// through a symbolic link, which the folder cannot take as its root).
	FolderGone
)

// FS is the operations interface: a workspace and its files, closed
// with the session. Every file operation takes a [Path] produced by
// Resolve, so containment is decided once, in one place.
type FS interface {
	Workspace
	Files
	// Close releases the roots.
	Close() error
}

// Workspace is the folders and the paths in them: what a caller that
// places paths, lists folders or walks one needs.
type Workspace interface {
	// Folders returns the workspace folders, first is the default root for
	// relative paths; read-only extra roots come last.
	Folders() []*Folder
	// SetFolders replaces the workspace folders (writable roots).
	SetFolders(specs []FolderSpec) error
	// AddReadOnlyRoot adds an extra root that may be read but never written
	// (spill files).
	AddReadOnlyRoot(dir string) error
	// Resolve turns a model-written path into a contained Path, or a
	// *PathError saying why not.
	Resolve(input string) (Path, error)

	// FolderFS is a read-only fs.FS rooted at f, for walkers.
	FolderFS(f *Folder) fs.FS
	// Refresh checks that f still reads the directory at f.Root: an open
	// folder keeps reading the directory it opened, so only its path can
	// tell that it was deleted or replaced. When another directory is at
	// f.Root now (deleted and created again, say by a fresh clone), f is
	// opened there and Refresh reports FolderReopened, once; paths of f
	// stay valid and reach the new directory.
	Refresh(f *Folder) FolderState
	// OuterIgnore is the ignore rules git applies to f from above it, when
	// f is a subdirectory of a repository (ignore.Outer).
	OuterIgnore(f *Folder) ignore.Outer
}

// Files are the operations on resolved paths.
type Files interface {
	ReadFile(p Path) ([]byte, error)
	// OpenRead opens p and stats the open descriptor, so the FileInfo
	// describes exactly the file version read from it (a later Stat may see
	// a newer one). When p is not a regular file (a directory, a FIFO, a
	// device) nothing is opened: the ReadCloser is nil and info says what p
	// is. Opening never blocks (a FIFO without a writer is reported, not
	// waited on). The caller closes it; ReadFileInfo reads it whole.
	OpenRead(p Path) (io.ReadCloser, fs.FileInfo, error)
	Stat(p Path) (fs.FileInfo, error)
	Lstat(p Path) (fs.FileInfo, error)
	ReadDir(p Path) ([]fs.DirEntry, error)
	Readlink(p Path) (string, error)
	// WriteFile replaces p atomically (temp file in the same directory,
	// fsync, rename), keeping an existing file's mode. before, when not
	// nil, runs once the new content is durable and just before it takes
	// p's place; its error aborts the write (p untouched) and is returned
	// as is. It is where a caller checks that p is still what it read and
	// that the call may still commit, as late as possible.
	WriteFile(p Path, data []byte, perm fs.FileMode, before func() error) error
	// ReplaceFile is WriteFile on condition that p holds expect (nil: no
	// condition), checked when the new content is durable and, by the
	// file's stat, right before the rename (see Local.ReplaceFile). A p
	// that no longer holds it is left as it is and the error wraps
	// ErrChanged.
	ReplaceFile(p Path, data []byte, perm fs.FileMode, expect []byte, before func() error) error
	// CreateFile creates p exclusively: it fails with fs.ErrExist when p
	// exists. The content appears atomically. before is WriteFile's.
	CreateFile(p Path, data []byte, perm fs.FileMode, before func() error) error
	MkdirAll(p Path, perm fs.FileMode) error
	Rename(from, to Path) error
	Remove(p Path) error
	// OpenDir opens the directory at abs, inside a workspace folder, for
	// a command to start in (proc.Spec.DirFile): a directory swapped for a
	// symlink after the caller's check then changes nothing. A folder whose
	// path no longer names the directory agentls opened (removed, or
	// replaced by a symlink) is refused with ErrFolderMoved.
	OpenDir(abs string) (*os.File, error)
}

// FolderSpec names a workspace folder to open.
type FolderSpec struct {
	Name string
	Path string // absolute OS path
}

// TempPrefix starts every temporary file of an atomic write, so that leftovers
// of a crash can be recognised and removed at the next start.
const TempPrefix = ".agentls-tmp-"
