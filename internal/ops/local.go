package ops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/agentls/agentls/internal/ignore"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/owner"
	"github.com/agentls/agentls/internal/proc"
)

// Local is the FS of the real machine: one os.Root per folder.
type Local struct {
	mu      sync.RWMutex
	folders []*Folder
	given   map[*Folder]string // the root as the client named it (may contain symlinks)
	roots   map[*Folder]*os.Root
	retired []*os.Root  // roots Refresh replaced, which calls under way may hold
	reaper  proc.Reaper // process groups of commands, killed at Close
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

// Exec implements FS. The command starts in spec.Dir as opened here
// through its folder's os.Root (proc.Spec.DirFile), so a directory swapped
// for a symlink after the caller's check changes nothing; a folder whose
// path no longer names the directory agentls opened (removed, or replaced
// by a symlink) is refused.
func (l *Local) Exec(ctx context.Context, spec proc.Spec) (proc.Result, error) {
	if spec.Reaper == nil {
		spec.Reaper = &l.reaper
	}
	if spec.DirFile == nil {
		d, err := l.openDir(spec.Dir)
		if err != nil {
			return proc.Result{}, err
		}
		defer d.Close()
		spec.DirFile = d
	}
	return proc.Run(ctx, spec)
}

// ErrFolderMoved refuses a command in a workspace folder whose path no
// longer names the directory agentls opened.
var ErrFolderMoved = errors.New("no longer the directory agentls opened (it was removed, or replaced by a symbolic link); nothing was run there")

// openDir opens the directory at abs (inside a workspace folder) through
// the folder's os.Root, which refuses a symlink that leads outside it.
func (l *Local) openDir(abs string) (*os.File, error) {
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

// Close implements FS: it kills process groups commands left behind and
// releases the roots.
func (l *Local) Close() error {
	l.reaper.KillAll()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.roots {
		r.Close()
	}
	l.closeRetired()
	l.roots, l.folders = nil, nil
	return nil
}

// Resolve implements FS. Symlinks are resolved so that the returned Path
// names the real file; a link whose target leaves every root is refused, and
// an absolute link that points back inside is accepted (os.Root alone would
// refuse it).
func (l *Local) Resolve(input string) (Path, error) {
	p, err := l.resolve(input)
	// A leading "@" is a mention marker (@src/a.go) and is dropped, but a
	// name that starts with one (an npm scope, @types) is taken as it is
	// when it exists: the paths tools print must work when sent back.
	if lit := strings.TrimSpace(input); strings.HasPrefix(lit, "@") {
		if q, qerr := l.resolve("./" + lit); qerr == nil {
			if _, serr := l.Lstat(q); serr == nil {
				return q, nil
			}
		}
	}
	if inner, ok := UnquotePath(input); ok && !l.exists(p, err) {
		if q, qerr := l.Resolve(inner); qerr == nil {
			return q, nil
		}
	}
	return p, err
}

// exists reports whether a resolved path names an entry.
func (l *Local) exists(p Path, err error) bool {
	if err != nil {
		return false
	}
	_, serr := l.Lstat(p)
	return serr == nil
}

func (l *Local) resolve(input string) (Path, error) {
	p, err := CleanInput(input)
	if err != nil {
		return Path{}, err
	}
	folders := l.folderList()
	if len(folders) == 0 || folders[0].ReadOnly {
		return Path{}, &PathError{input, "no workspace folder is open"}
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		inside := false
		l.mu.RLock()
		for _, f := range folders {
			if _, ok := Within(f.Root, abs); ok {
				inside = true
				break
			}
			if g := l.given[f]; g != "" {
				if rel, ok := Within(g, abs); ok {
					abs = filepath.Join(f.Root, filepath.FromSlash(rel))
					inside = true
					break
				}
			}
		}
		l.mu.RUnlock()
		if !inside {
			return Path{}, &PathError{input, fmt.Sprintf("it is outside the workspace (%s); use a path inside it", RootsList(folders))}
		}
	} else {
		rel, err := LexicalRel(input, p)
		if err != nil {
			return Path{}, err
		}
		abs = filepath.Join(folders[0].Root, filepath.FromSlash(rel))
	}
	if strings.ContainsRune(abs, utf8.RuneError) {
		abs = unmangleNames(abs)
	}
	if LenientCandidate(abs) {
		for _, f := range folders {
			if _, ok := Within(f.Root, abs); ok {
				var verr error
				if abs, verr = lenientNames(abs, len(f.Root)); verr != nil {
					return Path{}, &PathError{input, verr.Error()}
				}
				break
			}
		}
	}
	real, err := abs, error(nil)
	if !realBelowRoot(folders, abs) {
		real, err = evalExisting(abs)
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links") {
			return Path{}, &PathError{input, "it is a symlink loop"}
		}
		return Path{}, &PathError{input, fmt.Sprintf("cannot resolve it: %v", err)}
	}
	for _, f := range folders {
		if rel, ok := Within(f.Root, real); ok {
			return Path{Folder: f, Rel: rel}, nil
		}
	}
	return Path{}, &PathError{input, fmt.Sprintf("it is a symlink that resolves to %s, outside the workspace", real)}
}

// unmangleNames maps components of abs that hold U+FFFD back to the names
// they stand for. A name that is not UTF-8 reaches the model with U+FFFD in
// place of its bad bytes (JSON strings are UTF-8), and the model sends that
// back; where such a component does not exist, the one entry of its
// directory that shows the same way is taken. Anything else is left as it
// was, for the resolver to report.
func unmangleNames(abs string) string {
	parts := strings.Split(abs, string(filepath.Separator))
	cur := string(filepath.Separator)
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		if strings.ContainsRune(part, utf8.RuneError) {
			if _, err := os.Lstat(next); errors.Is(err, fs.ErrNotExist) {
				if raw, ok := shownAs(cur, part); ok {
					next = filepath.Join(cur, raw)
					parts[i] = raw
				}
			}
		}
		cur = next
	}
	return cur
}

