package opstest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/agentls/agentls/internal/ignore"
	"github.com/agentls/agentls/internal/ops"
)

// Mem is an in-memory ops.FS for unit tests. Paths resolve lexically (it has no
// symlinks); one or more folders share one map keyed by absolute slash path.
type Mem struct {
	mu      sync.RWMutex
	folders []*ops.Folder
	files   map[string]*memEntry // absolute slash path → entry
}

type memEntry struct {
	data  []byte
	mode  fs.FileMode
	mtime time.Time
}

// NewMem returns a Mem with one folder at root (an absolute slash path)
// holding files (relative path → content).
func NewMem(root string, files map[string]string) *Mem {
	m := &Mem{files: map[string]*memEntry{}}
	m.folders = []*ops.Folder{{Name: path.Base(root), Root: root, Primary: true}}
	m.files[root] = &memEntry{mode: fs.ModeDir | 0o755}
	for name, content := range files {
		m.put(path.Join(root, name), []byte(content), 0o644)
	}
	return m
}

func (m *Mem) put(abs string, data []byte, perm fs.FileMode) {
	for d := path.Dir(abs); d != "/" && d != "."; d = path.Dir(d) {
		if _, ok := m.files[d]; !ok {
			m.files[d] = &memEntry{mode: fs.ModeDir | 0o755, mtime: time.Now()}
		}
	}
	m.files[abs] = &memEntry{data: data, mode: perm, mtime: time.Now()}
}

// Folders implements ops.FS.
func (m *Mem) Folders() []*ops.Folder {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]*ops.Folder(nil), m.folders...)
}

// SetFolders implements ops.FS. Like Local, it keeps the read-only roots.
func (m *Mem) SetFolders(specs []ops.FolderSpec) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var folders []*ops.Folder
	for _, s := range specs {
		root := path.Clean(s.Path)
		name := s.Name
		if name == "" {
			name = path.Base(root)
		}
		folders = append(folders, &ops.Folder{Name: name, Root: root, Primary: len(folders) == 0})
		m.mkroot(root)
	}
	for _, f := range m.folders {
		if f.ReadOnly {
			folders = append(folders, f)
		}
	}
	m.folders = folders
	return nil
}

func (m *Mem) mkroot(root string) {
	if _, ok := m.files[root]; !ok {
		m.files[root] = &memEntry{mode: fs.ModeDir | 0o755, mtime: time.Now()}
	}
}

// Refresh implements ops.FS. Mem keeps no open directories, so a folder is
// either there or gone.
func (m *Mem) Refresh(f *ops.Folder) ops.FolderState {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e, ok := m.files[f.Root]; ok && e.mode.IsDir() {
		return ops.FolderOpen
	}
	return ops.FolderGone
}

// AddReadOnlyRoot implements ops.FS.
func (m *Mem) AddReadOnlyRoot(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	root := path.Clean(dir)
	m.folders = append(m.folders, &ops.Folder{Name: path.Base(root), Root: root, ReadOnly: true})
	m.mkroot(root)
	return nil
}

// Close implements ops.FS.
func (m *Mem) Close() error { return nil }

// Exec implements ops.FS: the in-memory FS runs no processes.
func (m *Mem) OpenDir(string) (*os.File, error) {
	return nil, errors.New("commands cannot run on the in-memory file system")
}

// Resolve implements ops.FS.
func (m *Mem) Resolve(input string) (ops.Path, error) {
	p, err := m.resolve(input)
	if inner, ok := ops.UnquotePath(input); ok {
		if _, serr := m.Lstat(p); err != nil || serr != nil {
			if q, qerr := m.Resolve(inner); qerr == nil {
				return q, nil
			}
		}
	}
	return p, err
}

