package ignore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"time"
)

// WalkOptions tunes Walk.
type WalkOptions struct {
	IncludeIgnored bool // visit ignored entries too (.git is still never visited)
	SkipHidden     bool // skip dot-entries (default: hidden entries ARE visited)
	// Unreadable, when set, hears of each directory below the start that
	// is there but could not be read (permission denied, an I/O error);
	// the walk goes on without it, as rg does. One that vanished or was
	// replaced by a file meanwhile is not reported.
	Unreadable func(rel string, err error)
}

// ctxCheckEvery is how many entries Walk visits between context checks
// inside one large directory (it also checks once per directory).
const ctxCheckEvery = 256

// Walk visits rel (a directory, or a single file) and everything below,
// skipping ignored entries and never entering .git; symlinks are reported
// (d.Type()&fs.ModeSymlink) but never followed. fn receives the slash path
// relative to the folder root ("." for the root itself).
//
// Order: byte order of the full paths (a directory's name sorts as if it
// ended in "/"), so a walk that stops early has seen exactly the first
// paths in sorted order. fn is called for rel itself first. If rel is
// ignored (and opts.IncludeIgnored is false), nothing is visited.
//
// Returning fs.SkipDir from fn skips a directory (or, for a file, the rest
// of its directory), fs.SkipAll ends the walk without error, any other error
// ends it with that error. ctx cancellation stops the walk with ctx.Err().
// An unreadable directory below rel is skipped; an unreadable rel is an
// error.
func (m *Matcher) Walk(ctx context.Context, rel string, opts WalkOptions, fn func(rel string, d fs.DirEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	clean, ok := cleanRel(rel)
	if !ok {
		return fmt.Errorf("walk %q: path leaves the workspace folder", rel)
	}
	if hasGitComponent(clean) {
		return nil
	}
	info, err := fs.Lstat(m.fsys, fsPath(clean))
	if err != nil {
		return fmt.Errorf("walk %q: %w", rel, err)
	}
	isDir := info.IsDir()
	var parent *dirState
	if !opts.IncludeIgnored && clean != "" {
		parent = m.dir(parentOf(clean))
		if parent.ignores(clean, isDir) {
			return nil
		}
	}
	err = fn(fsPath(clean), fs.FileInfoToDirEntry(info))
	if !isDir || err != nil {
		if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
			return nil
		}
		return err
	}
	w := walker{m: m, ctx: ctx, opts: opts, fn: fn}
	fd := -1
	if f, err := m.fsys.Open(fsPath(clean)); err == nil {
		fd = dirFD(f) // -1 unless fsys is backed by the OS
		f.Close()
	}
	err = w.dir(clean, fd, parent, true, 0)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// maxOpenDepth bounds how many directory descriptors one walk holds open
// at once (one per level on the descriptor path); deeper directories are
// read by path instead, each resolving every component again.
const maxOpenDepth = 256

// MaxWalkDepth is how many directory levels below its start a walk
// descends: below that, reading by path costs in proportion to the depth
// per directory (quadratic over a chain, 18 s for 3,000 levels), and paths
// outgrow what the system resolves. A directory not descended into is
// passed to WalkOptions.Unreadable with ErrTooDeep, so a search says so.
const MaxWalkDepth = 512

// ErrTooDeep is why a walk did not descend into a directory: it is
// MaxWalkDepth levels below the walk's start.
var ErrTooDeep = fmt.Errorf("more than %d directory levels below where the walk started, which it does not descend", MaxWalkDepth)

type walker struct {
	m     *Matcher
	ctx   context.Context
	opts  WalkOptions
	fn    func(rel string, d fs.DirEntry) error
	count int
	buf   []byte // getdents buffer of the descriptor path, reused
}

// dir walks the entries of directory dir, which is not ignored; parent is
// the state of its parent (nil for the root or when ignore rules are off).
// fd is an open descriptor of dir, which dir closes, or -1 to read dir by
// path through the matcher's fs.FS.
func (w *walker) dir(dir string, fd int, parent *dirState, top bool, depth int) error {
	if fd >= 0 {
		defer closeFD(fd)
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	var entries []entry
	var err error
	if fd >= 0 {
		entries, err = w.readFD(fd)
	} else {
		entries, err = readFS(w.m.fsys, dir)
	}
	if err != nil {
		if top {
			return fmt.Errorf("walk %q: %w", fsPath(dir), err)
		}
		w.unreadable(fsPath(dir), err)
		return nil // vanished or unreadable below the start: skip, as rg does
	}
	var state *dirState
	if !w.opts.IncludeIgnored {
		state = w.m.dirFromListing(dir, parent, entries, fd)
	}
	slices.SortFunc(entries, comparePathOrder)
	for i := range entries {
		e := &entries[i]
		name := e.name
		if name == gitDirName || (w.opts.SkipHidden && name[0] == '.') {
			continue
		}
		if w.count++; w.count%ctxCheckEvery == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		p := join(dir, name)
		isDir := e.isDir()
		if state != nil && state.ignores(p, isDir) {
			continue
		}
		err := w.fn(p, e.dirEntry(w.m.fsys, p))
		if !isDir {
			if errors.Is(err, fs.SkipDir) {
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if depth+1 > MaxWalkDepth {
			w.unreadable(p, ErrTooDeep)
			continue
		}
		child := -1
		if fd >= 0 && depth < maxOpenDepth {
			cfd, err := openDirAt(fd, name)
			switch {
			case err == nil:
				child = cfd
			case !tooManyFiles(err):
				w.unreadable(p, err)
				continue // vanished, replaced or unreadable: skip, as rg does
			}
		}
		if err := w.dir(p, child, state, false, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// unreadable passes on a directory the walk skips because it could not be
// read, unless it is gone (or no longer a directory).
func (w *walker) unreadable(rel string, err error) {
	if w.opts.Unreadable != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		w.opts.Unreadable(rel, err)
	}
}

// entry is one directory entry as the walk sees it: the name and type
// bits from the listing, plus the fs.DirEntry when the listing came from
// fs.ReadDir.
type entry struct {
	name string
	typ  fs.FileMode // type bits only
	de   fs.DirEntry // nil on the descriptor path
	fsys fs.FS       // descriptor path: where Info looks the entry up
	rel  string      // descriptor path: the entry's path for Info
}

func (e *entry) isDir() bool { return e.typ.IsDir() }

// dirEntry is what the walk hands to its callback.
func (e *entry) dirEntry(fsys fs.FS, rel string) fs.DirEntry {
	if e.de != nil {
		return e.de
	}
	e.fsys, e.rel = fsys, rel
	return e
}

// Name, IsDir, Type and Info make *entry an fs.DirEntry; Info is a lazy
// lstat, as os.DirEntry's is.
func (e *entry) Name() string               { return e.name }
func (e *entry) IsDir() bool                { return e.isDir() }
func (e *entry) Type() fs.FileMode          { return e.typ }
func (e *entry) Info() (fs.FileInfo, error) { return fs.Lstat(e.fsys, e.rel) }
func (e *entry) String() string             { return fs.FormatDirEntry(e) }

// readFS lists dir through fsys (the portable path).
func readFS(fsys fs.FS, dir string) ([]entry, error) {
	des, err := fs.ReadDir(fsys, fsPath(dir))
	if err != nil {
		return nil, err
	}
	entries := make([]entry, len(des))
	for i, d := range des {
		entries[i] = entry{name: d.Name(), typ: d.Type(), de: d}
	}
	return entries, nil
}

// dirFromListing returns the cached state of dir when its rule files are
// unchanged, or loads it from the listing. fd is dir's open descriptor or
// -1.
func (m *Matcher) dirFromListing(dir string, parent *dirState, entries []entry, fd int) *dirState {
	s, gen := m.cached(dir)
	if s != nil && !s.ignored && m.fresh(s, entries, fd) {
		return s
	}
	if s != nil {
		m.Invalidate(dir)
		_, gen = m.cached(dir)
	}
	if parent == nil && dir != "" {
		parent = m.dir(parentOf(dir))
	}
	return m.store(dir, m.load(dir, parent, entries, true), gen)
}

// fresh reports whether s still describes its directory's rule files,
// judged by the listing plus one stat of each rule file present (size and
// mtime).
func (m *Matcher) fresh(s *dirState, entries []entry, fd int) bool {
	seen, git := scanRuleFiles(entries)
	gitEntry := git != nil
	if gitEntry != s.gitEntry {
		return false
	}
	for k := range kindExclude {
		own := s.own[k]
		if (seen[k] == nil) != (own == nil) {
			return false
		}
		if own == nil {
			continue
		}
		size, mod, err := statEntry(seen[k], fd)
		if err != nil || size != own.size || !mod.Equal(own.mod) {
			return false
		}
	}
	if s.excludeAt != "" {
		own := s.own[kindExclude]
		info, err := fs.Stat(m.fsys, s.excludeAt)
		if (err == nil) != (own != nil) {
			return false
		}
		if own != nil && (info.Size() != own.size || !info.ModTime().Equal(own.mod)) {
			return false
		}
	}
	return true
}

// statEntry returns the size and mtime of a listed entry: through its
// fs.DirEntry, or with one fstatat on dir's descriptor fd.
func statEntry(e *entry, fd int) (int64, time.Time, error) {
	if e.de != nil {
		info, err := e.de.Info()
		if err != nil {
			return 0, time.Time{}, err
		}
		return info.Size(), info.ModTime(), nil
	}
	return statAt(fd, e.name)
}

// comparePathOrder orders entries by name, a directory's name as if it
// ended in "/", which makes a depth-first walk visit full paths in byte
// order ("a.txt" < "a/b" because '.' < '/').
func comparePathOrder(a, b entry) int {
	an, bn := a.name, b.name
	n := min(len(an), len(bn))
	if c := strings.Compare(an[:n], bn[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nextByte(an, n, a.isDir()), nextByte(bn, n, b.isDir()))
}

// nextByte is the byte at i of name+"/" (dirs) or name, -1 past the end.
func nextByte(name string, i int, isDir bool) int {
	switch {
	case i < len(name):
		return int(name[i])
	case i == len(name) && isDir:
		return '/'
	}
	return -1
}