// shownAs finds the one entry of dir whose name, made valid UTF-8, is shown.
func shownAs(dir, shown string) (string, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	found := ""
	for _, e := range entries {
		if n := e.Name(); !utf8.ValidString(n) && (replacedBytes(n) == shown || strings.ToValidUTF8(n, string(utf8.RuneError)) == shown) {
			if found != "" {
				return "", false // ambiguous: refuse to guess
			}
			found = n
		}
	}
	return found, found != ""
}

// replacedBytes is s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json writes it.
func replacedBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// realBelowRoot reports whether abs (clean, absolute) lies in a folder and
// every component below that folder's root exists and is not a symlink: then
// abs is its own real path and the full symlink walk can be skipped. The
// roots themselves are real (SetFolders resolved them), so only the
// components below a root cost an lstat each, not every ancestor of the
// workspace as filepath.EvalSymlinks would. Anything else (a symlink, a
// missing component, an error) returns false and takes the full walk, which
// decides it exactly as before.
func realBelowRoot(folders []*Folder, abs string) bool {
	if !lexicalRealRoot {
		return false
	}
	for _, f := range folders {
		rel, ok := Within(f.Root, abs)
		if !ok {
			continue
		}
		if rel == "." {
			return true
		}
		// Lstat each prefix of abs that ends at a component below the root.
		start := len(abs) - len(rel)
		for i := start; i <= len(abs); i++ {
			if i < len(abs) && abs[i] != filepath.Separator {
				continue
			}
			fi, err := os.Lstat(abs[:i])
			if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
				return false
			}
			if i < len(abs) && !fi.IsDir() {
				return false // "file/x": the full walk names the error
			}
		}
		return true
	}
	return false
}

