package ops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Local is the FS of the real machine: one os.Root per folder.
type Local struct {
	mu      sync.RWMutex
	folders []*Folder
	given   map[*Folder]string // the root as the client named it (may contain symlinks)
	roots   map[*Folder]*os.Root
	retired []*os.Root // roots Refresh replaced, which calls under way may hold
}

// NewLocal opens the given folders.
func NewLocal(specs []FolderSpec) (*Local, error) {
	l := &Local{}
	if err := l.SetFolders(specs); err != nil {
		return nil, err
	}
	return l, nil
}

func openFolder(spec FolderSpec, readOnly bool) (*Folder, *os.Root, error) {
	abs, err := filepath.Abs(spec.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace folder %q: %w", spec.Path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace folder %q: %w", spec.Path, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace folder %q: %w", spec.Path, err)
	}
	opened, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, nil, fmt.Errorf("workspace folder %q: %w", spec.Path, err)
	}
	name := spec.Name
	if name == "" {
		name = filepath.Base(real)
	}
	return &Folder{Name: name, Root: real, ReadOnly: readOnly, opened: opened}, root, nil
}

// SetFolders implements FS.
func (l *Local) SetFolders(specs []FolderSpec) error {
	var folders []*Folder
	given := map[*Folder]string{}
	roots := map[*Folder]*os.Root{}
	for _, s := range specs {
		f, r, err := openFolder(s, false)
		if err != nil {
			for _, r := range roots {
				r.Close()
			}
			return err
		}
		f.Primary = len(folders) == 0
		folders = append(folders, f)
		given[f] = filepath.Clean(s.Path)
		roots[f] = r
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Keep read-only roots; close the replaced writable ones.
	for f, r := range l.roots {
		if f.ReadOnly {
			folders = append(folders, f)
			given[f] = l.given[f]
			roots[f] = r
			continue
		}
		r.Close()
	}
	l.closeRetired()
	l.folders, l.given, l.roots = folders, given, roots
	return nil
}

// closeRetired closes the roots Refresh replaced; l.mu is held.
func (l *Local) closeRetired() {
	for _, r := range l.retired {
		r.Close()
	}
	l.retired = nil
}

// AddReadOnlyRoot implements FS.
func (l *Local) AddReadOnlyRoot(dir string) error {
	f, r, err := openFolder(FolderSpec{Path: dir}, true)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.roots == nil {
		l.roots, l.given = map[*Folder]*os.Root{}, map[*Folder]string{}
	}
	l.folders = append(l.folders, f)
	l.given[f] = filepath.Clean(dir)
	l.roots[f] = r
	return nil
}

// Folders implements FS.
func (l *Local) Folders() []*Folder {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append([]*Folder(nil), l.folders...)
}

// folderList is Folders without the copy, for reading only: SetFolders
// installs a new slice and AddReadOnlyRoot only appends, so the elements a
// caller holds never change under it.
func (l *Local) folderList() []*Folder {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.folders
}

// ErrFolderMoved refuses a command in a workspace folder whose path no
// longer names the directory agentls opened.
var ErrFolderMoved = errors.New("no longer the directory agentls opened (it was removed, or replaced by a symbolic link); nothing was run there")

// OpenDir implements FS: the directory is opened through its folder's
// os.Root, which refuses a symlink that leads outside it.
func (l *Local) OpenDir(abs string) (*os.File, error) {
	var f *Folder
	rel := ""
	for _, cand := range l.folderList() {
		if r, ok := Within(cand.Root, abs); ok {
			f, rel = cand, r
			break
		}
	}
	if f == nil {
		return nil, fmt.Errorf("working directory %s: outside every workspace folder", abs)
	}
	if l.Refresh(f) == FolderGone {
		return nil, fmt.Errorf("workspace folder %s: %w", f.Root, ErrFolderMoved)
	}
	r, name, err := l.root(Path{Folder: f, Rel: rel})
	if err != nil {
		return nil, err
	}
	d, err := r.Open(name)
	if err != nil {
		return nil, fmt.Errorf("working directory %s: %w", abs, err)
	}
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		d.Close()
		return nil, fmt.Errorf("working directory %s: not a directory", abs)
	}
	return d, nil
}

// Close implements FS: it releases the roots.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.roots {
		r.Close()
	}
	l.closeRetired()
	l.roots, l.folders = nil, nil
	return nil
}