func (m *Mem) resolve(input string) (ops.Path, error) {
	p, err := ops.CleanInput(input)
	if err != nil {
		return ops.Path{}, err
	}
	p = strings.ReplaceAll(p, `\`, "/")
	folders := m.Folders()
	if len(folders) == 0 || folders[0].ReadOnly {
		return ops.Path{}, &ops.PathError{Input: input, Reason: "no workspace folder is open"}
	}
	var res ops.Path
	if !path.IsAbs(p) {
		rel, err := ops.LexicalRel(input, p)
		if err != nil {
			return ops.Path{}, err
		}
		res = ops.Path{Folder: folders[0], Rel: rel}
	} else {
		p = path.Clean(p)
		for _, f := range folders {
			if rel, ok := withinSlash(f.Root, p); ok {
				res = ops.Path{Folder: f, Rel: rel}
				break
			}
		}
		if res.Folder == nil {
			return ops.Path{}, &ops.PathError{Input: input, Reason: fmt.Sprintf("it is outside the workspace (%s); use a path inside it", ops.RootsList(folders))}
		}
	}
	if abs := m.abs(res); res.Rel != "." && ops.LenientCandidate(res.Rel) {
		root := strings.TrimSuffix(res.Folder.Root, "/")
		got, err := ops.LenientIn(abs, len(root), "/", m.lstatAbs, m.namesAbs)
		if err != nil {
			return ops.Path{}, &ops.PathError{Input: input, Reason: err.Error()}
		}
		if rel, ok := withinSlash(res.Folder.Root, got); ok {
			res.Rel = rel
		}
	}
	return res, nil
}

// lstatAbs and namesAbs serve lenientIn over Mem's map.
func (m *Mem) lstatAbs(abs string) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if _, ok := m.files[abs]; !ok {
		return fs.ErrNotExist
	}
	return nil
}

func (m *Mem) namesAbs(dir string) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var names []string
	for k := range m.files {
		if path.Dir(k) == dir && k != dir {
			names = append(names, path.Base(k))
		}
	}
	sort.Strings(names)
	return names, nil
}

func withinSlash(root, abs string) (string, bool) {
	if abs == root {
		return ".", true
	}
	if strings.HasPrefix(abs, strings.TrimSuffix(root, "/")+"/") {
		return abs[len(strings.TrimSuffix(root, "/"))+1:], true
	}
	return "", false
}

func (m *Mem) abs(p ops.Path) string { return path.Join(p.Folder.Root, p.Rel) }

// open reports whether p names a folder Mem currently serves, as Local
// refuses Paths of folders it has closed.
func (m *Mem) open(p ops.Path) bool {
	for _, f := range m.folders {
		if f == p.Folder {
			return true
		}
	}
	return false
}

func (m *Mem) get(p ops.Path, op string) (*memEntry, string, error) {
	if !m.open(p) {
		return nil, "", &fs.PathError{Op: op, Path: p.Rel, Err: errors.New("workspace folder is no longer open")}
	}
	a := m.abs(p)
	e, ok := m.files[a]
	if !ok {
		return nil, a, &fs.PathError{Op: op, Path: p.Rel, Err: fs.ErrNotExist}
	}
	return e, a, nil
}

// ReadFile implements ops.FS.
func (m *Mem) ReadFile(p ops.Path) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, _, err := m.get(p, "read")
	if err != nil {
		return nil, err
	}
	if e.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: p.Rel, Err: errors.New("is a directory")}
	}
	return append([]byte(nil), e.data...), nil
}

// OpenRead implements ops.FS. The FileInfo is a snapshot taken with the
// content, as Local's fstat of the open descriptor is.
func (m *Mem) OpenRead(p ops.Path) (io.ReadCloser, fs.FileInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, a, err := m.get(p, "open")
	if err != nil {
		return nil, nil, err
	}
	snap := *e
	if !e.mode.IsRegular() {
		snap.data = nil
		return nil, memInfo{name: path.Base(a), e: &snap}, nil
	}
	snap.data = append([]byte(nil), e.data...)
	return io.NopCloser(bytes.NewReader(snap.data)), memInfo{name: path.Base(a), e: &snap}, nil
}

// Stat implements ops.FS.
func (m *Mem) Stat(p ops.Path) (fs.FileInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, a, err := m.get(p, "stat")
	if err != nil {
		return nil, err
	}
	return memInfo{name: path.Base(a), e: e}, nil
}

// Lstat implements ops.FS.
func (m *Mem) Lstat(p ops.Path) (fs.FileInfo, error) { return m.Stat(p) }

// ReadDir implements ops.FS.
func (m *Mem) ReadDir(p ops.Path) ([]fs.DirEntry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, a, err := m.get(p, "readdir")
	if err != nil {
		return nil, err
	}
	if !e.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p.Rel, Err: errors.New("not a directory")}
	}
	var out []fs.DirEntry
	for k, v := range m.files {
		if path.Dir(k) == a && k != a {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: path.Base(k), e: v}))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// Readlink implements ops.FS.
func (m *Mem) Readlink(p ops.Path) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: p.Rel, Err: errors.New("not a symlink")}
}

// writable checks that p may be written: an open, writable folder and an
// existing parent directory.
func (m *Mem) writable(p ops.Path, op string) error {
	if !m.open(p) {
		return &fs.PathError{Op: op, Path: p.Rel, Err: errors.New("workspace folder is no longer open")}
	}
	if p.Folder.ReadOnly {
		return fmt.Errorf("%s: read-only location", p.OS())
	}
	a := m.abs(p)
	if a == p.Folder.Root {
		return &fs.PathError{Op: op, Path: p.Rel, Err: errors.New("is the workspace folder itself")}
	}
	if e, ok := m.files[path.Dir(a)]; !ok || !e.mode.IsDir() {
		return &fs.PathError{Op: op, Path: p.Rel, Err: fs.ErrNotExist}
	}
	return nil
}

// hasChildren reports whether the directory a has entries.
func (m *Mem) hasChildren(a string) bool {
	for k := range m.files {
		if k != a && path.Dir(k) == a {
			return true
		}
	}
	return false
}

// WriteFile implements ops.FS.
func (m *Mem) WriteFile(p ops.Path, data []byte, perm fs.FileMode, before func() error) error {
	return m.ReplaceFile(p, data, perm, nil, before)
}

// ReplaceFile implements ops.FS: the condition is checked under the lock that
// the write holds.
func (m *Mem) ReplaceFile(p ops.Path, data []byte, perm fs.FileMode, expect []byte, before func() error) error {
	// before may read through m: it runs before the lock is taken.
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writable(p, "write"); err != nil {
		return err
	}
	if e, ok := m.files[m.abs(p)]; expect != nil && (!ok || !bytes.Equal(e.data, expect)) {
		return fmt.Errorf("replace %s: %w", p.Rel, ops.ErrChanged)
	}
	if e, ok := m.files[m.abs(p)]; ok {
		if e.mode.IsDir() {
			return &fs.PathError{Op: "write", Path: p.Rel, Err: errors.New("is a directory")}
		}
		perm = e.mode.Perm()
	}
	m.put(m.abs(p), append([]byte(nil), data...), perm)
	return nil
}

// CreateFile implements ops.FS.
func (m *Mem) CreateFile(p ops.Path, data []byte, perm fs.FileMode, before func() error) error {
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writable(p, "create"); err != nil {
		return err
	}
	if _, ok := m.files[m.abs(p)]; ok {
		return fmt.Errorf("create %s: %w", p.Rel, fs.ErrExist)
	}
	m.put(m.abs(p), append([]byte(nil), data...), perm)
	return nil
}

// MkdirAll implements ops.FS.
func (m *Mem) MkdirAll(p ops.Path, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.open(p) {
		return &fs.PathError{Op: "mkdir", Path: p.Rel, Err: errors.New("workspace folder is no longer open")}
	}
	if p.Folder.ReadOnly {
		return fmt.Errorf("%s: read-only location", p.OS())
	}
	a := m.abs(p)
	var missing []string
	for d := a; d != "/" && d != "."; d = path.Dir(d) {
		e, ok := m.files[d]
		if !ok {
			missing = append(missing, d)
			continue
		}
		if !e.mode.IsDir() {
			// os.MkdirAll: EEXIST for the target itself, ENOTDIR above it.
			if d == a {
				return &fs.PathError{Op: "mkdir", Path: p.Rel, Err: fs.ErrExist}
			}
			return &fs.PathError{Op: "mkdir", Path: p.Rel, Err: errors.New("not a directory")}
		}
		break
	}
	for _, d := range missing {
		m.files[d] = &memEntry{mode: fs.ModeDir | perm, mtime: time.Now()}
	}
	return nil
}

// Rename implements ops.FS.
func (m *Mem) Rename(from, to ops.Path) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if from.Folder != to.Folder {
		return fmt.Errorf("rename %s to %s: different workspace folders", from.Rel, to.Rel)
	}
	if err := m.writable(from, "rename"); err != nil {
		return err
	}
	if err := m.writable(to, "rename"); err != nil {
		return err
	}
	e, a, err := m.get(from, "rename")
	if err != nil {
		return err
	}
	b := m.abs(to)
	if a == b {
		return nil
	}
	if e.mode.IsDir() && strings.HasPrefix(b, a+"/") {
		return &fs.PathError{Op: "rename", Path: from.Rel, Err: errors.New("cannot move a directory into itself")}
	}
	if old, ok := m.files[b]; ok && (old.mode.IsDir() != e.mode.IsDir() || old.mode.IsDir() && m.hasChildren(b)) {
		return &fs.PathError{Op: "rename", Path: to.Rel, Err: fs.ErrExist}
	}
	// A directory moves with everything below it.
	var below []string
	for k := range m.files {
		if strings.HasPrefix(k, a+"/") {
			below = append(below, k)
		}
	}
	for _, k := range below {
		m.files[b+k[len(a):]] = m.files[k]
		delete(m.files, k)
	}
	delete(m.files, a)
	m.files[b] = e
	return nil
}

// Remove implements ops.FS.
func (m *Mem) Remove(p ops.Path) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writable(p, "remove"); err != nil {
		return err
	}
	e, a, err := m.get(p, "remove")
	if err != nil {
		return err
	}
	if e.mode.IsDir() && m.hasChildren(a) {
		return &fs.PathError{Op: "remove", Path: p.Rel, Err: errors.New("directory not empty")}
	}
	delete(m.files, a)
	return nil
}

// FolderFS implements ops.FS with a snapshot of the folder.
func (m *Mem) FolderFS(f *ops.Folder) fs.FS {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := fstest.MapFS{}
	for k, v := range m.files {
		if rel, ok := withinSlash(f.Root, k); ok && rel != "." {
			out[rel] = &fstest.MapFile{Data: v.data, Mode: v.mode, ModTime: v.mtime}
		}
	}
	return out
}

type memInfo struct {
	name string
	e    *memEntry
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return int64(len(i.e.data)) }
func (i memInfo) Mode() fs.FileMode  { return i.e.mode }
func (i memInfo) ModTime() time.Time { return i.e.mtime }
func (i memInfo) IsDir() bool        { return i.e.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

// OuterIgnore implements ops.FS: an in-memory workspace has nothing above it.
func (m *Mem) OuterIgnore(*ops.Folder) ignore.Outer { return ignore.Outer{} }

var _ ops.FS = (*Mem)(nil)