// maxLinkHops bounds how many dangling symlinks evalExisting follows, as
// the kernel bounds symlink chains (Linux MAXSYMLINKS).
const maxLinkHops = 40

// evalExisting resolves symlinks in the longest existing prefix of abs and
// appends the rest, so paths of files about to be created resolve too. A
// dangling symlink in the path is followed to its target: writing through
// it would create the target, so the target is what must be contained.
func evalExisting(abs string) (string, error) {
	for hops := 0; hops <= maxLinkHops; hops++ {
		real, rest, err := evalPrefix(abs)
		if err != nil || rest == "" {
			return real, err
		}
		first, tail, _ := strings.Cut(rest, string(filepath.Separator))
		link := filepath.Join(real, first)
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return filepath.Join(real, rest), nil // genuinely missing
		}
		target, err := os.Readlink(link)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(real, target)
		}
		abs = filepath.Join(target, tail)
	}
	return "", &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
}

// evalPrefix splits abs into the symlink-resolved longest existing prefix
// and the missing rest.
func evalPrefix(abs string) (real, rest string, err error) {
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return real, rest, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, "", nil
		}
		if rest == "" {
			rest = filepath.Base(cur)
		} else {
			rest = filepath.Join(filepath.Base(cur), rest)
		}
		cur = parent
	}
}

// RootsList names the writable roots of folders, for a refusal that says
// where the workspace is.
func RootsList(folders []*Folder) string {
	var names []string
	for _, f := range folders {
		if !f.ReadOnly {
			names = append(names, f.Root)
		}
	}
	return "workspace: " + strings.Join(names, ", ")
}

func (l *Local) root(p Path) (*os.Root, string, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r := l.roots[p.Folder]
	if r == nil {
		return nil, "", fmt.Errorf("%s: workspace folder is no longer open", p.Rel)
	}
	rel := p.Rel
	if rel == "" {
		rel = "."
	}
	return r, filepath.FromSlash(rel), nil
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

func (l *Local) writable(p Path) (*os.Root, string, error) {
	if p.Folder != nil && p.Folder.ReadOnly {
		return nil, "", fmt.Errorf("%s: read-only location", p.OS())
	}
	return l.root(p)
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

// WriteFile implements FS.
func (l *Local) WriteFile(p Path, data []byte, perm fs.FileMode, before func() error) error {
	return l.ReplaceFile(p, data, perm, nil, before)
}

// ReplaceFile implements FS. The content check reads p through one open
// file and keeps its stat; the last thing before the rename is one more
// stat, which must match: a save that lands after the read moves the inode
// (a rename over p) or the size or mtime (a write in place). What is left
// is the gap between that stat and the rename: on Unix the two are one
// system call apart in the file's open directory (renameIfSame). Between
// agentls processes (an editor's and an MCP host's on one workspace) an
// advisory lock on the file read, held until the rename is done, closes
// it: the second of two racing replaces gets the lock after the first
// renamed, and its stat check then sees the new file. Other writers do not take the lock.
// Exchanging the names in one step (renameat2 RENAME_EXCHANGE) would close
// the gap for them too, but editors' file watchers then see p created and
// deleted, and VS Code marks an open file deleted.
func (l *Local) ReplaceFile(p Path, data []byte, perm fs.FileMode, expect []byte, before func() error) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	if fi, err := r.Stat(rel); err == nil {
		perm = fi.Mode().Perm()
	}
	if expect == nil {
		return atomicWrite(r, rel, data, perm, before)
	}
	changed := fmt.Errorf("replace %s: %w", p.Rel, ErrChanged)
	tmp, err := writeTemp(r, rel, data, perm)
	if err != nil {
		return err
	}
	// Held (and so the lock) until the rename is done.
	f, read, err := openUnchanged(r, rel, p.Rel, expect, changed)
	if f != nil {
		defer f.Close()
	}
	if err == nil && before != nil {
		err = before()
	}
	if err != nil {
		r.Remove(tmp)
		return err
	}
	return renameIfSame(r, tmp, rel, read, changed)
}

// openUnchanged opens rel, takes its lock and checks that it holds
// expect; it returns the open file (to be closed after the rename, which
// releases the lock) and the stat of the version read.
func openUnchanged(r *os.Root, rel, shown string, expect []byte, changed error) (*os.File, fs.FileInfo, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, nil, changed
	}
	if err := lockExclusive(f, ReplaceLockWait); err != nil {
		return f, nil, fmt.Errorf("replace %s: another process holds a lock on it, as an agentls changing it does (%v): %w", shown, err, ErrChanged)
	}
	read, err := f.Stat()
	if err != nil {
		return f, nil, changed
	}
	// A regular file's size is exact: another size is another version,
	// with nothing to read. Size 0 may hide content (procfs-like files).
	if read.Size() != 0 && read.Size() != int64(len(expect)) {
		return f, nil, changed
	}
	if same, err := holds(f, expect); err != nil || !same {
		return f, nil, changed
	}
	return f, read, nil
}