// Refresh implements FS.
func (l *Local) Refresh(f *Folder) FolderState {
	// One stat: read and ls ask on every call.
	now, err := os.Stat(f.Root)
	l.mu.RLock()
	r, opened := l.roots[f], f.opened
	l.mu.RUnlock()
	if r == nil {
		return FolderGone // no longer a workspace folder
	}
	if err == nil && os.SameFile(opened, now) {
		return FolderOpen
	}
	if err != nil || !now.IsDir() {
		return FolderGone
	}
	// Roots are real paths (Resolve relies on it): a symbolic link put at
	// the path is not taken.
	if real, err := filepath.EvalSymlinks(f.Root); err != nil || real != f.Root {
		return FolderGone
	}
	nr, err := os.OpenRoot(f.Root)
	if err != nil {
		return FolderGone
	}
	nowOpened, err := nr.Stat(".")
	if err != nil {
		nr.Close()
		return FolderGone
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.roots[f] {
	case r:
	case nil: // removed from the workspace meanwhile
		nr.Close()
		return FolderGone
	default: // another call reopened it first
		nr.Close()
		return FolderOpen
	}
	l.roots[f], f.opened = nr, nowOpened
	// Calls under way may still hold the old root: it is closed with the
	// others, at SetFolders or Close.
	l.retired = append(l.retired, r)
	return FolderReopened
}

// ReadFile implements FS.
func (l *Local) ReadFile(p Path) ([]byte, error) {
	r, rel, err := l.root(p)
	if err != nil {
		return nil, err
	}
	return r.ReadFile(rel)
}

// OpenRead implements FS: one open through the folder's os.Root (so the
// escape protection holds) and fstat on that descriptor; ReadSized then
// reads the size the fstat reported, so a file that grew in between is read
// as it was at the fstat, which is what the FileInfo (and an edit guard
// stamp built from it) describes.
func (l *Local) OpenRead(p Path) (io.ReadCloser, fs.FileInfo, error) {
	r, rel, err := l.root(p)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.OpenFile(rel, readOpenFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

// ReadSized reads a file whose fstat reported size bytes: one read for a
// file that still has that size. Size 0 may hide content (procfs-like
// files report 0), so that case reads to EOF.
func ReadSized(f io.Reader, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return io.ReadAll(f)
	}
	buf := make([]byte, size)
	n, err := io.ReadFull(f, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil // shrank since the fstat: what is there is the content
	}
	return buf[:n], err
}

// Stat implements FS.
func (l *Local) Stat(p Path) (fs.FileInfo, error) {
	r, rel, err := l.root(p)
	if err != nil {
		return nil, err
	}
	return r.Stat(rel)
}

// Lstat implements FS.
func (l *Local) Lstat(p Path) (fs.FileInfo, error) {
	r, rel, err := l.root(p)
	if err != nil {
		return nil, err
	}
	return r.Lstat(rel)
}

// ReadDir implements FS.
func (l *Local) ReadDir(p Path) ([]fs.DirEntry, error) {
	r, rel, err := l.root(p)
	if err != nil {
		return nil, err
	}
	return fs.ReadDir(r.FS(), filepath.ToSlash(rel))
}

// Readlink implements FS.
func (l *Local) Readlink(p Path) (string, error) {
	r, rel, err := l.root(p)
	if err != nil {
		return "", err
	}
	return r.Readlink(rel)
}

// FolderFS implements FS.
func (l *Local) FolderFS(f *Folder) fs.FS {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if r := l.roots[f]; r != nil {
		return folderFS{r.FS().(rootFS), r}
	}
	return emptyFS{}
}

// folderFS is an os.Root's FS that can also open a subdirectory as a root
// (search.RootOpener): the grep engine then opens each directory once
// instead of walking every path component for every file.
type folderFS struct {
	rootFS
	root *os.Root
}

// rootFS is the method set of os.Root.FS(); embedding it keeps the fast
// ReadDir, ReadFile, Stat and ReadLink the walkers rely on.
type rootFS interface {
	fs.ReadDirFS
	fs.ReadFileFS
	fs.StatFS
	fs.ReadLinkFS
}

// OpenRoot implements search.RootOpener.
func (f folderFS) OpenRoot(name string) (*os.Root, error) { return f.root.OpenRoot(name) }

type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