// ReplaceLockWait bounds how long ReplaceFile waits for another agentls
// process replacing the same file (which holds it for the moment of its
// final check and rename).
const ReplaceLockWait = 2 * time.Second

// holdsChunk is the read size of holds: big enough that a file of
// megabytes takes a few dozen reads, small enough to cost nothing to
// allocate per replace.
const holdsChunk = 256 << 10

// holds reports whether r's content (to EOF) is exactly want. It compares
// chunk by chunk as it reads, so checking a file of megabytes allocates
// one chunk, not a copy of the file (grown as it is read).
func holds(r io.Reader, want []byte) (bool, error) {
	// One byte more than want: a file that grew shows it in the last read.
	buf := make([]byte, min(len(want)+1, holdsChunk))
	for {
		n, err := io.ReadFull(r, buf)
		if n > len(want) || !bytes.Equal(buf[:n], want[:n]) {
			return false, nil
		}
		want = want[n:]
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return len(want) == 0, nil
		default:
			return false, err
		}
	}
}

// CreateFile implements FS. The content is written to a temp file first and
// linked into place, so the new name never shows partial content; the link
// fails if the name exists.
func (l *Local) CreateFile(p Path, data []byte, perm fs.FileMode, before func() error) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(r, rel, data, perm)
	if err != nil {
		return err
	}
	defer r.Remove(tmp)
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	if err := r.Link(tmp, rel); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", p.Rel, fs.ErrExist)
		}
		// File systems without hard links: fall back to O_EXCL create.
		f, err2 := r.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if err2 != nil {
			return fmt.Errorf("create %s: %w", p.Rel, err2)
		}
		f.Close()
		return atomicRename(r, tmp, rel)
	}
	return nil
}

func writeTemp(r *os.Root, rel string, data []byte, perm fs.FileMode) (string, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(rel), tempName(filepath.Base(rel), os.Getpid(), hex.EncodeToString(rnd[:])))
	f, err := r.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		r.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		// Chmod beats the umask so an existing 0755 stays 0755.
		f.Close()
		r.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		r.Remove(tmp)
		return "", fmt.Errorf("sync %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		r.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	return tmp, nil
}

func atomicWrite(r *os.Root, rel string, data []byte, perm fs.FileMode, before func() error) error {
	tmp, err := writeTemp(r, rel, data, perm)
	if err != nil {
		return err
	}
	if before != nil {
		if err := before(); err != nil {
			r.Remove(tmp)
			return err
		}
	}
	return atomicRename(r, tmp, rel)
}

func atomicRename(r *os.Root, tmp, rel string) error {
	if err := r.Rename(tmp, rel); err != nil {
		r.Remove(tmp)
		return fmt.Errorf("replace %s: %w", rel, err)
	}
	syncDir(r, filepath.Dir(rel))
	return nil
}

// syncDir makes the rename durable; failures are ignored because some file
// systems do not support syncing directories.
func syncDir(r *os.Root, dir string) {
	if d, err := r.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// MkdirAll implements FS.
func (l *Local) MkdirAll(p Path, perm fs.FileMode) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	return r.MkdirAll(rel, perm)
}

// Rename implements FS.
func (l *Local) Rename(from, to Path) error {
	if from.Folder != to.Folder {
		return fmt.Errorf("rename %s to %s: different workspace folders", from.Rel, to.Rel)
	}
	r, a, err := l.writable(from)
	if err != nil {
		return err
	}
	_, b, err := l.writable(to)
	if err != nil {
		return err
	}
	return r.Rename(a, b)
}

// Remove implements FS.
func (l *Local) Remove(p Path) error {
	r, rel, err := l.writable(p)
	if err != nil {
		return err
	}
	return r.Remove(rel)
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

// cleanYieldEvery is how many entries CleanTemp visits between yields.
const cleanYieldEvery = 64

// tempName is the temp file name of an atomic write of base by process
// pid: TempPrefix, base, the pid, a random suffix.
func tempName(base string, pid int, rnd string) string {
	suffix := "-" + strconv.Itoa(pid) + "-" + rnd
	// A name may be as long as the file system allows (255 bytes): the temp
	// name keeps only as much of it as fits beside the prefix and suffix.
	if room := maxNameBytes - len(TempPrefix) - len(suffix); len(base) > room {
		cut := max(room, 0)
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return TempPrefix + base + suffix
}

// maxNameBytes is the longest file name common file systems take (NAME_MAX).
const maxNameBytes = 255

// ownTemp reports whether name is a temp file of process pid (a write of
// it in progress, when pid is this process).
func ownTemp(name string, pid int) bool {
	owner, ok := tempOwner(name)
	return ok && owner == pid
}

// tempOwner is the id of the process whose write made the temp file name
// (tempName: prefix, base, pid, random suffix).
func tempOwner(name string) (int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return 0, false
	}
	j := strings.LastIndexByte(name[:i], '-')
	if j < 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(name[j+1 : i])
	return pid, err == nil
}

// TempMaxAge is how old a temp file of a running process may be and still
// count as a write in progress; an older one is a leftover whose process
// id has been reused. A write takes seconds, not an hour.
const TempMaxAge = time.Hour

// CleanTemp removes temp files left by a crashed atomic write anywhere
// below f (best effort; .git and node_modules are skipped), and reports how
// many. A temp file whose process still runs is kept unless older than
// TempMaxAge: CleanTemp runs when a session opens, and another agentls (an
// editor's, an agentls call) may be writing in the same folder then; this
// process's own are always kept.
func (l *Local) CleanTemp(f *Folder) int {
	r, _, err := l.root(Path{Folder: f, Rel: "."})
	if err != nil {
		return 0
	}
	n, pid, seen := 0, os.Getpid(), 0
	fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		// A walk of short system calls is never preempted, and with one P
		// (agentls mcp) a background clean-up would hold every call up
		// until it ends: let others run now and then.
		if seen++; seen%cleanYieldEvery == 0 {
			runtime.Gosched()
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		// Each level is opened by path from the root: a deep chain costs
		// the square of its depth (18 s at session open for 3,000 levels).
		if d.IsDir() && strings.Count(p, "/") >= ignore.MaxWalkDepth {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), TempPrefix) && !ownTemp(d.Name(), pid) {
			if pid, ok := tempOwner(d.Name()); ok && owner.Alive(pid) {
				if fi, err := d.Info(); err != nil || time.Since(fi.ModTime()) < TempMaxAge {
					return nil // another process's write in progress
				}
			}
			if r.Remove(filepath.FromSlash(p)) == nil {
				n++
			}
		}
		return nil
	})
	return n
}
